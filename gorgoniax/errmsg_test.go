package gorgoniax_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gorgoniax"
)

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
	cases := []errstest.Case{
		{Name: "FromDense nil", Want: core.ErrNil, Err: func() error { _, err := gorgoniax.FromDense(nil); return err }},
		{Name: "FromDense strings", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := gorgoniax.FromDense(tensor.New(tensor.WithShape(2), tensor.WithBacking([]string{"a", "b"})))
			return err
		}},
		{Name: "FromDense masked", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := gorgoniax.FromDense(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2}, []bool{false, true})))
			return err
		}},
		{Name: "FromDense stride count", Want: core.ErrStrides, Err: func() error { _, err := gorgoniax.FromDense(withStrides(1)); return err }},
		{Name: "FromDense negative stride", Want: core.ErrStrides, Err: func() error { _, err := gorgoniax.FromDense(withStrides(3, -1)); return err }},
		{Name: "FromDense overflow", Want: core.ErrOverflow, Err: func() error { _, err := gorgoniax.FromDense(withStrides(1, math.MaxInt/2+1)); return err }},
		{Name: "FromDense bounds", Want: core.ErrBounds, Err: func() error { _, err := gorgoniax.FromDense(withStrides(4, 1)); return err }},
		{Name: "ToDense nil", Want: core.ErrNil, Err: func() error { _, err := gorgoniax.ToDense(nil); return err }},
		{Name: "ToDense released", Want: core.ErrReleased, Err: func() error { _, err := gorgoniax.ToDense(released); return err }},
		{Name: "ToDense float8", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := gorgoniax.ToDense(core.MustNew(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, 2))
			return err
		}},
		{Name: "ToDense zero-copy", Want: adapters.ErrCopyRequired, Err: func() error { _, err := gorgoniax.ToDense(tr, adapters.ZeroCopyOnly()); return err }},
		{Name: "ToDense device", Want: core.ErrNotHost, Err: func() error { _, err := gorgoniax.ToDense(dev); return err }},
		{Name: "FromDType string", Want: adapters.ErrUnsupported, Err: func() error { _, err := gorgoniax.FromDType(tensor.String); return err }},
		{Name: "ToDType float8", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := gorgoniax.ToDType(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1})
			return err
		}},
	}
	errstest.Run(t, `^gorgoniax: `, cases)
}
