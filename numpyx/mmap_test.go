package numpyx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// TestMapSharesFileBytes proves the map is the file: a write to the file after Map is seen
// through the tensor, the tensor is read-only, and Release unmaps it.
func TestMapSharesFileBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.npy")
	require.NoError(t, numpyx.WriteFile(path, core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)))
	before := leakcheck.Settle()
	var copied bool
	m, err := numpyx.Map(path, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.False(t, copied)
	assert.True(t, m.ReadOnly())
	assert.Equal(t, before+1, core.LiveForeign())
	assert.Zero(t, uintptr(m.Data())%numpyx.Alignment, "data must start on a 64-byte boundary")
	_, err = core.Elements[float32](m)
	require.ErrorIs(t, err, core.ErrReadOnly)

	// mutate the file through an ordinary write: the shared mapping sees it
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0, 0, 0x80, 0x3f + 0x01}, 128) // element 0 := 4.0 (data at 128)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	v, err := core.At[float32](m, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(4), v)

	view, err := m.Transpose()
	require.NoError(t, err)
	m.Release()
	assert.Equal(t, before+1, core.LiveForeign(), "a live view keeps the map")
	v, err = core.At[float32](view, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(6), v)
	view.Release()
	assert.Equal(t, before, core.LiveForeign())
}

// TestMapUnmapsWhenUnreachable: forgetting Release leaks nothing.
func TestMapUnmapsWhenUnreachable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.npy")
	require.NoError(t, numpyx.WriteFile(path, core.MustFromSlice([]int64{1, 2, 3})))
	before := leakcheck.Settle()
	func() {
		m, err := numpyx.Map(path)
		require.NoError(t, err)
		require.True(t, m.Foreign())
	}()
	assert.Eventually(t, func() bool { runtime.GC(); return core.LiveForeign() == before }, 5*time.Second, 10*time.Millisecond)
}

// TestMapCopyPolicy: big-endian data cannot be mapped as it lies.
func TestMapCopyPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "be.npy")
	data := []byte{0x3f, 0x80, 0, 0, 0x40, 0, 0, 0} // 1.0, 2.0 big-endian float32
	require.NoError(t, os.WriteFile(path, append(headerBlock(t, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"), data...), 0o644))
	_, err := numpyx.Map(path, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	var copied bool
	m, err := numpyx.Map(path, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	got, err := core.Elements[float32](m)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, got)

	// AlwaysCopy reads a native file into Go memory
	native := filepath.Join(t.TempDir(), "n.npy")
	require.NoError(t, numpyx.WriteFile(native, core.MustFromSlice([]float32{1, 2})))
	m, err = numpyx.Map(native, adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	assert.False(t, m.Foreign())
	assert.False(t, m.ReadOnly())
}

// TestMapFortran maps a Fortran-order file as a Fortran-strided tensor.
func TestMapFortran(t *testing.T) {
	src := core.MustFromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	ft, err := src.Transpose() // 3x2, Fortran-contiguous
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "f.npy")
	require.NoError(t, numpyx.WriteFile(path, ft))
	for _, open := range []func(string) (*core.Tensor, error){func(p string) (*core.Tensor, error) { return numpyx.ReadFile(p) }, func(p string) (*core.Tensor, error) { return numpyx.Map(p) }} {
		m, err := open(path)
		require.NoError(t, err)
		assert.Equal(t, []int64{3, 2}, m.Shape())
		assert.Equal(t, []int64{1, 3}, m.Strides())
		v, err := core.At[int32](m, 2, 0)
		require.NoError(t, err)
		assert.Equal(t, int32(3), v)
	}
}

// TestMapFailedReadLeavesReport: Map under AlwaysCopy decides to read the file, then cannot
// allocate what its header promises (2^47 bytes, more than Go can allocate, in a sparse file
// that really holds them): the caller's ReportCopy flag is left as it was, whatever was in it.
// It needs a file system that holds sparse files of 128 TiB (tmpfs, XFS; not ext4).
func TestMapFailedReadLeavesReport(t *testing.T) {
	const n = 1 << 47
	head := headerBlock(t, fmt.Sprintf("{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }", n))
	var path string
	for _, dir := range []string{t.TempDir(), "/dev/shm"} {
		f, err := os.CreateTemp(dir, "sparse-*.npy")
		if err != nil {
			continue
		}
		defer os.Remove(f.Name())
		_, err = f.Write(head)
		if err == nil {
			err = f.Truncate(int64(len(head)) + n)
		}
		if f.Close() == nil && err == nil {
			path = f.Name()
			break
		}
	}
	if path == "" {
		t.Skip("no file system here holds a sparse file of 128 TiB")
	}
	for _, sentinel := range []bool{false, true} {
		copied := sentinel
		_, err := numpyx.Map(path, adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
		require.ErrorIs(t, err, core.ErrOverflow)
		assert.Equal(t, sentinel, copied, "ReportCopy was set by a Map that failed")
	}
}

// headerBlock is a padded version 1.0 header around dict, like NumPy writes.
func headerBlock(t *testing.T, dict string) []byte {
	t.Helper()
	pad := 64 - (10+len(dict)+1)%64
	d := dict + string(bytes.Repeat([]byte{' '}, pad)) + "\n"
	b := npyFile(d, nil)
	require.Zero(t, len(b)%64)
	return b
}

// TestWriteZeroCopy: a contiguous tensor's memory is handed to the writer as is.
func TestWriteZeroCopy(t *testing.T) {
	x := core.MustFromSlice(make([]float64, 1000), 10, 100)
	var w capture
	require.NoError(t, numpyx.Write(&w, x))
	require.Len(t, w.calls, 2)
	assert.Equal(t, x.Data(), unsafe.Pointer(unsafe.SliceData(w.calls[1])), "the data is written from the tensor's own memory")
}

// capture records every Write: the slice it was given (to compare addresses) and a copy of its
// bytes (writers may reuse their buffers).
type capture struct{ calls, copies [][]byte }

func (c *capture) Write(p []byte) (int, error) {
	c.calls, c.copies = append(c.calls, p), append(c.copies, bytes.Clone(p))
	return len(p), nil
}

// TestWriteStreamsLargeStrided: a non-contiguous tensor larger than the scratch buffer is
// written in C order in pieces no larger than 1 MiB.
func TestWriteStreamsLargeStrided(t *testing.T) {
	x := goTensor(t, core.Float64, 3, 300, 1000) // 7.2 MB
	for i, mk := range []func() (*core.Tensor, error){
		func() (*core.Tensor, error) { return x.Permute(1, 0, 2) },
		func() (*core.Tensor, error) { return x.Permute(2, 1, 0) },
		func() (*core.Tensor, error) { return x.Reverse(2) },
	} {
		v, err := mk()
		require.NoError(t, err)
		var w capture
		require.NoError(t, numpyx.Write(&w, v))
		var all []byte
		h, err := numpyx.HeaderOf(v)
		require.NoError(t, err)
		for k, c := range w.copies {
			if k > 0 && !h.Fortran { // Fortran-contiguous data is written whole, as it lies
				assert.LessOrEqual(t, len(c), 1<<20)
			}
			all = append(all, c...)
		}
		back, err := numpyx.Read(bytes.NewReader(all))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(contiguousBytes(t, v), contiguousBytes(t, back)), "layout %d", i)
	}
}

// TestWritersReplaceMappedFiles: WriteFile and WriteNPZ rename a new file over the old one, so a
// mapping of the old file keeps its elements (truncating it would fault on the next touch), and
// a write that fails leaves the old file as it was, with nothing else in its directory.
func TestWritersReplaceMappedFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.npy")
	big := core.MustNew(core.Float64, 1<<16) // 512 KiB: the old mapping spans many pages
	xs, err := core.Elements[float64](big)
	require.NoError(t, err)
	for i := range xs {
		xs[i] = float64(i)
	}
	require.NoError(t, numpyx.WriteFile(path, big))
	m, err := numpyx.Map(path, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer m.Release()

	require.NoError(t, numpyx.WriteFile(path, core.MustFromSlice([]int8{7})))
	v, err := core.At[float64](m, 1<<16-1)
	require.NoError(t, err)
	assert.Equal(t, float64(1<<16-1), v, "the mapping of the old file keeps its elements")
	now, err := numpyx.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, now.Shape())
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())

	gone := core.MustFromSlice([]float32{1, 2})
	gone.Release()
	require.ErrorIs(t, numpyx.WriteFile(path, gone), core.ErrReleased)
	require.ErrorIs(t, numpyx.WriteNPZ(path, map[string]*core.Tensor{"a": gone}), core.ErrReleased)
	again, err := numpyx.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, again.Shape(), "a failed write leaves the old file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing is left beside the file")
}
