package gorgoniax_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gorgoniax"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// sentinels are those of core and adapters, which gorgoniax's errors wrap: none of their texts
// may lead a message before its cause.
var sentinels = []error{
	core.ErrInvalid, core.ErrNdim, core.ErrShape, core.ErrStrides, core.ErrOverflow, core.ErrNullData,
	core.ErrDType, core.ErrDevice, core.ErrVersion, core.ErrBounds, core.ErrNil, core.ErrReadOnly,
	core.ErrNotContiguous, core.ErrNotHost, core.ErrReleased, core.ErrNotViewable, core.ErrTypeMismatch,
	core.ErrSubByte, core.ErrImported, core.ErrArgument, core.ErrTooLarge, core.ErrOverlap,
	adapters.ErrUnsupported, adapters.ErrCopyRequired, adapters.ErrCast,
}

// TestErrorMessages provokes gorgoniax's refusals and holds each message to the module's rule:
// what was wrong first, each package prefix once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	withStrides := func(strides ...int) *tensor.Dense {
		d := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(2, 3), tensor.WithBacking(make([]float64, 6)))
		d.AP = tensor.MakeAP(tensor.Shape{2, 3}, strides, tensor.MakeDataOrder(tensor.NonContiguous), tensor.NotTriangle)
		return d
	}
	released := core.MustFromSlice([]float64{1, 2}, 2)
	released.Release()
	buf := make([]float64, 6)
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float64, Shape: []int64{2, 3}}, nil)
	require.NoError(t, err)
	tr, err := core.MustNew(core.Float64, 2, 3).Reverse(1)
	require.NoError(t, err)
	cases := []struct {
		name string
		want error
		err  func() error
	}{
		{"FromDense nil", core.ErrNil, func() error { _, err := gorgoniax.FromDense(nil); return err }},
		{"FromDense strings", adapters.ErrUnsupported, func() error {
			_, err := gorgoniax.FromDense(tensor.New(tensor.WithShape(2), tensor.WithBacking([]string{"a", "b"})))
			return err
		}},
		{"FromDense masked", adapters.ErrUnsupported, func() error {
			_, err := gorgoniax.FromDense(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2}, []bool{false, true})))
			return err
		}},
		{"FromDense stride count", core.ErrStrides, func() error { _, err := gorgoniax.FromDense(withStrides(1)); return err }},
		{"FromDense negative stride", core.ErrStrides, func() error { _, err := gorgoniax.FromDense(withStrides(3, -1)); return err }},
		{"FromDense overflow", core.ErrOverflow, func() error { _, err := gorgoniax.FromDense(withStrides(1, math.MaxInt/2+1)); return err }},
		{"FromDense bounds", core.ErrBounds, func() error { _, err := gorgoniax.FromDense(withStrides(4, 1)); return err }},
		{"ToDense nil", core.ErrNil, func() error { _, err := gorgoniax.ToDense(nil); return err }},
		{"ToDense released", core.ErrReleased, func() error { _, err := gorgoniax.ToDense(released); return err }},
		{"ToDense float8", adapters.ErrUnsupported, func() error {
			_, err := gorgoniax.ToDense(core.MustNew(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, 2))
			return err
		}},
		{"ToDense zero-copy", adapters.ErrCopyRequired, func() error { _, err := gorgoniax.ToDense(tr, adapters.ZeroCopyOnly()); return err }},
		{"ToDense device", core.ErrNotHost, func() error { _, err := gorgoniax.ToDense(dev); return err }},
		{"FromDType string", adapters.ErrUnsupported, func() error { _, err := gorgoniax.FromDType(tensor.String); return err }},
		{"ToDType float8", adapters.ErrUnsupported, func() error {
			_, err := gorgoniax.ToDType(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, checkMessage(err.Error(), sentinels...))
			assert.Regexp(t, `^gorgoniax: `, err.Error(), "names its package first")
		})
	}
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
