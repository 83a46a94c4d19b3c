package gonumx_test

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// sentinels are those of core and adapters, which gonumx's errors wrap: none of their texts
// may lead a message before its cause.
var sentinels = []error{
	core.ErrInvalid, core.ErrNdim, core.ErrShape, core.ErrStrides, core.ErrOverflow, core.ErrNullData,
	core.ErrDType, core.ErrDevice, core.ErrVersion, core.ErrBounds, core.ErrNil, core.ErrReadOnly,
	core.ErrNotContiguous, core.ErrNotHost, core.ErrReleased, core.ErrNotViewable, core.ErrTypeMismatch,
	core.ErrSubByte, core.ErrImported, core.ErrArgument, core.ErrTooLarge, core.ErrOverlap,
	adapters.ErrUnsupported, adapters.ErrCopyRequired, adapters.ErrCast,
}

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
	cases := []struct {
		name string
		want error
		err  func() error
	}{
		{"ToDense nil", core.ErrNil, func() error { _, err := gonumx.ToDense(nil); return err }},
		{"ToDense released", core.ErrReleased, func() error { _, err := gonumx.ToDense(released); return err }},
		{"ToDense rank", adapters.ErrUnsupported, func() error { _, err := gonumx.ToDense(core.MustNew(core.Float64, 2, 2, 2)); return err }},
		{"ToVecDense rank", adapters.ErrUnsupported, func() error { _, err := gonumx.ToVecDense(core.MustNew(core.Float64, 2, 2)); return err }},
		{"ToDense complex", adapters.ErrCast, func() error { _, err := gonumx.ToDense(core.MustNew(core.Complex128, 2, 2)); return err }},
		{"ToDense int64", adapters.ErrCast, func() error { _, err := gonumx.ToDense(core.MustNew(core.Int64, 2, 2)); return err }},
		{"ToGeneral32 float64", adapters.ErrCast, func() error { _, err := gonumx.ToGeneral32(core.MustNew(core.Float64, 2, 2)); return err }},
		{"ToDense device", core.ErrNotHost, func() error { _, err := gonumx.ToDense(dev); return err }},
		{"ToDense zero-copy", adapters.ErrCopyRequired, func() error { _, err := gonumx.ToDense(tr, adapters.ZeroCopyOnly()); return err }},
		{"ToCDense rank", adapters.ErrUnsupported, func() error { _, err := gonumx.ToCDense(core.MustNew(core.Complex128, 4)); return err }},
		{"ToMatrix device", core.ErrNotHost, func() error { _, err := gonumx.ToMatrix(dev); return err }},
		{"FromGeneral nil", core.ErrNil, func() error { _, err := gonumx.FromGeneral(nil); return err }},
		{"FromGeneral negative rows", core.ErrShape, func() error {
			_, err := gonumx.FromGeneral(&blas64.General{Rows: -1, Cols: 2, Stride: 2, Data: make([]float64, 4)})
			return err
		}},
		{"FromGeneral short stride", core.ErrStrides, func() error {
			_, err := gonumx.FromGeneral(&blas64.General{Rows: 2, Cols: 3, Stride: 2, Data: make([]float64, 6)})
			return err
		}},
		{"FromGeneral short data", core.ErrBounds, func() error {
			_, err := gonumx.FromGeneral(&blas64.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float64, 5)})
			return err
		}},
		{"FromGeneral overflow", core.ErrOverflow, func() error {
			_, err := gonumx.FromGeneral(&blas64.General{Rows: 1 << 40, Cols: 2, Stride: 1 << 40, Data: make([]float64, 4)})
			return err
		}},
		{"FromVector nil", core.ErrNil, func() error { _, err := gonumx.FromVector(nil); return err }},
		{"FromVector negative length", core.ErrShape, func() error {
			_, err := gonumx.FromVector(&blas64.Vector{N: -1, Inc: 1, Data: make([]float64, 2)})
			return err
		}},
		{"FromVector increment", core.ErrStrides, func() error {
			_, err := gonumx.FromVector(&blas64.Vector{N: 2, Inc: -1, Data: make([]float64, 2)})
			return err
		}},
		{"FromVector overflow", core.ErrOverflow, func() error {
			_, err := gonumx.FromVector(&blas64.Vector{N: 1 << 40, Inc: 1 << 40, Data: make([]float64, 2)})
			return err
		}},
		{"FromVector short data", core.ErrBounds, func() error {
			_, err := gonumx.FromVector(&blas64.Vector{N: 3, Inc: 2, Data: make([]float64, 4)})
			return err
		}},
		{"FromCGeneral nil", core.ErrNil, func() error { _, err := gonumx.FromCGeneral(nil); return err }},
		{"FromCVector nil", core.ErrNil, func() error { _, err := gonumx.FromCVector(nil); return err }},
		{"FromCVector short data", core.ErrBounds, func() error {
			_, err := gonumx.FromCVector(&cblas128.Vector{N: 3, Inc: 1, Data: make([]complex128, 2)})
			return err
		}},
		{"FromGeneral32 nil", core.ErrNil, func() error { _, err := gonumx.FromGeneral32(nil); return err }},
		{"FromVector32 nil", core.ErrNil, func() error { _, err := gonumx.FromVector32(nil); return err }},
		{"FromGeneral32 short stride", core.ErrStrides, func() error {
			_, err := gonumx.FromGeneral32(&blas32.General{Rows: 2, Cols: 3, Stride: 1, Data: make([]float32, 6)})
			return err
		}},
		{"FromMatrix nil", core.ErrNil, func() error { _, err := gonumx.FromMatrix(nil); return err }},
		{"FromMatrix zero-copy", adapters.ErrCopyRequired, func() error {
			_, err := gonumx.FromMatrix(mat.NewDiagDense(2, []float64{1, 2}), adapters.ZeroCopyOnly())
			return err
		}},
		{"FromMatrix zero-copy transpose", adapters.ErrCopyRequired, func() error {
			_, err := gonumx.FromMatrix(mat.NewDiagDense(2, []float64{1, 2}).T(), adapters.ZeroCopyOnly())
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, checkMessage(err.Error(), sentinels...))
			assert.Regexp(t, `^gonumx: `, err.Error(), "names its package first")
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
