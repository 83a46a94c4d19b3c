package ggmlref_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/ggufx/internal/ggmlref"
)

// The library answers for itself: Q8_0 is 32 elements in 34 bytes, and a row quantized then
// dequantized by ggml comes back within Q8_0's step.
func TestLibrary(t *testing.T) {
	l := ggmlref.Load(t)
	require.Equal(t, "q8_0", l.TypeName(8))
	require.Equal(t, 32, l.BlockSize(8))
	require.Equal(t, 34, l.TypeSize(8))
	require.Equal(t, "nvfp4", l.TypeName(40))
	require.Equal(t, 64, l.BlockSize(40))
	require.Equal(t, 36, l.TypeSize(40))
	src := make([]float32, 64)
	for i := range src {
		src[i] = float32(i) - 32
	}
	q, err := l.Quantize(8, src, 2, 32, nil)
	require.NoError(t, err)
	require.Len(t, q, 68)
	got := make([]float32, 64)
	require.NoError(t, l.Dequantize(8, q, got))
	for i := range src {
		require.InDelta(t, src[i], got[i], 0.13, "element %d", i)
	}
	require.True(t, l.RequiresImatrix(16), "iq2_xxs needs an importance matrix")
}
