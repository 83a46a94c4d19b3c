package safetensorsx_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// fromBytes makes a Go-memory tensor of dt and shape holding raw (C order).
func fromBytes(t testing.TB, dt core.DLDataType, shape []int64, raw []byte) *core.Tensor {
	t.Helper()
	x, err := core.New(dt, shape...)
	require.NoError(t, err)
	b, err := x.Bytes()
	require.NoError(t, err)
	require.Equal(t, len(b), len(raw), "%s %v", dt, shape)
	copy(b, raw)
	return x
}

// cBytes returns x's elements in C order, whatever its layout.
func cBytes(t testing.TB, x *core.Tensor) []byte {
	t.Helper()
	if x.IsContiguous() { // sub-byte tensors always are; adapters copies whole elements only
		b, err := x.ReadOnlyBytes()
		require.NoError(t, err)
		return bytes.Clone(b)
	}
	c, err := memory.Contiguous(x)
	require.NoError(t, err)
	b, err := c.ReadOnlyBytes()
	require.NoError(t, err)
	return bytes.Clone(b)
}

// allDTypes is every core dtype the format holds.
func allDTypes(t testing.TB) []core.DLDataType {
	var out []core.DLDataType
	for _, s := range safetensorsx.DTypes() {
		dt, err := safetensorsx.FromDType(s)
		require.NoError(t, err)
		out = append(out, dt)
	}
	return out
}
