// Package arrowtest holds the test helpers that arrowx and the packages under it (parquetx,
// cdatax, flightx) share: tensors of known elements, and a comparison of two tensors' elements
// whatever their layouts.
package arrowtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// Seq is a C-order tensor of dt whose elements are 0, 1, 2, ..., 99, 0, 1, ... in C order
// (bools alternate false, true), values every Arrow dtype holds exactly.
func Seq(t testing.TB, dt core.DLDataType, shape ...int64) *core.Tensor {
	t.Helper()
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	f := make([]float64, n)
	for i := range f {
		f[i] = float64(i % 100)
		if dt == core.Bool {
			f[i] = float64(i % 2)
		}
	}
	out, err := memory.Cast(core.MustFromSlice(f, shape...), dt)
	require.NoError(t, err)
	return out
}

// RequireSame fails the test unless got has want's dtype and shape (at once) and its elements
// (strides may differ).
func RequireSame(t testing.TB, want, got *core.Tensor, msg string) {
	t.Helper()
	require.Equal(t, want.DType(), got.DType(), msg)
	require.Equal(t, want.Shape(), got.Shape(), msg)
	a, err := memory.Contiguous(want)
	require.NoError(t, err)
	defer a.Release()
	b, err := memory.Contiguous(got)
	require.NoError(t, err)
	defer b.Release()
	ab, err := a.ReadOnlyBytes()
	require.NoError(t, err)
	bb, err := b.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, ab, bb, msg)
}
