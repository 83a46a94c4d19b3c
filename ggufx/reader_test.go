package ggufx_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
)

// A File over an io.ReaderAt reads what Open maps: the same tensors, blocks and dequantized
// values, each in memory of its own (reported as a copy); ZeroCopyOnly is refused up front, and
// a closed File refuses reads.
func TestNewReader(t *testing.T) {
	dir, path := exampleFile()
	defer os.RemoveAll(dir)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	mapped, err := ggufx.Open(path)
	require.NoError(t, err)
	defer mapped.Close()

	_, err = ggufx.NewReader(bytes.NewReader(b), int64(len(b)), adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)

	copied := false
	r, err := ggufx.NewReader(bytes.NewReader(b), int64(len(b)), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.Equal(t, mapped.Names(), r.Names())
	for _, name := range []string{"norm.weight", "ids"} {
		want, err := mapped.Tensor(name)
		require.NoError(t, err)
		got, err := r.Tensor(name)
		require.NoError(t, err)
		assert.Equal(t, want.Shape(), got.Shape())
		assert.True(t, copied, name)
		assert.NotEqual(t, want.Data(), got.Data(), "%s is read into memory of its own", name)
	}
	want, err := mapped.Dequantize("attn.weight", core.Float32)
	require.NoError(t, err)
	got, err := r.Dequantize("attn.weight", core.Float32)
	require.NoError(t, err)
	wv, err := core.Elements[float32](want)
	require.NoError(t, err)
	gv, err := core.Elements[float32](got)
	require.NoError(t, err)
	assert.Equal(t, wv, gv)

	require.NoError(t, r.Close())
	_, err = r.Tensor("ids")
	require.ErrorIs(t, err, ggufx.ErrClosed)

	// data that runs past the end is refused, as Open refuses it
	_, err = ggufx.NewReader(bytes.NewReader(b[:len(b)-40]), int64(len(b)-40))
	require.ErrorIs(t, err, ggufx.ErrFormat)
}

// NewReader reads a GGUF file held anywhere an io.ReaderAt reaches, here in memory.
func ExampleNewReader() {
	var buf bytes.Buffer
	md := &ggufx.Metadata{}
	md.Set("general.architecture", "llama")
	err := ggufx.Write(&buf, md, []ggufx.Entry{ggufx.Plain("norm.weight", core.MustFromSlice([]float32{1, 2, 3}, 3))})
	if err != nil {
		log.Fatal(err)
	}
	f, err := ggufx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	x, err := f.Tensor("norm.weight")
	if err != nil {
		log.Fatal(err)
	}
	arch, _ := f.Metadata().String("general.architecture")
	v, _ := core.Elements[float32](x)
	fmt.Println(arch, v)
	// Output:
	// llama [1 2 3]
}
