package memory_test

import (
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

// withAllocation runs the test under a (here, a process-wide) allocation setting.
func withAllocation(t *testing.T, a memory.Allocation) {
	t.Helper()
	prev := memory.SetAllocation(a)
	t.Cleanup(func() { memory.SetAllocation(prev) })
}

func TestNewUninitSmallIsGoMemory(t *testing.T) {
	withAllocation(t, memory.DefaultAllocation())
	base := leakcheck.Settle()
	x, err := memory.NewUninit(core.Float32, 16, 16)
	require.NoError(t, err)
	assert.False(t, x.Foreign(), "a small tensor is Go memory")
	assert.Equal(t, base, core.LiveForeign())
	assert.Equal(t, uintptr(0), uintptr(x.Data())%core.Alignment)
	assert.Equal(t, make([]float32, 256), mustData[float32](t, x), "Go memory comes zeroed")
}

func mustData[T core.Element](t *testing.T, x *core.Tensor) []T {
	t.Helper()
	d, err := core.Elements[T](x)
	require.NoError(t, err)
	return d
}

func TestNewUninitMappedReleaseAndReuse(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only; elsewhere NewUninit is New (TestNewUninitOff)")
	}
	withAllocation(t, memory.Allocation{MappedMin: 1 << 20, HugePages: true, CacheBytes: 64 << 20, CacheIdle: time.Minute})
	base := leakcheck.Settle()
	cached0, _ := memory.PoolBytes()
	x, err := memory.NewUninit(core.Float64, 1024, 1024) // 8 MiB
	require.NoError(t, err)
	require.True(t, x.Foreign(), "a large tensor is mapped memory")
	assert.Equal(t, base+1, core.LiveForeign())
	assert.Zero(t, uintptr(x.Data())%(2<<20), "huge-page blocks are 2 MiB aligned")
	assert.Equal(t, []int64{1024, 1024}, x.Shape())
	assert.True(t, x.IsContiguous())
	v := mustData[float64](t, x)
	for i := range v { // every byte is writable and readable
		v[i] = float64(i)
	}
	assert.Equal(t, float64(len(v)-1), v[len(v)-1])
	addr := x.Data()

	// a view and a hold keep the block: only the last holder gives it back, once
	view, err := x.Reverse(0)
	require.NoError(t, err)
	h, err := core.Hold(view)
	require.NoError(t, err)
	x.Release()
	view.Release()
	cached, live := memory.PoolBytes()
	assert.Equal(t, cached0, cached, "nothing goes back under a hold")
	assert.Equal(t, int64(8<<20), live)
	// the memory is still there: element [0, 4] of the view is [1023, 4] of x
	assert.Equal(t, float64(1023*1024+4), *(*float64)(unsafe.Add(view.Data(), 4*8)))
	h.Release()
	cached, live = memory.PoolBytes()
	assert.Equal(t, cached0+8<<20, cached, "the last holder gives the block to the cache")
	assert.Zero(t, live)
	assert.Equal(t, base, core.LiveForeign())

	// the next tensor of a similar size reuses it: same address, pages already in
	y, err := memory.NewUninit(core.Float32, 2000, 1000) // 7.6 MiB: within a quarter of 8 MiB
	require.NoError(t, err)
	assert.Equal(t, addr, y.Data())
	z, err := memory.NewUninit(core.Float64, 256, 1024) // 2 MiB: too small for that block
	require.NoError(t, err)
	assert.NotEqual(t, addr, z.Data())
	y.Release()
	z.Release()
	y.Release() // idempotent: the block went back once
	cached, live = memory.PoolBytes()
	assert.Equal(t, cached0+8<<20+2<<20, cached)
	assert.Zero(t, live)

	// a smaller cache unmaps what does not fit
	memory.SetAllocation(memory.Allocation{MappedMin: 1 << 20, CacheBytes: 0})
	cached, _ = memory.PoolBytes()
	assert.Zero(t, cached)
	assert.Equal(t, base, core.LiveForeign())
}

func TestNewUninitIdleBlocksAreUnmapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only")
	}
	withAllocation(t, memory.Allocation{MappedMin: 1 << 20, CacheBytes: 64 << 20, CacheIdle: 20 * time.Millisecond})
	x, err := memory.NewUninit(core.Uint8, 3<<20)
	require.NoError(t, err)
	x.Release()
	cached, _ := memory.PoolBytes()
	require.Equal(t, int64(3<<20), cached)
	assert.Eventually(t, func() bool { c, _ := memory.PoolBytes(); return c == 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestNewUninitUnreleasedTensorsAreCollected(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only")
	}
	withAllocation(t, memory.Allocation{MappedMin: 1 << 20, CacheBytes: 0})
	base := leakcheck.Settle()
	// 4 GiB in 64 MiB tensors, none released: mapped memory is outside Go's heap, so NewUninit
	// must make the collector run (the machine has less than that to spare many times over)
	for range 64 {
		x, err := memory.NewUninit(core.Uint8, 64<<20)
		require.NoError(t, err)
		mustData[uint8](t, x)[64<<20-1] = 1 // touch one page
	}
	_, live := memory.PoolBytes()
	assert.Less(t, live, int64(2<<30), "collections bound what unreleased tensors map")
	assert.Equal(t, base, leakcheck.Settle())
}

func TestNewUninitOff(t *testing.T) {
	withAllocation(t, memory.Allocation{})
	x, err := memory.NewUninit(core.Float64, 1024, 1024)
	require.NoError(t, err)
	assert.False(t, x.Foreign(), "MappedMin 0: Go memory")
}

func TestNewUninitErrors(t *testing.T) {
	_, err := memory.NewUninit(core.DLDataType{Code: 99, Bits: 8, Lanes: 1}, 4)
	assert.ErrorIs(t, err, core.ErrDType)
	_, err = memory.NewUninit(core.Float64, -1)
	assert.ErrorIs(t, err, core.ErrShape)
	_, err = memory.NewUninit(core.Float64, 1<<40, 1<<40)
	assert.ErrorIs(t, err, core.ErrOverflow)
	x, err := memory.NewUninit(core.Float32)
	require.NoError(t, err)
	assert.Equal(t, 0, x.Ndim())
	e, err := memory.NewUninit(core.Float32, 0, 1<<30)
	require.NoError(t, err)
	assert.True(t, e.Empty())
}

// NewUninitBytes gives the tensor its flags and its bytes, which are its memory, in Go memory
// or mapped alike.
func TestNewUninitBytes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alloc memory.Allocation
		shape []int64
		flags core.Flags
	}{
		{"small, no flags", memory.DefaultAllocation(), []int64{3, 5}, 0},
		{"small, copied", memory.DefaultAllocation(), []int64{3, 5}, core.FlagIsCopied},
		{"small, read-only", memory.DefaultAllocation(), []int64{7}, core.FlagReadOnly | core.FlagIsCopied},
		{"0-d", memory.DefaultAllocation(), nil, core.FlagIsCopied},
		{"empty", memory.DefaultAllocation(), []int64{0, 4}, core.FlagIsCopied},
		{"mapped", memory.Allocation{MappedMin: 64, CacheBytes: 1 << 20, CacheIdle: time.Minute}, []int64{64, 3}, core.FlagIsCopied},
		{"mapped off", memory.Allocation{}, []int64{64, 3}, core.FlagIsCopied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withAllocation(t, tc.alloc)
			x, b, err := memory.NewUninitBytes(core.Int32, tc.flags, tc.shape...)
			require.NoError(t, err)
			assert.Equal(t, tc.flags, x.Flags())
			assert.Equal(t, len(tc.shape), x.Ndim())
			for i, n := range tc.shape {
				assert.Equal(t, n, x.Shape()[i])
			}
			assert.True(t, x.IsContiguous())
			require.Len(t, b, int(x.NumBytes()))
			assert.NotNil(t, b)
			if len(b) > 0 {
				assert.Equal(t, x.Data(), unsafe.Pointer(unsafe.SliceData(b)), "the bytes are the tensor's memory")
				assert.Zero(t, uintptr(x.Data())%core.Alignment)
				for i := range b {
					b[i] = byte(i)
				}
				e, err := core.ReadOnlyElements[int32](x)
				require.NoError(t, err)
				assert.Equal(t, int32(0x03020100), e[0], "a write through the bytes is seen in the elements (little-endian)")
			}
			assert.Equal(t, runtime.GOOS == "linux" && tc.alloc.MappedMin > 0 && len(b) >= int(tc.alloc.MappedMin), x.Foreign())
			x.Release()
		})
	}
	_, _, err := memory.NewUninitBytes(core.Float64, 0, -1)
	assert.ErrorIs(t, err, core.ErrShape)
	_, _, err = memory.NewUninitBytes(core.Float64, core.FlagIsCopied, 1<<40, 1<<40)
	assert.ErrorIs(t, err, core.ErrOverflow)
}
