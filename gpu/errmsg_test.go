package gpu

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
)

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
	cases := []errstest.Case{
		{Name: "alloc: ndim", Want: core.ErrNdim, Err: func() error { _, err := Alloc(core.Float32, 0, make([]int64, 65)...); return err }},
		{Name: "alloc: negative dim", Want: core.ErrShape, Err: func() error { _, err := Alloc(core.Float32, 0, 2, -1); return err }},
		{Name: "alloc: shape overflow", Want: core.ErrOverflow, Err: func() error { _, err := Alloc(core.Float32, 0, 1<<62, 4); return err }},
		{Name: "alloc: bytes overflow", Want: core.ErrOverflow, Err: func() error { _, err := Alloc(core.Float64, 0, 1<<61); return err }},
		{Name: "alloc: negative ordinal", Want: ErrNoDevice, Err: func() error { _, err := Alloc(core.Float32, -1, 2); return err }},
		{Name: "alloc: no such device", Want: ErrNoDevice, Err: func() error { _, err := Alloc(core.Float32, 5, 0); return err }},
		{Name: "alloc managed: no such device", Want: ErrNoDevice, Err: func() error { _, err := AllocManaged(core.Float32, -3, 2); return err }},
		{Name: "wrap: ROCm", Want: ErrUnsupportedDevice, Err: wrap(core.Desc{Device: core.DLDevice{DeviceType: core.ROCM}, DType: core.Float32, Shape: []int64{0}})},
		{Name: "wrap: no such device", Want: ErrNoDevice, Err: wrap(core.Desc{Device: Device(2), DType: core.Float32, Shape: []int64{0}})},
		{Name: "wrap: bad dtype", Want: core.ErrDType, Err: wrap(core.Desc{Device: Device(0), DType: core.DLDataType{Code: 99, Bits: 8, Lanes: 1}, Shape: []int64{0}})},
		{Name: "wrap: negative size", Want: core.ErrShape, Err: wrap(core.Desc{Device: Device(0), DType: core.Float32, Shape: []int64{0, -1}})},
		{Name: "wrap: not CUDA memory", Want: ErrUnsupportedDevice, Err: wrap(core.Desc{Data: addr(0xdead0000), Device: Device(0), DType: core.Float32, Shape: []int64{2}})},
		{Name: "copy: shapes", Want: core.ErrShape, Err: func() error { return Copy(core.MustNew(core.Float32, 3, 2), dev) }},
		{Name: "copy: read-only", Want: core.ErrReadOnly, Err: func() error { return Copy(ro, dev) }},
		{Name: "copy: ROCm", Want: ErrUnsupportedDevice, Err: func() error { return Copy(host, rocm) }},
		{Name: "copy: nil", Want: core.ErrNil, Err: func() error { return Copy(nil, host) }},
		{Name: "copy: released", Want: core.ErrReleased, Err: func() error { return Copy(released, dev) }},
		{Name: "copy: no-sync stream", Want: ErrStream, Err: func() error { return CopyOn(host, dev, NoSync) }},
		{Name: "copy: closed stream", Want: ErrStream, Err: func() error { return CopyOn(host, dev, s) }},
		{Name: "copy: cast", Want: adapters.ErrCast, Err: func() error { return Copy(dev, core.MustNew(core.Float64, 2, 3)) }},
		{Name: "to: Vulkan", Want: ErrUnsupportedDevice, Err: func() error { _, err := To(host, core.DLDevice{DeviceType: core.Vulkan}); return err }},
		{Name: "to: no-sync stream", Want: ErrStream, Err: func() error { _, err := ToOn(host, Device(0), NoSync); return err }},
		{Name: "to: nil", Want: core.ErrNil, Err: func() error { _, err := To(nil, Device(0)); return err }},
		{Name: "to host: nil", Want: core.ErrNil, Err: func() error { _, err := ToHost(nil); return err }},
		{Name: "to host: released", Want: core.ErrReleased, Err: func() error { _, err := ToHost(released); return err }},
		{Name: "to host: zero-copy", Want: core.ErrNotHost, Err: func() error { _, err := ToHost(dev, adapters.ZeroCopyOnly()); return err }},
		{Name: "stream 0", Want: ErrStream, Err: func() error { _, err := StreamFromProtocol(0); return err }},
		{Name: "stream -2", Want: ErrStream, Err: func() error { _, err := StreamFromProtocol(-2); return err }},
		{Name: "synchronize closed", Want: ErrStream, Err: func() error { return s.Synchronize() }},
		{Name: "ready: host stream", Want: ErrStream, Err: func() error { return ReadyFor(host, LegacyStream, 5) }},
		{Name: "ready: ROCm", Want: ErrUnsupportedDevice, Err: func() error { return ReadyFor(rocm, LegacyStream, 1) }},
		{Name: "ready: nil", Want: core.ErrNil, Err: func() error { return ReadyFor(nil, LegacyStream, 1) }},
	}
	errstest.Run(t, `^gpu: `, cases, ErrNoDevice, ErrUnsupportedDevice, ErrStream, cuda.ErrCUDA, cuda.ErrArgument)
}
