package models

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// TestLoad reads a tensor file as models.py writes one (raw little-endian elements), and refuses
// a dtype it does not know and a file of the wrong length, naming the file.
func TestLoad(t *testing.T) {
	want := core.MustFromSlice([]int16{1, -2, 3, -4, 5, -6}, 2, 3)
	defer want.Release()
	raw, err := want.ReadOnlyBytes()
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "x.bin")
	require.NoError(t, os.WriteFile(file, raw, 0o600))

	got, err := Load(Tensor{Name: "X", DType: "int16", Shape: []int64{2, 3}, File: file})
	require.NoError(t, err)
	defer got.Release()
	assert.Equal(t, core.Int16, got.DType())
	assert.Equal(t, []int64{2, 3}, got.Shape())
	b, err := got.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, raw, b)

	for _, tc := range []struct {
		name, dtype string
		shape       []int64
		msg         string
	}{
		{"unknown dtype", "complex64", []int64{3}, `dtype "complex64" is none of`},
		{"file too short", "int16", []int64{7}, "12 bytes, want 14"},
		{"file too long", "int16", []int64{5}, "longer than the 10 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(Tensor{Name: "X", DType: tc.dtype, Shape: tc.shape, File: file})
			require.Error(t, err)
			assert.Contains(t, err.Error(), file)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
