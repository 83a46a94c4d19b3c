package core_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// coreSentinels are every sentinel of package core: none of their texts may lead a message
// before its cause.
var coreSentinels = []error{
	core.ErrInvalid, core.ErrNdim, core.ErrShape, core.ErrStrides, core.ErrOverflow, core.ErrNullData,
	core.ErrDType, core.ErrDevice, core.ErrVersion, core.ErrBounds, core.ErrNil, core.ErrReadOnly,
	core.ErrNotContiguous, core.ErrNotHost, core.ErrReleased, core.ErrNotViewable, core.ErrTypeMismatch,
	core.ErrSubByte, core.ErrImported, core.ErrArgument, core.ErrTooLarge, core.ErrOverlap,
}

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

	cases := []struct {
		name string
		want error
		err  func() error
	}{
		{"ndim too large", core.ErrNdim, func() error { _, err := core.New(core.Float32, make([]int64, 65)...); return err }},
		{"negative dimension", core.ErrShape, func() error { _, err := core.New(core.Float32, 2, -3); return err }},
		{"shape product overflows", core.ErrOverflow, func() error { _, err := core.New(core.Float32, math.MaxInt64/2, 4); return err }},
		{"bytes overflow", core.ErrOverflow, func() error { _, err := core.AllocSize(core.Float64, 1<<61); return err }},
		{"too large for the machine", core.ErrTooLarge, func() error { _, err := core.New(core.Uint8, 1<<42); return err }},
		{"bad dtype code", core.ErrDType, func() error { return core.DLDataType{Code: 99, Bits: 8, Lanes: 1}.Validate() }},
		{"bad dtype bits", core.ErrDType, func() error { return core.DLDataType{Code: core.CodeFloat, Bits: 24, Lanes: 1}.Validate() }},
		{"lanes 0", core.ErrDType, func() error { return core.DLDataType{Code: core.CodeFloat, Bits: 32}.Validate() }},
		{"unknown device", core.ErrDevice, func() error { return wrap(func(d *core.Desc) { d.Device.DeviceType = 5 }) }},
		{"negative device id", core.ErrDevice, func() error { return wrap(func(d *core.Desc) { d.Device.DeviceID = -1 }) }},
		{"strides of another rank", core.ErrStrides, func() error { return wrap(func(d *core.Desc) { d.Strides = []int64{1} }) }},
		{"NULL data", core.ErrNullData, func() error { return wrap(func(d *core.Desc) { d.Data = nil }) }},
		{"stride overflows", core.ErrOverflow, func() error { return wrap(func(d *core.Desc) { d.Strides = []int64{math.MaxInt64 / 2, 1} }) }},
		{"byte_offset wraps", core.ErrBounds, func() error { return wrap(func(d *core.Desc) { d.ByteOffset = math.MaxUint64 - 8 }) }},
		{"nil DLTensor", core.ErrNil, func() error { _, err := core.ValidateDLTensor(nil); return err }},
		{"nil versioned", core.ErrNil, func() error { _, err := core.ImportVersioned(nil, nil); return err }},
		{"nil legacy", core.ErrNil, func() error { _, err := core.ImportLegacy(nil, nil); return err }},
		{"major version 2", core.ErrVersion, func() error {
			m := &core.DLManagedTensorVersioned{Version: core.DLPackVersion{Major: 2}}
			_, err := core.ImportVersioned(m, nil)
			return err
		}},
		{"strides out of a slice", core.ErrBounds, func() error {
			_, err := core.FromSliceStrided([]float32{1, 2}, 0, []int64{3}, nil)
			return err
		}},
		{"strided: rank of strides", core.ErrStrides, func() error {
			_, err := core.FromSliceStrided([]float32{1, 2}, 0, []int64{2}, []int64{1, 1})
			return err
		}},
		{"wrong element type", core.ErrTypeMismatch, func() error { _, err := core.Elements[float64](x); return err }},
		{"device memory", core.ErrNotHost, func() error { _, err := core.Elements[float32](dev); return err }},
		{"device bytes", core.ErrNotHost, func() error { _, err := dev.Bytes(); return err }},
		{"not contiguous", core.ErrNotContiguous, func() error { _, err := core.Elements[float32](tr); return err }},
		{"read-only", core.ErrReadOnly, func() error { _, err := core.Elements[float32](ro); return err }},
		{"released", core.ErrReleased, func() error { _, err := released.View(); return err }},
		{"index count", core.ErrArgument, func() error { _, err := core.At[float32](x, 1); return err }},
		{"index out of range", core.ErrArgument, func() error { _, err := core.At[float32](x, 0, 3); return err }},
		{"permutation length", core.ErrArgument, func() error { _, err := x.Permute(0); return err }},
		{"not a permutation", core.ErrArgument, func() error { _, err := x.Permute(0, 0); return err }},
		{"slice axis", core.ErrArgument, func() error { _, err := x.Slice(2, 0, 1, 1); return err }},
		{"slice step", core.ErrArgument, func() error { _, err := x.Slice(0, 0, 1, 0); return err }},
		{"index axis", core.ErrArgument, func() error { _, err := x.Index(0, 5); return err }},
		{"reshape negative", core.ErrShape, func() error { _, err := x.Reshape(-2, 3); return err }},
		{"reshape count", core.ErrShape, func() error { _, err := x.Reshape(4, 2); return err }},
		{"reshape infer", core.ErrShape, func() error { _, err := x.Reshape(-1, 4); return err }},
		{"reshape without a copy", core.ErrNotViewable, func() error { _, err := tr.Reshape(6); return err }},
		{"broadcast", core.ErrShape, func() error { _, err := x.BroadcastTo(4, 2); return err }},
		{"broadcast rank", core.ErrShape, func() error { _, err := x.BroadcastTo(3); return err }},
		{"self-overlap", core.ErrOverlap, func() error { return wbc.CheckNoSelfOverlap() }},
		{"strides that meet", core.ErrOverlap, func() error {
			w, err := core.Wrap(core.Desc{Data: fakeAddr(0x10000), Device: core.CPUDevice, DType: core.Float32,
				Shape: []int64{3, 3}, Strides: []int64{1, 1}}, nil)
			if err != nil {
				return err
			}
			return w.CheckNoSelfOverlap()
		}},
		{"sub-byte view", core.ErrSubByte, func() error { _, err := packed.Transpose(); return err }},
		{"sub-byte slice", core.ErrSubByte, func() error { _, err := packed.Index(0, 1); return err }},
		{"padded sub-byte", core.ErrSubByte, func() error {
			return wrap(func(d *core.Desc) { d.DType = i4; d.Flags = core.FlagIsSubbyteTypePadded })
		}},
		{"empty lease", core.ErrInvalid, func() error { _, err := core.NewLease(core.Float32, 0); return err }},
		{"parts: block", core.ErrOverflow, func() error { _, _, err := core.NewUninitParts(-1, nil); return err }},
		{"parts: ndim", core.ErrNdim, func() error {
			_, _, err := core.NewUninitParts(8, []core.Part{{DType: core.Float32, Shape: make([]int64, 65)}})
			return err
		}},
		{"parts: shape", core.ErrShape, func() error {
			_, _, err := core.NewUninitParts(8, []core.Part{{DType: core.Float32, Shape: []int64{-1}}})
			return err
		}},
		{"parts: bounds", core.ErrBounds, func() error {
			_, _, err := core.NewUninitParts(8, []core.Part{{Offset: 4, DType: core.Float32, Shape: []int64{2}}})
			return err
		}},
	}
	require.NotNil(t, bc)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, checkMessage(err.Error(), coreSentinels...))
			assert.Regexp(t, `^core: `, err.Error(), "names its package first")
		})
	}
}

// checkMessage is errs.Check, and also refuses a sentinel's generic text that comes before
// the cause further into the message ("cdlpack: import: core: invalid tensor: bad ndim: ...").
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
