package numpyx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// Read and ReadFile take the copy policy: reading is a copy, reported, and refused under
// ZeroCopyOnly with a message that points at Map.
func TestReadCopyPolicy(t *testing.T) {
	x := core.MustFromSlice([]int32{1, 2, 3}, 3)
	path := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, numpyx.WriteFile(path, x))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	readers := map[string]func(...adapters.Option) (*core.Tensor, error){
		"Read":     func(o ...adapters.Option) (*core.Tensor, error) { return numpyx.Read(bytes.NewReader(b), o...) },
		"ReadFile": func(o ...adapters.Option) (*core.Tensor, error) { return numpyx.ReadFile(path, o...) },
	}
	for name, read := range readers {
		t.Run(name, func(t *testing.T) {
			copied := false
			got, err := read(adapters.ReportCopy(&copied))
			require.NoError(t, err)
			assert.True(t, copied)
			v, err := core.Elements[int32](got)
			require.NoError(t, err)
			assert.Equal(t, []int32{1, 2, 3}, v)

			copied = false
			_, err = read(adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
			require.ErrorIs(t, err, adapters.ErrCopyRequired)
			assert.Contains(t, err.Error(), "Map shares them")
			assert.False(t, copied, "a failed read leaves ReportCopy's flag alone")
		})
	}
}

// Open and NewReader read the same archive alike, and the .npz options are adapters.Option.
func TestNPZOpenAndNewReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npz")
	var opt adapters.Option = numpyx.Compressed()
	require.NoError(t, numpyx.WriteNPZ(path, map[string]*core.Tensor{"a": core.MustFromSlice([]float64{4, 5}, 2)}, opt))
	z, err := numpyx.Open(path, numpyx.MaxInflated(1<<20))
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, z.Keys())
	require.NoError(t, z.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	z, err = numpyx.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	a, err := z.Read("a")
	require.NoError(t, err)
	v, err := core.Elements[float64](a)
	require.NoError(t, err)
	assert.Equal(t, []float64{4, 5}, v)
	// MaxInflated still caps what is read through the new option type
	z, err = numpyx.NewReader(bytes.NewReader(b), int64(len(b)), numpyx.MaxInflated(8))
	require.NoError(t, err)
	_, err = z.Read("a")
	require.ErrorIs(t, err, numpyx.ErrTooLarge)
}

// Open reads an .npz file member by member; the tensors stay valid after Close.
func ExampleOpen() {
	path := filepath.Join(os.TempDir(), "numpyx-example-open.npz")
	defer os.Remove(path)
	err := numpyx.WriteNPZ(path, map[string]*core.Tensor{
		"w": core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2),
		"b": core.MustFromSlice([]float32{0.5, -0.5}, 2),
	}, numpyx.Compressed())
	if err != nil {
		panic(err)
	}
	z, err := numpyx.Open(path, numpyx.MaxInflated(1<<20))
	if err != nil {
		panic(err)
	}
	w, err := z.Read("w")
	z.Close()
	if err != nil {
		panic(err)
	}
	fmt.Println(z.Keys(), w.Shape())
	// Output:
	// [b w] [2 2]
}

// NewReader reads an .npz archive held anywhere an io.ReaderAt reaches, here in memory.
func ExampleNewReader() {
	var buf bytes.Buffer
	w := numpyx.NewNPZWriter(&buf)
	if err := w.Write("x", core.MustFromSlice([]int64{7, 8, 9}, 3)); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	z, err := numpyx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	h, err := z.Header("x")
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Descr, h.Shape)
	// Output:
	// <i8 [3]
}
