package gonumx_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
)

// TestErrorMessages provokes gonumx's refusals and holds each message to the module's rule:
// what was wrong first, each package prefix once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	released := core.MustFromSlice([]float64{1, 2, 3, 4}, 2, 2)
	released.Release()
	buf := make([]float64, 4)
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float64, Shape: []int64{2, 2}}, nil)
	require.NoError(t, err)
	tr, err := core.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3).Transpose()
	require.NoError(t, err)
	cases := []errstest.Case{
		{Name: "ToDense nil", Want: core.ErrNil, Err: func() error { _, err := gonumx.ToDense(nil); return err }},
		{Name: "ToDense released", Want: core.ErrReleased, Err: func() error { _, err := gonumx.ToDense(released); return err }},
		{Name: "ToDense rank", Want: adapters.ErrUnsupported, Err: func() error { _, err := gonumx.ToDense(core.MustNew(core.Float64, 2, 2, 2)); return err }},
		{Name: "ToVecDense rank", Want: adapters.ErrUnsupported, Err: func() error { _, err := gonumx.ToVecDense(core.MustNew(core.Float64, 2, 2)); return err }},
		{Name: "ToDense complex", Want: adapters.ErrCast, Err: func() error { _, err := gonumx.ToDense(core.MustNew(core.Complex128, 2, 2)); return err }},
		{Name: "ToDense int64", Want: adapters.ErrCast, Err: func() error { _, err := gonumx.ToDense(core.MustNew(core.Int64, 2, 2)); return err }},
		{Name: "ToGeneral32 float64", Want: adapters.ErrCast, Err: func() error { _, err := gonumx.ToGeneral32(core.MustNew(core.Float64, 2, 2)); return err }},
		{Name: "ToDense device", Want: core.ErrNotHost, Err: func() error { _, err := gonumx.ToDense(dev); return err }},
		{Name: "ToDense zero-copy", Want: adapters.ErrCopyRequired, Err: func() error { _, err := gonumx.ToDense(tr, adapters.ZeroCopyOnly()); return err }},
		{Name: "ToCDense rank", Want: adapters.ErrUnsupported, Err: func() error { _, err := gonumx.ToCDense(core.MustNew(core.Complex128, 4)); return err }},
		{Name: "ToMatrix device", Want: core.ErrNotHost, Err: func() error { _, err := gonumx.ToMatrix(dev); return err }},
		{Name: "FromGeneral nil", Want: core.ErrNil, Err: func() error { _, err := gonumx.FromGeneral(nil); return err }},
		{Name: "FromGeneral negative rows", Want: core.ErrShape, Err: func() error {
			_, err := gonumx.FromGeneral(&blas64.General{Rows: -1, Cols: 2, Stride: 2, Data: make([]float64, 4)})
			return err
		}},
		{Name: "FromGeneral short stride", Want: core.ErrStrides, Err: func() error {
			_, err := gonumx.FromGeneral(&blas64.General{Rows: 2, Cols: 3, Stride: 2, Data: make([]float64, 6)})
			return err
		}},
		{Name: "FromGeneral short data", Want: core.ErrBounds, Err: func() error {
			_, err := gonumx.FromGeneral(&blas64.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float64, 5)})
			return err
		}},
		{Name: "FromGeneral overflow", Want: core.ErrOverflow, Err: func() error {
			_, err := gonumx.FromGeneral(&blas64.General{Rows: 1 << 40, Cols: 2, Stride: 1 << 40, Data: make([]float64, 4)})
			return err
		}},
		{Name: "FromVector nil", Want: core.ErrNil, Err: func() error { _, err := gonumx.FromVector(nil); return err }},
		{Name: "FromVector negative length", Want: core.ErrShape, Err: func() error {
			_, err := gonumx.FromVector(&blas64.Vector{N: -1, Inc: 1, Data: make([]float64, 2)})
			return err
		}},
		{Name: "FromVector increment", Want: core.ErrStrides, Err: func() error {
			_, err := gonumx.FromVector(&blas64.Vector{N: 2, Inc: -1, Data: make([]float64, 2)})
			return err
		}},
		{Name: "FromVector overflow", Want: core.ErrOverflow, Err: func() error {
			_, err := gonumx.FromVector(&blas64.Vector{N: 1 << 40, Inc: 1 << 40, Data: make([]float64, 2)})
			return err
		}},
		{Name: "FromVector short data", Want: core.ErrBounds, Err: func() error {
			_, err := gonumx.FromVector(&blas64.Vector{N: 3, Inc: 2, Data: make([]float64, 4)})
			return err
		}},
		{Name: "FromCGeneral nil", Want: core.ErrNil, Err: func() error { _, err := gonumx.FromCGeneral(nil); return err }},
		{Name: "FromCVector nil", Want: core.ErrNil, Err: func() error { _, err := gonumx.FromCVector(nil); return err }},
		{Name: "FromCVector short data", Want: core.ErrBounds, Err: func() error {
			_, err := gonumx.FromCVector(&cblas128.Vector{N: 3, Inc: 1, Data: make([]complex128, 2)})
			return err
		}},
		{Name: "FromGeneral32 nil", Want: core.ErrNil, Err: func() error { _, err := gonumx.FromGeneral32(nil); return err }},
		{Name: "FromVector32 nil", Want: core.ErrNil, Err: func() error { _, err := gonumx.FromVector32(nil); return err }},
		{Name: "FromGeneral32 short stride", Want: core.ErrStrides, Err: func() error {
			_, err := gonumx.FromGeneral32(&blas32.General{Rows: 2, Cols: 3, Stride: 1, Data: make([]float32, 6)})
			return err
		}},
		{Name: "FromMatrix nil", Want: core.ErrNil, Err: func() error { _, err := gonumx.FromMatrix(nil); return err }},
		{Name: "FromMatrix zero-copy", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := gonumx.FromMatrix(mat.NewDiagDense(2, []float64{1, 2}), adapters.ZeroCopyOnly())
			return err
		}},
		{Name: "FromMatrix zero-copy transpose", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := gonumx.FromMatrix(mat.NewDiagDense(2, []float64{1, 2}).T(), adapters.ZeroCopyOnly())
			return err
		}},
	}
	errstest.Run(t, `^gonumx: `, cases)
}
