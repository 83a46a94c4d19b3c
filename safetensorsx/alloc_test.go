package safetensorsx_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadAllocatesOnce: reading a tensor allocates its size once, not twice (the data goes
// straight into the tensor's memory), from a file, a ReaderAt and a stream that knows its size.
func TestReadAllocatesOnce(t *testing.T) {
	const size = 16 << 20
	x := core.MustNew(core.Float32, size/4)
	path := filepath.Join(t.TempDir(), "big.safetensors")
	require.NoError(t, safetensorsx.WriteFile(path, map[string]*core.Tensor{"x": x}, nil))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for name, read := range map[string]func() error{
		"ReadFile": func() error { _, err := safetensorsx.ReadFile(path); return err },
		"Read":     func() error { _, err := safetensorsx.Read(bytes.NewReader(data)); return err },
		"Reader.Tensor": func() error {
			r, err := safetensorsx.NewReader(bytes.NewReader(data), int64(len(data)))
			if err == nil {
				_, err = r.Tensor("x")
			}
			return err
		},
	} {
		var err error
		n := allocated(func() { err = read() })
		require.NoError(t, err, name)
		assert.Less(t, n, uint64(size+1<<20), "%s allocated %d bytes for a %d-byte tensor", name, n, size)
		assert.GreaterOrEqual(t, n, uint64(size), name)
	}
}

// TestLyingHeaderCostsWhatIsPresent: a header that promises far more than the file holds costs
// no more than the bytes present, whatever the reader.
func TestLyingHeaderCostsWhatIsPresent(t *testing.T) {
	h := `{"x":{"dtype":"U8","shape":[68719476736],"data_offsets":[0,68719476736]}}` // 64 GiB
	lie := append(binary.LittleEndian.AppendUint64(nil, uint64(len(h))), h...)
	lie = append(lie, make([]byte, 4<<20)...)
	path := filepath.Join(t.TempDir(), "lie.safetensors")
	require.NoError(t, os.WriteFile(path, lie, 0o644))
	for name, read := range map[string]func() error{
		"Read":           func() error { _, err := safetensorsx.Read(bytes.NewReader(lie)); return err },
		"Read (no size)": func() error { _, err := safetensorsx.Read(onlyReader{bytes.NewReader(lie)}); return err },
		"ReadFile":       func() error { _, err := safetensorsx.ReadFile(path); return err },
		"Open":           func() error { _, err := safetensorsx.Open(path); return err },
	} {
		var err error
		n := allocated(func() { err = read() })
		require.ErrorIs(t, err, safetensorsx.ErrTruncated, name)
		assert.Less(t, n, uint64(3*len(lie)), "%s allocated %d bytes for a %d-byte file", name, n, len(lie))
	}

	// a header length that lies is not believed either
	long := append(binary.LittleEndian.AppendUint64(nil, safetensorsx.MaxHeaderLen), "{}"...)
	n := allocated(func() {
		_, err := safetensorsx.Read(onlyReader{bytes.NewReader(long)})
		require.ErrorIs(t, err, safetensorsx.ErrTruncated)
	})
	assert.Less(t, n, uint64(1<<20))
}
