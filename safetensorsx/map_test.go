package safetensorsx_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// writeModel writes a small file: w (float32 2x3), b (float64 3), n (int8 5).
func writeModel(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, safetensorsx.WriteFile(path, map[string]*core.Tensor{
		"w": core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
		"b": core.MustFromSlice([]float64{0.5, -1, 2}),
		"n": core.MustFromSlice([]int8{1, -2, 3, -4, 5}),
	}, map[string]string{"format": "pt"}))
	return path
}

// TestMapSharesFileBytes proves the tensors are the file: a write to the file after Open is
// seen through them, they are read-only, and the mapping goes exactly when the File and the
// last tensor and view over it are released.
func TestMapSharesFileBytes(t *testing.T) {
	path := writeModel(t)
	before, maps, unmaps := leakcheck.Settle(), safetensorsx.LiveMappings(), safetensorsx.Unmaps()
	var copied bool
	f, err := safetensorsx.Open(path, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.Equal(t, maps+1, safetensorsx.LiveMappings())
	assert.Equal(t, []string{"b", "w", "n"}, f.Names(), "8-byte dtypes first, then 4, then 1")
	assert.Equal(t, map[string]string{"format": "pt"}, f.Metadata())
	info, err := f.Info("w")
	require.NoError(t, err)
	assert.Equal(t, safetensorsx.TensorInfo{Name: "w", Format: "F32", DType: core.Float32, Shape: []int64{2, 3}, Begin: 24, End: 48}, info)

	w, err := f.Tensor("w")
	require.NoError(t, err)
	assert.False(t, copied)
	assert.True(t, w.ReadOnly())
	assert.True(t, w.Foreign())
	assert.Equal(t, before+1, core.LiveForeign())
	_, err = core.Elements[float32](w)
	require.ErrorIs(t, err, core.ErrReadOnly)
	require.ErrorIs(t, core.Set[float32](w, 9, 0, 0), core.ErrReadOnly)

	// mutate the file through an ordinary write: the shared mapping sees it
	wf, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	off := f.Header().DataOffset + info.Begin
	_, err = wf.WriteAt(binary.LittleEndian.AppendUint32(nil, math.Float32bits(42)), off)
	require.NoError(t, err)
	require.NoError(t, wf.Close())
	v, err := core.At[float32](w, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(42), v)

	// Close does not unmap while a tensor lives; a view outlives its tensor
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close twice is fine")
	_, err = f.Tensor("b")
	require.ErrorIs(t, err, safetensorsx.ErrClosed)
	view, err := w.Transpose()
	require.NoError(t, err)
	w.Release()
	assert.Equal(t, maps+1, safetensorsx.LiveMappings(), "a live view keeps the map")
	v, err = core.At[float32](view, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(6), v)
	view.Release()
	assert.Equal(t, maps, safetensorsx.LiveMappings())
	assert.Equal(t, unmaps+1, safetensorsx.Unmaps(), "unmapped exactly once")
	assert.Equal(t, before, core.LiveForeign())
}

// TestMapReleaseOrders: whatever order the File and its tensors let go in, the mapping is
// unmapped once, after the last.
func TestMapReleaseOrders(t *testing.T) {
	path := writeModel(t)
	for _, closeFirst := range []bool{true, false} {
		maps, unmaps := safetensorsx.LiveMappings(), safetensorsx.Unmaps()
		ts, err := safetensorsx.Map(path) // Map closes its File before returning
		require.NoError(t, err)
		require.Len(t, ts, 3)
		f, err := safetensorsx.Open(path)
		require.NoError(t, err)
		x, err := f.Tensor("n")
		require.NoError(t, err)
		assert.Equal(t, maps+2, safetensorsx.LiveMappings())
		if closeFirst {
			require.NoError(t, f.Close())
		}
		for _, name := range []string{"w", "b", "n"} {
			ts[name].Release()
		}
		ts["w"].Release() // twice: no effect
		assert.Equal(t, unmaps+1, safetensorsx.Unmaps(), "Map's mapping goes with its last tensor")
		x.Release()
		if !closeFirst {
			assert.Equal(t, unmaps+1, safetensorsx.Unmaps(), "the open File keeps its mapping")
			require.NoError(t, f.Close())
		}
		assert.Equal(t, unmaps+2, safetensorsx.Unmaps())
		assert.Equal(t, maps, safetensorsx.LiveMappings())
	}
}

// TestMapUnmapsWhenUnreachable: forgetting Close and Release leaks nothing.
func TestMapUnmapsWhenUnreachable(t *testing.T) {
	path := writeModel(t)
	before, maps := leakcheck.Settle(), safetensorsx.LiveMappings()
	func() {
		f, err := safetensorsx.Open(path)
		require.NoError(t, err)
		x, err := f.Tensor("w")
		require.NoError(t, err)
		require.True(t, x.Foreign())
	}()
	assert.Eventually(t, func() bool {
		runtime.GC()
		return core.LiveForeign() == before && safetensorsx.LiveMappings() == maps
	}, 5*time.Second, 10*time.Millisecond)
}

// TestMapConcurrent: tensors taken and released on many goroutines while the File closes
// never touch an unmapped page, and the mapping goes once.
func TestMapConcurrent(t *testing.T) {
	path := writeModel(t)
	unmaps := safetensorsx.Unmaps()
	f, err := safetensorsx.Open(path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				x, err := f.Tensor("b")
				if err != nil {
					assert.ErrorIs(t, err, safetensorsx.ErrClosed)
					return
				}
				v, err := core.At[float64](x, 1)
				assert.NoError(t, err)
				assert.Equal(t, -1.0, v)
				x.Release()
			}
			if g == 3 {
				f.Close()
			}
		}()
	}
	wg.Wait()
	require.NoError(t, f.Close())
	assert.Equal(t, unmaps+1, safetensorsx.Unmaps())
}

// TestMapMisaligned: a tensor whose range is misaligned for its dtype is copied (flagged,
// writable) by default and refused under ZeroCopyOnly; AlwaysCopy maps nothing.
func TestMapMisaligned(t *testing.T) {
	// an I8 of 3 bytes first, then an F32: the F32 starts at data offset 3
	data := []byte{1, 2, 3}
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(1.5))
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(-2))
	h := `{"a":{"dtype":"I8","shape":[3],"data_offsets":[0,3]},"f":{"dtype":"F32","shape":[2],"data_offsets":[3,11]}}`
	for len(h)%8 != 0 {
		h += " "
	}
	path := filepath.Join(t.TempDir(), "mis.safetensors")
	require.NoError(t, os.WriteFile(path, file(h, data), 0o644))

	f, err := safetensorsx.Open(path, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer f.Close()
	ok, why := f.Shareable("f")
	assert.False(t, ok)
	assert.Contains(t, why, "not aligned to 4 bytes")
	_, err = f.Tensor("f")
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	a, err := f.Tensor("a")
	require.NoError(t, err, "bytes are always aligned")
	assert.True(t, a.ReadOnly())

	var copied bool
	g, err := safetensorsx.Open(path, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer g.Close()
	x, err := g.Tensor("f")
	require.NoError(t, err)
	assert.True(t, copied)
	assert.False(t, x.ReadOnly())
	assert.NotZero(t, x.Flags()&core.FlagIsCopied)
	vals, err := core.Elements[float32](x)
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5, -2}, vals)
	all, err := g.Tensors()
	require.NoError(t, err)
	assert.True(t, copied, "ReportCopy on Tensors: one of them was copied")
	assert.True(t, all["a"].ReadOnly())

	maps := safetensorsx.LiveMappings()
	c, err := safetensorsx.Open(path, adapters.AlwaysCopy())
	require.NoError(t, err)
	assert.Equal(t, maps, safetensorsx.LiveMappings(), "AlwaysCopy maps nothing")
	y, err := c.Tensor("f")
	require.NoError(t, err)
	assert.False(t, y.Foreign())
	require.NoError(t, c.Close())
	_, err = c.Tensor("f")
	require.ErrorIs(t, err, safetensorsx.ErrClosed)
}

// TestWriteFileKeepsMappings: rewriting a mapped file leaves the tensors over the old one
// valid (a new file is renamed over it; the old pages stay mapped).
func TestWriteFileKeepsMappings(t *testing.T) {
	path := writeModel(t)
	ts, err := safetensorsx.Map(path)
	require.NoError(t, err)
	require.NoError(t, safetensorsx.WriteFile(path, map[string]*core.Tensor{"z": core.MustFromSlice([]int8{7})}, nil))
	v, err := core.At[float32](ts["w"], 1, 2)
	require.NoError(t, err)
	assert.Equal(t, float32(6), v)
	now, err := safetensorsx.ReadFile(path)
	require.NoError(t, err)
	assert.Len(t, now, 1)
}

// TestReadFilePolicy: reading into Go memory is a copy, which ZeroCopyOnly refuses.
func TestReadFilePolicy(t *testing.T) {
	path := writeModel(t)
	_, err := safetensorsx.ReadFile(path, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	var copied bool
	ts, err := safetensorsx.ReadFile(path, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	for name, x := range ts {
		assert.False(t, x.ReadOnly(), name)
		assert.False(t, x.Foreign(), name)
		assert.NotZero(t, x.Flags()&core.FlagIsCopied, name)
		assert.Zero(t, uintptr(x.Data())%core.Alignment, name)
	}
}
