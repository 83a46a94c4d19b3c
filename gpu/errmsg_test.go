package gpu

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// sentinels are gpu's and cuda's, and those of core and adapters that its errors wrap: none of
// their texts may lead a message before its cause.
var sentinels = []error{
	ErrNoDevice, ErrUnsupportedDevice, ErrStream, cuda.ErrCUDA, cuda.ErrArgument,
	core.ErrInvalid, core.ErrNdim, core.ErrShape, core.ErrStrides, core.ErrOverflow, core.ErrDType, core.ErrDevice,
	core.ErrNil, core.ErrReadOnly, core.ErrNotHost, core.ErrReleased, core.ErrOverlap, core.ErrSubByte,
	adapters.ErrUnsupported, adapters.ErrCopyRequired, adapters.ErrCast,
}

// checkMessage is errs.Check, and also refuses a sentinel's generic text that comes before
// the cause further into the message.
func checkMessage(msg string, sentinels ...error) error {
	if err := errs.Check(msg, sentinels...); err != nil {
		return err
	}
	for _, s := range sentinels {
		if i := strings.Index(msg, s.Error()+": "); i > 0 {
			return fmt.Errorf("%q has the generic %q before its cause", msg, s.Error())
		}
	}
	return nil
}

// TestErrorMessages provokes gpu's refusals (against the fake driver of two devices: no GPU is
// needed) and holds each message to the module's rule: what was wrong first, each package
// prefix once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	installFakeDriver(t, 2)
	buf := make([]float32, 6)
	dev, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Device(0), DType: core.Float32, Shape: []int64{2, 3}}, buf)
	require.NoError(t, err)
	rocm, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.ROCM}, DType: core.Float32, Shape: []int64{2, 3}}, buf)
	require.NoError(t, err)
	host := core.MustNew(core.Float32, 2, 3)
	ro, err := host.AsReadOnly()
	require.NoError(t, err)
	released, err := host.View()
	require.NoError(t, err)
	released.Release()
	s, err := NewStream(0)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	wrap := func(d core.Desc) func() error {
		return func() error { _, _, err := wrapCounting(d); return err }
	}
	cases := []struct {
		name string
		want error
		err  func() error
	}{
		{"alloc: ndim", core.ErrNdim, func() error { _, err := Alloc(core.Float32, 0, make([]int64, 65)...); return err }},
		{"alloc: negative dim", core.ErrShape, func() error { _, err := Alloc(core.Float32, 0, 2, -1); return err }},
		{"alloc: shape overflow", core.ErrOverflow, func() error { _, err := Alloc(core.Float32, 0, 1<<62, 4); return err }},
		{"alloc: bytes overflow", core.ErrOverflow, func() error { _, err := Alloc(core.Float64, 0, 1<<61); return err }},
		{"alloc: negative ordinal", ErrNoDevice, func() error { _, err := Alloc(core.Float32, -1, 2); return err }},
		{"alloc: no such device", ErrNoDevice, func() error { _, err := Alloc(core.Float32, 5, 0); return err }},
		{"alloc managed: no such device", ErrNoDevice, func() error { _, err := AllocManaged(core.Float32, -3, 2); return err }},
		{"wrap: ROCm", ErrUnsupportedDevice, wrap(core.Desc{Device: core.DLDevice{DeviceType: core.ROCM}, DType: core.Float32, Shape: []int64{0}})},
		{"wrap: no such device", ErrNoDevice, wrap(core.Desc{Device: Device(2), DType: core.Float32, Shape: []int64{0}})},
		{"wrap: bad dtype", core.ErrDType, wrap(core.Desc{Device: Device(0), DType: core.DLDataType{Code: 99, Bits: 8, Lanes: 1}, Shape: []int64{0}})},
		{"wrap: negative size", core.ErrShape, wrap(core.Desc{Device: Device(0), DType: core.Float32, Shape: []int64{0, -1}})},
		{"wrap: not CUDA memory", ErrUnsupportedDevice, wrap(core.Desc{Data: addr(0xdead0000), Device: Device(0), DType: core.Float32, Shape: []int64{2}})},
		{"copy: shapes", core.ErrShape, func() error { return Copy(core.MustNew(core.Float32, 3, 2), dev) }},
		{"copy: read-only", core.ErrReadOnly, func() error { return Copy(ro, dev) }},
		{"copy: ROCm", ErrUnsupportedDevice, func() error { return Copy(host, rocm) }},
		{"copy: nil", core.ErrNil, func() error { return Copy(nil, host) }},
		{"copy: released", core.ErrReleased, func() error { return Copy(released, dev) }},
		{"copy: no-sync stream", ErrStream, func() error { return CopyOn(host, dev, NoSync) }},
		{"copy: closed stream", ErrStream, func() error { return CopyOn(host, dev, s) }},
		{"copy: cast", adapters.ErrCast, func() error { return Copy(dev, core.MustNew(core.Float64, 2, 3)) }},
		{"to: Vulkan", ErrUnsupportedDevice, func() error { _, err := To(host, core.DLDevice{DeviceType: core.Vulkan}); return err }},
		{"to: no-sync stream", ErrStream, func() error { _, err := ToOn(host, Device(0), NoSync); return err }},
		{"to: nil", core.ErrNil, func() error { _, err := To(nil, Device(0)); return err }},
		{"to host: nil", core.ErrNil, func() error { _, err := ToHost(nil); return err }},
		{"to host: released", core.ErrReleased, func() error { _, err := ToHost(released); return err }},
		{"to host: zero-copy", core.ErrNotHost, func() error { _, err := ToHost(dev, adapters.ZeroCopyOnly()); return err }},
		{"stream 0", ErrStream, func() error { _, err := StreamFromProtocol(0); return err }},
		{"stream -2", ErrStream, func() error { _, err := StreamFromProtocol(-2); return err }},
		{"synchronize closed", ErrStream, func() error { return s.Synchronize() }},
		{"ready: host stream", ErrStream, func() error { return ReadyFor(host, LegacyStream, 5) }},
		{"ready: ROCm", ErrUnsupportedDevice, func() error { return ReadyFor(rocm, LegacyStream, 1) }},
		{"ready: nil", core.ErrNil, func() error { return ReadyFor(nil, LegacyStream, 1) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, checkMessage(err.Error(), sentinels...))
			assert.Regexp(t, `^gpu: `, err.Error(), "names its package first")
		})
	}
}
