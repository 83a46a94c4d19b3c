package safetensorsx_test

import (
	"bytes"
	"fmt"
	"log"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// NewReader takes the copy policy: a Reader can only copy, so ZeroCopyOnly refuses, and
// ReportCopy is set by each read that succeeds (and left alone by one that fails).
func TestNewReaderCopyPolicy(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, map[string]*core.Tensor{"w": core.MustFromSlice([]float32{1, 2, 3}, 3)}, nil))
	b := buf.Bytes()

	_, err := safetensorsx.NewReader(bytes.NewReader(b), int64(len(b)), adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	assert.Contains(t, err.Error(), "Open or Map share them")

	copied := false
	r, err := safetensorsx.NewReader(bytes.NewReader(b), int64(len(b)), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	_, err = r.Tensor("nope")
	require.ErrorIs(t, err, safetensorsx.ErrNotFound)
	assert.False(t, copied)
	w, err := r.Tensor("w")
	require.NoError(t, err)
	assert.True(t, copied)
	v, err := core.Elements[float32](w)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, v)

	copied = false
	all, err := r.ReadAll()
	require.NoError(t, err)
	assert.True(t, copied)
	assert.Len(t, all, 1)
}

// NewReader reads the header of a safetensors file held anywhere an io.ReaderAt reaches, then
// single tensors by name.
func ExampleNewReader() {
	var buf bytes.Buffer
	err := safetensorsx.Write(&buf, map[string]*core.Tensor{
		"bias":   core.MustFromSlice([]float32{0.5, -0.5}),
		"weight": core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2),
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	var copied bool
	r, err := safetensorsx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), adapters.ReportCopy(&copied))
	if err != nil {
		log.Fatal(err)
	}
	bias, err := r.Tensor("bias")
	if err != nil {
		log.Fatal(err)
	}
	v, _ := core.Elements[float32](bias)
	fmt.Println(r.Names(), v, "copied:", copied)
	// Output:
	// [bias weight] [0.5 -0.5] copied: true
}
