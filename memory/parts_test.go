package memory_test

import (
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// mappedParts makes n uint8 parts of 64 bytes each over one mapped block, part i filled with
// byte i, and returns the block and the parts.
func mappedParts(t *testing.T, n int) (*core.Tensor, []*core.Tensor) {
	t.Helper()
	parts := make([]memory.Part, n)
	for i := range parts {
		parts[i] = memory.Part{Offset: int64(64 * i), DType: core.Uint8, Shape: []int64{64}}
	}
	block, ts, err := memory.NewUninitParts(int64(64*n), parts)
	require.NoError(t, err)
	require.True(t, block.Foreign(), "the test's allocation maps every block")
	h, err := core.Hold(block)
	require.NoError(t, err)
	b, err := block.Bytes()
	require.NoError(t, err)
	for i := range b {
		b[i] = byte(i / 64)
	}
	h.Release()
	return block, ts
}

// checkPart checks that x still holds the bytes mappedParts wrote for part i.
func checkPart(t *testing.T, x *core.Tensor, i int) {
	t.Helper()
	h, err := core.Hold(x)
	require.NoError(t, err)
	defer h.Release()
	b, err := x.ReadOnlyBytes()
	require.NoError(t, err)
	for k, v := range b {
		if v != byte(i) {
			require.Equal(t, byte(i), v, "part %d byte %d", i, k)
		}
	}
}

// TestPartsChunkCleanupWithOtherTensorAlive: the chunk's cleanup is attached to its first
// tensor; keeping only a later tensor of the chunk (and none of the first) must keep the block,
// through collections and new allocations of the same size (the cache must not hand it out).
func TestPartsChunkCleanupWithOtherTensorAlive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only")
	}
	withAllocation(t, memory.Allocation{MappedMin: 1, CacheBytes: 64 << 20, CacheIdle: time.Minute})
	base := leakcheck.Settle()
	_, live0 := memory.PoolBytes()
	var kept *core.Tensor
	var keptAt unsafe.Pointer
	func() {
		block, ts := mappedParts(t, 3*1024) // three chunks
		kept = ts[1024+517]                 // inside the second chunk, not its first tensor
		keptAt = block.Data()
		block.Release()
	}()
	stop := foreignmem.Collecting()
	for range 20 {
		// same size: would reuse the block if it had gone back to the cache
		b2, ts2 := mappedParts(t, 3*1024)
		assert.NotEqual(t, keptAt, b2.Data(), "a block under a reachable part was handed out again")
		b2.Release()
		for _, x := range ts2 {
			x.Release()
		}
		checkPart(t, kept, 517)
	}
	stop()
	assert.Equal(t, base+1, leakcheck.Settle(), "the kept part holds its block")
	checkPart(t, kept, 517)
	kept = nil
	assert.Equal(t, base, leakcheck.Settle(), "dropping the last part gives the block back")
	_, live := memory.PoolBytes()
	assert.Equal(t, live0, live)
}

// TestPartsReleaseOrders: parts released in several orders, with views (of parts and of
// views) outstanding and collections running on another goroutine: the block goes back exactly
// once, after the last holder, and every holder reads its bytes until then.
func TestPartsReleaseOrders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only")
	}
	withAllocation(t, memory.Allocation{MappedMin: 1, CacheBytes: 64 << 20, CacheIdle: time.Minute})
	base := leakcheck.Settle()
	_, live0 := memory.PoolBytes()
	stop := foreignmem.Collecting()
	defer stop()
	const n = 1100 // two chunks
	orders := map[string]func(i int) int{
		"forward":     func(i int) int { return i },
		"backward":    func(i int) int { return n - 1 - i },
		"interleaved": func(i int) int { return (i * 7) % n }, // 7 and 1100 are coprime
	}
	for name, at := range orders {
		for _, blockFirst := range []bool{true, false} {
			block, ts := mappedParts(t, n)
			views := make([]*core.Tensor, n)
			for i, x := range ts {
				if i%3 == 0 {
					v, err := x.Slice(0, 8, 40, 1)
					require.NoError(t, err)
					views[i], err = v.View() // a view of a view
					require.NoError(t, err)
					v.Release()
				}
			}
			if blockFirst {
				block.Release()
			}
			for k := range n {
				i := at(k)
				ts[i].Release()
				if v := views[(i*11)%n]; v != nil && k%2 == 0 {
					checkPart(t, v, (i*11)%n)
				}
			}
			require.Equal(t, base+1, core.LiveForeign(), "%s: views (and maybe the block) still hold it", name)
			if !blockFirst {
				block.Release()
			}
			last := -1
			for i, v := range views {
				if v != nil {
					checkPart(t, v, i)
					v.Release()
					last = i
				}
			}
			require.GreaterOrEqual(t, last, 0)
			assert.Equal(t, base, core.LiveForeign(), "%s: the last view gave the block back", name)
			_, live := memory.PoolBytes()
			assert.Equal(t, live0, live, "%s", name)
		}
	}
}

// TestPartViewOutlivesDroppedPart: a view of a part, the part and the block dropped without
// Release, keeps the block through collections; the block goes back once the view is
// collected too.
func TestPartViewOutlivesDroppedPart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only")
	}
	withAllocation(t, memory.Allocation{MappedMin: 1, CacheBytes: 64 << 20, CacheIdle: time.Minute})
	base := leakcheck.Settle()
	var v *core.Tensor
	func() {
		_, ts := mappedParts(t, 10)
		var err error
		v, err = ts[9].Reshape(8, 8)
		require.NoError(t, err)
	}()
	assert.Equal(t, base+1, leakcheck.Settle())
	for i := range 8 {
		row, err := v.Index(0, int64(i))
		require.NoError(t, err)
		checkPart(t, row, 9)
	}
	v = nil
	assert.Equal(t, base, leakcheck.Settle())
}

// TestHoldReleaseRace: Hold, views and Release of parts and of Wrap tensors from several
// goroutines at once (run with -race): no use after free, the release exactly once.
func TestHoldReleaseRace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only")
	}
	withAllocation(t, memory.Allocation{MappedMin: 1, CacheBytes: 64 << 20, CacheIdle: time.Minute})
	base := leakcheck.Settle()
	stop := foreignmem.Collecting()
	defer stop()
	for range 20 {
		block, ts := mappedParts(t, 64)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, x := range ts {
					if (i+g)%4 == 0 {
						x.Release()
						continue
					}
					h, err := core.Hold(x)
					if err != nil {
						assert.ErrorIs(t, err, core.ErrReleased)
						continue
					}
					b, err := x.ReadOnlyBytes()
					if err == nil {
						for _, c := range b {
							if c != byte(i) {
								assert.Equal(t, byte(i), c, "part %d under a hold", i)
								break
							}
						}
					} else {
						assert.ErrorIs(t, err, core.ErrReleased)
					}
					if v, err := x.View(); err == nil {
						v.Release()
					}
					h.Release()
				}
			}()
		}
		block.Release()
		wg.Wait()
		for _, x := range ts {
			x.Release()
		}
		require.Equal(t, base, core.LiveForeign())
	}
}

// TestInlineDataViewsOutliveTensor: views of New's small tensors (data inside the tensor's own
// allocation) and of parts over Go memory keep that memory on their own, through collections and
// allocations that would reuse it.
func TestInlineDataViewsOutliveTensor(t *testing.T) {
	withAllocation(t, memory.DefaultAllocation()) // parts of a small block: Go memory
	views := func() (vs []*core.Tensor) {
		for _, shape := range [][]int64{{1}, {2, 2, 2}, {4, 4, 4, 4}, {2, 2, 2, 2, 2}} {
			x := core.MustNew(core.Float32, shape...)
			e, err := core.Elements[float32](x)
			require.NoError(t, err)
			for i := range e {
				e[i] = float32(i) + 0.5
			}
			v, err := x.Reshape(-1)
			require.NoError(t, err)
			vs = append(vs, v)
		}
		parts := []memory.Part{{Offset: 64, DType: core.Float32, Shape: []int64{4}}, {Offset: 0, DType: core.Float32, Shape: []int64{3}}}
		block, ts, err := memory.NewUninitParts(128, parts)
		require.NoError(t, err)
		require.False(t, block.Foreign())
		for _, x := range ts {
			e, err := core.Elements[float32](x)
			require.NoError(t, err)
			for i := range e {
				e[i] = float32(i) + 0.5
			}
			v, err := x.Reverse(0)
			require.NoError(t, err)
			v, err = v.Reverse(0)
			require.NoError(t, err)
			vs = append(vs, v)
		}
		return vs
	}()
	reuseFreedMemory()
	for k, v := range views {
		got := elems[float32](t, v)
		for i, x := range got {
			require.Equal(t, float32(i)+0.5, x, "view %d, element %d", k, i)
		}
	}
}
