package adapters_test

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// sentinels are those of core and adapters: none of their texts may lead a message before its
// cause.
var sentinels = []error{
	core.ErrInvalid, core.ErrNdim, core.ErrShape, core.ErrStrides, core.ErrOverflow, core.ErrNullData,
	core.ErrDType, core.ErrDevice, core.ErrVersion, core.ErrBounds, core.ErrNil, core.ErrReadOnly,
	core.ErrNotContiguous, core.ErrNotHost, core.ErrReleased, core.ErrNotViewable, core.ErrTypeMismatch,
	core.ErrSubByte, core.ErrImported, core.ErrArgument, core.ErrTooLarge, core.ErrOverlap,
	adapters.ErrUnsupported, adapters.ErrCopyRequired, adapters.ErrCast,
}

// TestErrorMessages provokes the refusals of package adapters and holds each message to the
// module's rule: what was wrong first, each package prefix once, errors.Is still matching.
func TestErrorMessages(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	released := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	released.Release()
	ro, err := x.AsReadOnly()
	require.NoError(t, err)
	buf := make([]float32, 6)
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2, 3}}, nil)
	require.NoError(t, err)
	i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	fp8 := core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}
	bc, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{2, 3}, Strides: []int64{0, 1}}, nil)
	require.NoError(t, err)
	cases := []struct {
		name string
		want error
		err  func() error
	}{
		{"released source", core.ErrReleased, func() error { return adapters.Copy(core.MustNew(core.Float32, 2, 3), released) }},
		{"released destination", core.ErrReleased, func() error { return adapters.Copy(released, x) }},
		{"device source", core.ErrNotHost, func() error { return adapters.Copy(core.MustNew(core.Float32, 2, 3), dev) }},
		{"device destination", core.ErrNotHost, func() error { return adapters.Copy(dev, x) }},
		{"read-only destination", core.ErrReadOnly, func() error { return adapters.Copy(ro, x) }},
		{"shapes differ", core.ErrShape, func() error { return adapters.Copy(core.MustNew(core.Float32, 3, 2), x) }},
		{"sub-byte source", adapters.ErrUnsupported, func() error { return adapters.Copy(core.MustNew(core.Int8, 4), core.MustNew(i4, 4)) }},
		{"sub-byte cast", adapters.ErrUnsupported, func() error { _, err := adapters.Cast(x, i4); return err }},
		{"no cast to fp8", adapters.ErrUnsupported, func() error { _, err := adapters.Cast(x, fp8); return err }},
		{"no cast from fp8", adapters.ErrUnsupported, func() error { _, err := adapters.Cast(core.MustNew(fp8, 2), core.Float32); return err }},
		{"cast to an unknown dtype", core.ErrDType, func() error {
			_, err := adapters.Cast(x, core.DLDataType{Code: 99, Bits: 8, Lanes: 1})
			return err
		}},
		{"clone released", core.ErrReleased, func() error { _, err := adapters.Contiguous(released); return err }},
		{"clone device", core.ErrNotHost, func() error { _, err := adapters.Clone(dev, adapters.FortranOrder); return err }},
		{"overlapping destination", core.ErrOverlap, func() error { return adapters.Copy(bc, x) }},
		{"At: index count", core.ErrArgument, func() error { _, err := adapters.At(x, 1); return err }},
		{"At: index range", core.ErrArgument, func() error { _, err := adapters.At(x, 2, 0); return err }},
		{"SetAt: index count", core.ErrArgument, func() error { return adapters.SetAt(x, 1, 0, 0, 0) }},
		{"SetAt: read-only", core.ErrReadOnly, func() error { return adapters.SetAt(ro, 1, 0, 0) }},
		{"At: released", core.ErrReleased, func() error { _, err := adapters.At(released, 0, 0); return err }},
		{"ZeroCopyOnly", adapters.ErrCopyRequired, func() error {
			_, err := adapters.Apply(adapters.ZeroCopyOnly()).Choose(false, "adapters: strides [1 2] are not C order")
			return err
		}},
		{"cast rule", adapters.ErrCast, func() error { return adapters.Apply().CheckCast(core.Float64, core.Float32, "") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, checkMessage(err.Error(), sentinels...))
			if tc.want != adapters.ErrCast { // a CastError leaves the prefix to the adapter that wraps it
				assert.Regexp(t, `^(adapters|core): `, err.Error(), "names its package first")
			}
		})
	}
}

// checkMessage is errs.Check, and also refuses a sentinel's generic text that comes before
// the cause further into the message ("adapters: copy source: core: tensor memory is not
// host-accessible: cuda:0").
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
