package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
)

// TestErrorMessages provokes the refusals of package core and holds each message to the
// module's rule (errs.Check): it leads with what was wrong, names one package prefix once, and
// still matches its sentinel with errors.Is.
func TestErrorMessages(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	tr, err := x.Transpose()
	require.NoError(t, err)
	ro, err := x.AsReadOnly()
	require.NoError(t, err)
	bc, err := core.MustFromSlice([]float32{1, 2, 3}, 1, 3).BroadcastTo(4, 3)
	require.NoError(t, err)
	wbc, err := core.Wrap(core.Desc{Data: fakeAddr(0x10000), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{4, 3}, Strides: []int64{0, 1}}, nil)
	require.NoError(t, err)
	dev, err := core.Wrap(core.Desc{Data: fakeAddr(0x10000), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2}}, nil)
	require.NoError(t, err)
	released := core.MustFromSlice([]float32{1})
	released.Release()
	okDesc := func(mod func(d *core.Desc)) core.Desc {
		d := core.Desc{Data: fakeAddr(0x10000), Device: core.CPUDevice, DType: core.Float32, Shape: []int64{2, 3}}
		mod(&d)
		return d
	}
	wrap := func(mod func(d *core.Desc)) error { _, err := core.Wrap(okDesc(mod), nil); return err }
	i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	packed, err := core.Wrap(core.Desc{Data: fakeAddr(0x10000), Device: core.CPUDevice, DType: i4, Shape: []int64{4, 2}}, nil)
	require.NoError(t, err)

	cases := []errstest.Case{
		{Name: "ndim too large", Want: core.ErrNdim, Err: func() error { _, err := core.New(core.Float32, make([]int64, 65)...); return err }},
		{Name: "negative dimension", Want: core.ErrShape, Err: func() error { _, err := core.New(core.Float32, 2, -3); return err }},
		{Name: "shape product overflows", Want: core.ErrOverflow, Err: func() error { _, err := core.New(core.Float32, math.MaxInt64/2, 4); return err }},
		{Name: "too large for the machine", Want: core.ErrTooLarge, Err: func() error { _, err := core.New(core.Uint8, 1<<42); return err }},
		{Name: "bad dtype code", Want: core.ErrDType, Err: func() error { return core.DLDataType{Code: 99, Bits: 8, Lanes: 1}.Validate() }},
		{Name: "bad dtype bits", Want: core.ErrDType, Err: func() error { return core.DLDataType{Code: core.CodeFloat, Bits: 24, Lanes: 1}.Validate() }},
		{Name: "lanes 0", Want: core.ErrDType, Err: func() error { return core.DLDataType{Code: core.CodeFloat, Bits: 32}.Validate() }},
		{Name: "unknown device", Want: core.ErrDevice, Err: func() error { return wrap(func(d *core.Desc) { d.Device.DeviceType = 5 }) }},
		{Name: "negative device id", Want: core.ErrDevice, Err: func() error { return wrap(func(d *core.Desc) { d.Device.DeviceID = -1 }) }},
		{Name: "strides of another rank", Want: core.ErrStrides, Err: func() error { return wrap(func(d *core.Desc) { d.Strides = []int64{1} }) }},
		{Name: "NULL data", Want: core.ErrNullData, Err: func() error { return wrap(func(d *core.Desc) { d.Data = nil }) }},
		{Name: "stride overflows", Want: core.ErrOverflow, Err: func() error { return wrap(func(d *core.Desc) { d.Strides = []int64{math.MaxInt64 / 2, 1} }) }},
		{Name: "byte_offset wraps", Want: core.ErrBounds, Err: func() error { return wrap(func(d *core.Desc) { d.ByteOffset = math.MaxUint64 - 8 }) }},
		{Name: "nil DLTensor", Want: core.ErrNil, Err: func() error { _, err := core.ValidateDLTensor(nil); return err }},
		{Name: "nil versioned", Want: core.ErrNil, Err: func() error { _, err := core.ImportVersioned(nil, nil); return err }},
		{Name: "nil legacy", Want: core.ErrNil, Err: func() error { _, err := core.ImportLegacy(nil, nil); return err }},
		{Name: "major version 2", Want: core.ErrVersion, Err: func() error {
			m := &core.DLManagedTensorVersioned{Version: core.DLPackVersion{Major: 2}}
			_, err := core.ImportVersioned(m, nil)
			return err
		}},
		{Name: "strides out of a slice", Want: core.ErrBounds, Err: func() error {
			_, err := core.FromSliceStrided([]float32{1, 2}, 0, []int64{3}, nil)
			return err
		}},
		{Name: "strided: rank of strides", Want: core.ErrStrides, Err: func() error {
			_, err := core.FromSliceStrided([]float32{1, 2}, 0, []int64{2}, []int64{1, 1})
			return err
		}},
		{Name: "wrong element type", Want: core.ErrTypeMismatch, Err: func() error { _, err := core.Elements[float64](x); return err }},
		{Name: "device memory", Want: core.ErrNotHost, Err: func() error { _, err := core.Elements[float32](dev); return err }},
		{Name: "device bytes", Want: core.ErrNotHost, Err: func() error { _, err := dev.Bytes(); return err }},
		{Name: "not contiguous", Want: core.ErrNotContiguous, Err: func() error { _, err := core.Elements[float32](tr); return err }},
		{Name: "read-only", Want: core.ErrReadOnly, Err: func() error { _, err := core.Elements[float32](ro); return err }},
		{Name: "released", Want: core.ErrReleased, Err: func() error { _, err := released.View(); return err }},
		{Name: "index count", Want: core.ErrArgument, Err: func() error { _, err := core.At[float32](x, 1); return err }},
		{Name: "index out of range", Want: core.ErrArgument, Err: func() error { _, err := core.At[float32](x, 0, 3); return err }},
		{Name: "permutation length", Want: core.ErrArgument, Err: func() error { _, err := x.Permute(0); return err }},
		{Name: "not a permutation", Want: core.ErrArgument, Err: func() error { _, err := x.Permute(0, 0); return err }},
		{Name: "slice axis", Want: core.ErrArgument, Err: func() error { _, err := x.Slice(2, 0, 1, 1); return err }},
		{Name: "slice step", Want: core.ErrArgument, Err: func() error { _, err := x.Slice(0, 0, 1, 0); return err }},
		{Name: "index axis", Want: core.ErrArgument, Err: func() error { _, err := x.Index(0, 5); return err }},
		{Name: "reshape negative", Want: core.ErrShape, Err: func() error { _, err := x.Reshape(-2, 3); return err }},
		{Name: "reshape count", Want: core.ErrShape, Err: func() error { _, err := x.Reshape(4, 2); return err }},
		{Name: "reshape infer", Want: core.ErrShape, Err: func() error { _, err := x.Reshape(-1, 4); return err }},
		{Name: "reshape without a copy", Want: core.ErrNotViewable, Err: func() error { _, err := tr.Reshape(6); return err }},
		{Name: "broadcast", Want: core.ErrShape, Err: func() error { _, err := x.BroadcastTo(4, 2); return err }},
		{Name: "broadcast rank", Want: core.ErrShape, Err: func() error { _, err := x.BroadcastTo(3); return err }},
		{Name: "self-overlap", Want: core.ErrOverlap, Err: func() error { return wbc.CheckNoSelfOverlap() }},
		{Name: "strides that meet", Want: core.ErrOverlap, Err: func() error {
			w, err := core.Wrap(core.Desc{Data: fakeAddr(0x10000), Device: core.CPUDevice, DType: core.Float32,
				Shape: []int64{3, 3}, Strides: []int64{1, 1}}, nil)
			if err != nil {
				return err
			}
			return w.CheckNoSelfOverlap()
		}},
		{Name: "sub-byte view", Want: core.ErrSubByte, Err: func() error { _, err := packed.Transpose(); return err }},
		{Name: "sub-byte slice", Want: core.ErrSubByte, Err: func() error { _, err := packed.Index(0, 1); return err }},
		{Name: "padded sub-byte", Want: core.ErrSubByte, Err: func() error {
			return wrap(func(d *core.Desc) { d.DType = i4; d.Flags = core.FlagIsSubbyteTypePadded })
		}},
	}
	require.NotNil(t, bc)
	errstest.Run(t, `^core: `, cases)
}
