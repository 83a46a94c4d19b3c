package safetensorsx_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
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
// straight into the tensor's memory), from a file, a ReaderAt and a stream that knows its size:
// in Go memory when core maps nothing, and in mapped memory (outside Go's heap, so next to no
// Go allocation at all) under core's default allocation, which maps blocks from 4 MiB.
func TestReadAllocatesOnce(t *testing.T) {
	const size = 16 << 20
	x := core.MustNew(core.Float32, size/4)
	path := filepath.Join(t.TempDir(), "big.safetensors")
	require.NoError(t, safetensorsx.WriteFile(path, map[string]*core.Tensor{"x": x}, nil))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, mapped := range []bool{false, true} {
		a := memory.DefaultAllocation()
		if !mapped {
			a = memory.Allocation{}
		}
		prev := memory.SetAllocation(a)
		for name, read := range map[string]func() (*core.Tensor, error){
			"ReadFile": func() (*core.Tensor, error) {
				ts, err := safetensorsx.ReadFile(path)
				return ts["x"], err
			},
			"Read": func() (*core.Tensor, error) {
				ts, err := safetensorsx.Read(bytes.NewReader(data))
				return ts["x"], err
			},
			"Reader.Tensor": func() (*core.Tensor, error) {
				r, err := safetensorsx.NewReader(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					return nil, err
				}
				return r.Tensor("x")
			},
		} {
			var err error
			var got *core.Tensor
			n := allocated(func() { got, err = read() })
			require.NoError(t, err, name)
			assert.Less(t, n, uint64(size+1<<20), "%s allocated %d bytes for a %d-byte tensor", name, n, size)
			if mapped && runtime.GOOS == "linux" {
				assert.True(t, got.Foreign(), "%s: mapped memory", name)
				assert.Less(t, n, uint64(1<<20), "%s: mapped, yet allocated %d bytes of Go memory", name, n)
			} else {
				assert.False(t, got.Foreign(), "%s: Go memory", name)
				assert.GreaterOrEqual(t, n, uint64(size), name)
			}
			assert.Equal(t, cBytes(t, x), cBytes(t, got), name)
			got.Release()
		}
		memory.SetAllocation(prev)
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

// failingAt is an io.ReaderAt over b that fails every read reaching past byte at.
type failingAt struct {
	b  []byte
	at int64
}

var errDisk = errors.New("disk gone")

func (f failingAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.at {
		return 0, errDisk
	}
	return copy(p, f.b[off:]), nil
}

// bigFile returns a file of a few mapped slabs: three float32 tensors of 4 MiB (a slab each),
// 300 small ones (a slab they share, in Go memory) and one of 6 MiB.
func bigFile(t *testing.T) (map[string]*core.Tensor, []byte) {
	ts := map[string]*core.Tensor{}
	for i := range 3 {
		ts[fmt.Sprintf("big%d", i)] = core.MustNew(core.Float32, 1<<20)
	}
	for i := range 300 {
		ts[fmt.Sprintf("small%03d", i)] = core.MustNew(core.Float32, int64(1+i))
	}
	ts["last"] = core.MustNew(core.Uint8, 6<<20)
	k := 0
	for _, x := range ts {
		b, err := x.Bytes()
		require.NoError(t, err)
		for i := range b {
			b[i] = byte(k + i*7)
		}
		k++
	}
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, ts, nil))
	return ts, buf.Bytes()
}

// TestReadReleasesOnError: a read that fails after memory was allocated (a disk error in the
// middle of the data, a stream that ends early) releases every slab it took, at once and
// exactly once: core.LiveForeign is back to its baseline before any collection.
func TestReadReleasesOnError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only")
	}
	prev := memory.SetAllocation(memory.DefaultAllocation())
	defer memory.SetAllocation(prev)
	want, data := bigFile(t)
	base := leakcheck.Settle()

	// the whole file reads, in mapped slabs
	r, err := safetensorsx.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	got, err := r.ReadAll()
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for name, x := range want {
		require.Equal(t, cBytes(t, x), cBytes(t, got[name]), name)
	}
	assert.True(t, got["big0"].Foreign(), "a 4 MiB slab is mapped")
	assert.Equal(t, base+4, core.LiveForeign(), "three 4 MiB slabs and one of 6 MiB")
	for _, x := range got {
		x.Release()
	}
	assert.Equal(t, base, core.LiveForeign(), "released tensors give their slabs back at once")

	for _, cut := range []int64{int64(len(data)) - 1, int64(len(data)) - 7<<20, int64(len(data)) / 2} {
		r, err := safetensorsx.NewReader(failingAt{data, cut}, int64(len(data)))
		require.NoError(t, err)
		_, err = r.ReadAll()
		require.ErrorIs(t, err, errDisk)
		assert.Equal(t, base, core.LiveForeign(), "disk error at byte %d", cut)

		_, err = safetensorsx.Read(onlyReader{bytes.NewReader(data[:cut])})
		require.ErrorIs(t, err, safetensorsx.ErrTruncated)
		assert.Equal(t, base, core.LiveForeign(), "stream cut at byte %d", cut)

		_, err = r.Tensor("last")
		require.ErrorIs(t, err, errDisk)
		assert.Equal(t, base, core.LiveForeign(), "Reader.Tensor, disk error at byte %d", cut)
	}

	// a name given twice is found by ReadFile and Read after both slabs were read: both go back
	const n = 4 << 20
	h := fmt.Sprintf(`{"a":{"dtype":"U8","shape":[%d],"data_offsets":[0,%d]},"a":{"dtype":"U8","shape":[%d],"data_offsets":[%d,%d]}}`, n, n, n, n, 2*n)
	twice := file(h, make([]byte, 2*n))
	path := filepath.Join(t.TempDir(), "twice.safetensors")
	require.NoError(t, os.WriteFile(path, twice, 0o644))
	_, err = safetensorsx.ReadFile(path)
	require.ErrorIs(t, err, safetensorsx.ErrHeader)
	assert.Equal(t, base, core.LiveForeign(), "ReadFile of a name given twice")
	_, err = safetensorsx.Read(bytes.NewReader(twice))
	require.ErrorIs(t, err, safetensorsx.ErrHeader)
	assert.Equal(t, base, core.LiveForeign(), "Read of a name given twice")
}

// TestReadUnreleasedAreCollected: tensors read and dropped without Release give their mapped
// slabs back through the collector: reading a 22 MiB file 100 times over (2.2 GB) keeps
// nothing alive in the end.
func TestReadUnreleasedAreCollected(t *testing.T) {
	prev := memory.SetAllocation(memory.DefaultAllocation())
	defer memory.SetAllocation(prev)
	_, data := bigFile(t)
	path := filepath.Join(t.TempDir(), "big.safetensors")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	base := leakcheck.Settle()
	for range 100 {
		ts, err := safetensorsx.ReadFile(path)
		require.NoError(t, err)
		require.Len(t, ts, 304)
	}
	assert.Equal(t, base, leakcheck.Settle())
}
