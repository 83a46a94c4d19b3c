package memory_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// manyParts returns n float32 parts of shape [2, k] (k = 1 + i%5), each in a 64-byte slot, and
// the block size they need.
func manyParts(n int) ([]memory.Part, int64) {
	parts := make([]memory.Part, n)
	for i := range parts {
		parts[i] = memory.Part{Offset: int64(64 * i), DType: core.Float32, Shape: []int64{2, int64(1 + i%5)}, Flags: core.FlagIsCopied}
	}
	return parts, int64(64 * n)
}

// fillAndCheck writes a distinct byte pattern into every part through block, and checks that
// each part sees its own bytes (zero copy: the parts are views of the block).
func fillAndCheck(t *testing.T, block *core.Tensor, ts []*core.Tensor, parts []memory.Part) {
	t.Helper()
	h, err := core.Hold(block)
	require.NoError(t, err)
	b, err := block.Bytes()
	require.NoError(t, err)
	for i, p := range parts {
		for k := range 40 {
			b[p.Offset+int64(k)] = byte(i + k)
		}
	}
	h.Release()
	for i, x := range ts {
		p := parts[i]
		assert.Equal(t, p.Shape, x.Shape(), "part %d", i)
		assert.Equal(t, []int64{p.Shape[1], 1}, x.Strides(), "part %d: C order", i)
		assert.Equal(t, p.Flags, x.Flags(), "part %d", i)
		assert.Equal(t, unsafe.Add(block.Data(), p.Offset), x.Data(), "part %d lies at its offset in the block", i)
		xb, err := x.ReadOnlyBytes()
		require.NoError(t, err)
		for k := range xb {
			require.Equal(t, byte(i+k), xb[k], "part %d byte %d", i, k)
		}
	}
}

func TestNewUninitPartsGoMemory(t *testing.T) {
	withAllocation(t, memory.DefaultAllocation())
	base := leakcheck.Settle()
	parts, size := manyParts(700) // three chunks of tensors
	block, ts, err := memory.NewUninitParts(size, parts)
	require.NoError(t, err)
	require.Len(t, ts, len(parts))
	assert.False(t, block.Foreign(), "a block under MappedMin is Go memory")
	assert.Equal(t, []int64{size}, block.Shape())
	assert.Equal(t, core.Uint8, block.DType())
	assert.Zero(t, uintptr(block.Data())%core.Alignment)
	assert.Equal(t, base, core.LiveForeign())
	fillAndCheck(t, block, ts, parts)

	// one part alone keeps the block: its bytes survive collections and new allocations
	last := ts[len(ts)-1]
	block.Release()
	block, ts = nil, nil
	for range 3 {
		runtime.GC()
		_ = make([]byte, 1<<20)
	}
	b, err := last.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, byte(699%256), b[0])
}

// TestNewUninitPartsShapes: parts of one shape in a row, scalars among them, each get their
// shape and C-order strides.
func TestNewUninitPartsShapes(t *testing.T) {
	shapes := [][]int64{{3}, {3}, {3}, {}, {}, {3, 1}, {3, 1}, {3}, {2, 0, 4}, {2, 0, 4}, {}}
	strides := [][]int64{{1}, {1}, {1}, {}, {}, {1, 1}, {1, 1}, {1}, {0, 4, 1}, {0, 4, 1}, {}}
	parts := make([]memory.Part, len(shapes))
	for i, s := range shapes {
		parts[i] = memory.Part{Offset: int64(16 * i), DType: core.Int32, Shape: s}
	}
	_, ts, err := memory.NewUninitParts(int64(16*len(parts)), parts)
	require.NoError(t, err)
	for i, x := range ts {
		assert.Equal(t, shapes[i], x.Shape(), "part %d", i)
		assert.Equal(t, len(shapes[i]), x.Ndim(), "part %d", i)
		if i != 8 && i != 9 { // empty: strides are not looked at
			assert.Equal(t, strides[i], x.Strides(), "part %d", i)
			assert.True(t, x.IsContiguous(), "part %d", i)
		} else {
			assert.True(t, x.Empty(), "part %d", i)
		}
	}
}

func TestNewUninitPartsMapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only; elsewhere the block is Go memory")
	}
	withAllocation(t, memory.Allocation{MappedMin: 64 << 10, CacheBytes: 64 << 20, CacheIdle: time.Minute})
	base := leakcheck.Settle()
	cached0, live0 := memory.PoolBytes()
	parts, size := manyParts(1500) // 96,000 bytes: mapped
	block, ts, err := memory.NewUninitParts(size, parts)
	require.NoError(t, err)
	require.True(t, block.Foreign(), "a block from MappedMin up is mapped")
	assert.Equal(t, base+1, core.LiveForeign(), "one owner for the block and all its parts")
	for _, x := range ts {
		require.True(t, x.Foreign())
	}
	fillAndCheck(t, block, ts, parts)

	// a view outlives the release of the block and every part; the block goes back only after it
	v, err := ts[1000].View()
	require.NoError(t, err)
	block.Release()
	for _, x := range ts {
		x.Release()
		x.Release() // twice: no effect
	}
	assert.Equal(t, base+1, core.LiveForeign(), "the view still holds the block")
	vb, err := v.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, byte(1000%256), vb[0])
	v.Release()
	assert.Equal(t, base, core.LiveForeign(), "the last holder gave the block back")
	cached, live := memory.PoolBytes()
	assert.Equal(t, live0, live)
	assert.Greater(t, cached, cached0, "the block went back to the cache")

	// dropped without Release: the collector gives the block back, exactly once
	block, ts, err = memory.NewUninitParts(size, parts)
	require.NoError(t, err)
	require.True(t, block.Foreign())
	assert.Equal(t, base+1, core.LiveForeign())
	fillAndCheck(t, block, ts, parts)
	block, ts = nil, nil
	assert.Equal(t, base, leakcheck.Settle())
	_, live = memory.PoolBytes()
	assert.Equal(t, live0, live)
}

func TestNewUninitPartsErrors(t *testing.T) {
	withAllocation(t, memory.Allocation{MappedMin: 1, CacheBytes: 0})
	base := leakcheck.Settle()
	_, live0 := memory.PoolBytes()
	f32 := func(off int64, shape ...int64) memory.Part {
		return memory.Part{Offset: off, DType: core.Float32, Shape: shape}
	}
	for _, c := range []struct {
		name  string
		size  int64
		parts []memory.Part
		want  error
	}{
		{"negative size", -1, nil, core.ErrOverflow},
		{"huge size", 1 << 60, nil, core.ErrOverflow},
		{"bad dtype", 64, []memory.Part{{DType: core.DLDataType{Code: 99, Bits: 8, Lanes: 1}, Shape: []int64{4}}}, core.ErrDType},
		{"negative dim", 64, []memory.Part{f32(0, 2, -1)}, core.ErrShape},
		{"too many dims", 64, []memory.Part{f32(0, make([]int64, core.MaxNdim+1)...)}, core.ErrNdim},
		{"shape overflows", 64, []memory.Part{f32(0, 1<<40, 1<<40)}, core.ErrOverflow},
		{"past the end", 64, []memory.Part{f32(0, 4), f32(56, 3)}, core.ErrBounds},
		{"negative offset", 64, []memory.Part{f32(-4, 1)}, core.ErrBounds},
		{"offset past the end", 64, []memory.Part{f32(1<<62, 1)}, core.ErrBounds},
	} {
		_, _, err := memory.NewUninitParts(c.size, c.parts)
		require.ErrorIs(t, err, c.want, c.name)
		require.ErrorIs(t, err, core.ErrInvalid, c.name)
		if len(c.parts) > 1 {
			assert.Contains(t, err.Error(), "part 1", c.name)
		}
	}
	assert.Equal(t, base, core.LiveForeign(), "a refused part allocates nothing")
	_, live := memory.PoolBytes()
	assert.Equal(t, live0, live)

	// empty parts, 0-d parts and an empty block are fine
	block, ts, err := memory.NewUninitParts(0, []memory.Part{f32(0, 0, 7)})
	require.NoError(t, err)
	assert.True(t, ts[0].Empty())
	assert.True(t, block.Empty())
	_, ts, err = memory.NewUninitParts(4, []memory.Part{f32(0)})
	require.NoError(t, err)
	assert.Equal(t, 0, ts[0].Ndim())
	require.NoError(t, core.Set(ts[0], float32(2.5)))
	v, err := core.At[float32](ts[0])
	require.NoError(t, err)
	assert.Equal(t, float32(2.5), v)
}

// BenchmarkNewUninitParts makes 4096 float32 tensors of 64 elements over one block, against
// WrapKeep one by one over the same Go memory (what a reader of many small tensors did before).
func BenchmarkNewUninitParts(b *testing.B) {
	const n = 4096
	parts := make([]memory.Part, n)
	for i := range parts {
		parts[i] = memory.Part{Offset: int64(256 * i), DType: core.Float32, Shape: []int64{64}}
	}
	size := int64(256 * n)
	b.Run(fmt.Sprintf("%d/NewUninitParts", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := memory.NewUninitParts(size, parts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("%d/WrapKeep", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf := make([]byte, size+core.Alignment)
			var keep any = buf
			for _, p := range parts {
				if _, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[p.Offset]), Device: core.CPUDevice, DType: p.DType, Shape: p.Shape}, keep); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
