package memory_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

func TestLease(t *testing.T) {
	base := leakcheck.Settle()

	t.Run("lent, released, lent again", func(t *testing.T) {
		l, err := memory.NewLease(core.Float32, 2, 3)
		require.NoError(t, err)
		x := l.Lend()
		require.NotNil(t, x)
		assert.Equal(t, []int64{2, 3}, x.Shape())
		assert.Equal(t, []int64{3, 1}, x.Strides())
		assert.Equal(t, core.Float32, x.DType())
		assert.Zero(t, uintptr(x.Data())%core.Alignment, "aligned as New's")
		assert.False(t, x.Foreign(), "Go memory")
		assert.Equal(t, base, core.LiveForeign(), "not counted as foreign")
		assert.Nil(t, l.Lend(), "one tensor at a time")
		require.NoError(t, core.Set[float32](x, 7, 1, 2))

		v, err := x.Slice(0, 1, 2, 1) // a view holds the block on
		require.NoError(t, err)
		x.Release()
		assert.Nil(t, l.Lend(), "the view still holds it")
		v.Release()
		y := l.Lend()
		require.NotNil(t, y, "back once the last holder let go")
		assert.Equal(t, x.Data(), y.Data(), "the same block")
		got, err := core.At[float32](y, 1, 2)
		require.NoError(t, err)
		assert.Equal(t, float32(7), got, "what the last holder left")
		_, err = core.Elements[float32](x)
		assert.ErrorIs(t, err, core.ErrReleased, "the first tensor stays released")
		x.Release() // again: nothing
		assert.Nil(t, l.Lend(), "a second Release of the first tensor gives nothing back")
		y.Release()
		assert.False(t, l.Lost())
	})

	t.Run("a view outlives the lent tensor", func(t *testing.T) {
		// the block comes back through the lent tensor's data pointer (core.Lender.Return): a
		// view's hold keeps that tensor, and so the block, reachable after the tensor itself is
		// released and dropped
		l, err := memory.NewLease(core.Int32, 64)
		require.NoError(t, err)
		x := l.Lend()
		at := uintptr(x.Data())
		v, err := x.Slice(0, 8, 16, 1)
		require.NoError(t, err)
		x.Release()
		x = nil
		for range 3 {
			runtime.GC()
		}
		require.NoError(t, core.Set[int32](v, 5, 0))
		assert.Nil(t, l.Lend(), "the view still holds the block")
		v.Release()
		y := l.Lend()
		require.NotNil(t, y)
		assert.Equal(t, at, uintptr(y.Data()), "the same block")
		got, err := core.At[int32](y, 8)
		require.NoError(t, err)
		assert.Equal(t, int32(5), got, "what the view wrote")
		y.Release()
		assert.False(t, l.Lost())
	})

	t.Run("collected unreleased", func(t *testing.T) {
		l, err := memory.NewLease(core.Float64, 8)
		require.NoError(t, err)
		func() {
			x := l.Lend()
			v, err := x.Reshape(2, 4) // a view collected unreleased lets go of its own hold only
			require.NoError(t, err)
			_ = v
		}()
		require.True(t, leakcheck.Until(l.Lost), "the collector frees the block, and the lease sees it")
		assert.Nil(t, l.Lend(), "a lost lease lends nothing")
		assert.Equal(t, base, core.LiveForeign())
	})

	t.Run("concurrent", func(t *testing.T) {
		l, err := memory.NewLease(core.Int64, 4)
		require.NoError(t, err)
		var wg sync.WaitGroup
		var mu sync.Mutex
		inUse := 0
		for range 8 {
			wg.Go(func() {
				for range 500 {
					x := l.Lend()
					if x == nil {
						continue
					}
					mu.Lock()
					inUse++
					assert.Equal(t, 1, inUse, "one tensor at a time")
					mu.Unlock()
					e, err := core.Elements[int64](x)
					assert.NoError(t, err)
					e[0]++
					mu.Lock()
					inUse--
					mu.Unlock()
					x.Release()
				}
			})
		}
		wg.Wait()
		x := l.Lend()
		require.NotNil(t, x)
		assert.Positive(t, x.Len())
	})

	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct {
			dtype core.DLDataType
			shape []int64
			want  error
		}{
			{core.Float32, []int64{0, 3}, core.ErrInvalid},
			{core.Float32, []int64{-1}, core.ErrInvalid},
			{core.DLDataType{Code: 99, Bits: 8, Lanes: 1}, []int64{2}, core.ErrInvalid},
			{core.Float32, []int64{1 << 40, 1 << 40}, core.ErrOverflow},
			{core.Float32, make([]int64, core.MaxNdim+1), core.ErrNdim},
		} {
			l, err := memory.NewLease(c.dtype, c.shape...)
			assert.ErrorIs(t, err, c.want, "%v %v", c.dtype, c.shape)
			assert.Nil(t, l)
		}
	})
}

// ExampleLease: a producer returns one result after another over the same block, each taken back
// when its caller releases it.
func ExampleLease() {
	l, err := memory.NewLease(core.Float32, 4)
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		x := l.Lend() // nil while the previous result is held
		e, _ := core.Elements[float32](x)
		for j := range e {
			e[j] = float32(i)
		}
		fmt.Println(x, e)
		x.Release() // the block can be lent again
	}
	// Output:
	// Tensor(float32, [4], cpu:0) [0 0 0 0]
	// Tensor(float32, [4], cpu:0) [1 1 1 1]
	// Tensor(float32, [4], cpu:0) [2 2 2 2]
}

// TestLeaseLendsInOneAllocation: lending allocates the tensor and nothing else (the lease is the
// tensor's releaser), and the block comes back at each Release.
func TestLeaseLendsInOneAllocation(t *testing.T) {
	l, err := memory.NewLease(core.Float32, 1, 64)
	require.NoError(t, err)
	first := l.Lend()
	require.NotNil(t, first)
	at := first.Data()
	first.Release()
	allocs := testing.AllocsPerRun(100, func() {
		x := l.Lend()
		if x == nil || x.Data() != at {
			panic("the block did not come back")
		}
		x.Release()
	})
	assert.Equal(t, 1.0, allocs, "a lend allocates only its tensor")
	assert.False(t, l.Lost())
}
