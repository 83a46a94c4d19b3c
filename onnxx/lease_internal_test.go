package onnxx

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
)

// leaseFixture is the small model (Y = Relu(X·W + B), X and Y 1×64 float32) with helpers to run it
// on an input made from a seed and to compute the expected output through a destination of the
// caller's (RunInto: no lease).
type leaseFixture struct {
	t *testing.T
	s *Session
}

func newLeaseFixture(t *testing.T) *leaseFixture {
	s, err := NewSession(modeltest.Model("small"), nil, nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Destroy() })
	return &leaseFixture{t: t, s: s}
}

func (f *leaseFixture) input(seed int) *core.Tensor {
	xs := make([]float32, 64)
	for i := range xs {
		xs[i] = float32((i*seed)%11) - 4
	}
	return core.MustFromSlice(xs, 1, 64)
}

func (f *leaseFixture) run(x *core.Tensor) *core.Tensor {
	f.t.Helper()
	out, err := f.s.Run(map[string]*core.Tensor{"X": x})
	require.NoError(f.t, err)
	return out["Y"]
}

func (f *leaseFixture) want(x *core.Tensor) []float32 {
	f.t.Helper()
	y := core.MustNew(core.Float32, 1, 64)
	s2, err := NewSession(modeltest.Model("small"), nil, nil, nil)
	require.NoError(f.t, err)
	defer s2.Destroy()
	require.NoError(f.t, s2.RunInto([]*core.Tensor{x}, []*core.Tensor{y}))
	return elems(f.t, y)
}

func elems(t *testing.T, y *core.Tensor) []float32 {
	t.Helper()
	e, err := core.ReadOnlyElements[float32](y)
	require.NoError(t, err)
	return append([]float32{}, e...)
}

// TestLeases: Run's outputs of known shape come from the session's leases: a released output's
// block is the next run's output, with no allocation of it; an output that is still held (itself
// or a view) is never written by a later run; past maxLeases held outputs the run allocates; a
// lease whose tensor was dropped unreleased is replaced after a collection.
func TestLeases(t *testing.T) {
	leakcheck.Check(t)
	f := newLeaseFixture(t)
	x1, x2 := f.input(3), f.input(5)
	w1, w2 := f.want(x1), f.want(x2)
	require.NotEqual(t, w1, w2)

	t.Run("released: the same block again", func(t *testing.T) {
		y := f.run(x1)
		assert.Equal(t, w1, elems(t, y))
		first := y.Data()
		assert.False(t, y.Foreign(), "Go memory")
		y.Release()
		for range 3 { // the first binds x1 afresh, then the runs are settled
			y = f.run(x2)
			assert.Equal(t, first, y.Data(), "the lease's block, written by ORT in place")
			assert.Equal(t, w2, elems(t, y))
			y.Release()
		}
		assert.Len(t, f.s.b.leases[0], 1, "one lease serves a caller that releases")
	})

	t.Run("held outputs are never overwritten", func(t *testing.T) {
		var held []*core.Tensor
		seen := map[any]bool{}
		for i := range maxLeases + 3 {
			x := x1
			if i%2 == 1 {
				x = x2
			}
			y := f.run(x)
			assert.False(t, seen[y.Data()], "run %d: a block still held", i)
			seen[y.Data()] = true
			held = append(held, y)
		}
		assert.Len(t, f.s.b.leases[0], maxLeases, "then allocated outputs")
		for i, y := range held {
			want := w1
			if i%2 == 1 {
				want = w2
			}
			assert.Equal(t, want, elems(t, y), "output %d kept its values", i)
			y.Release()
		}
		f.s.b.allLent.Store(0) // the skip after finding them all lent is a matter of speed
	})

	t.Run("a view holds the block", func(t *testing.T) {
		y := f.run(x1)
		v, err := y.Reshape(64)
		require.NoError(t, err)
		y.Release()
		y2 := f.run(x2)
		assert.NotEqual(t, v.Data(), y2.Data(), "the view's block is not lent again")
		got, err := core.ReadOnlyElements[float32](v)
		require.NoError(t, err)
		assert.Equal(t, w1, got)
		v.Release()
		y2.Release()
	})

	t.Run("dropped unreleased: the lease is replaced", func(t *testing.T) {
		for range maxLeases {
			_ = f.run(x1) // dropped
		}
		require.True(t, leakcheck.Until(func() bool {
			f.s.b.mu.Lock()
			defer f.s.b.mu.Unlock()
			for _, x := range f.s.b.leases[0] {
				if !x.l.Lost() {
					return false
				}
			}
			return true
		}), "the collector frees the dropped outputs' blocks")
		f.s.b.allLent.Store(0)
		y := f.run(x2)
		assert.Equal(t, w2, elems(t, y))
		assert.LessOrEqual(t, len(f.s.b.leases[0]), maxLeases)
		assert.False(t, f.s.b.leases[0][len(f.s.b.leases[0])-1].l.Lost(), "a new lease in place of a lost one")
		y.Release()
	})
}

// TestLeaseOverlap: an input made over a released output's elements (a slice kept past Release,
// which the caller must not do) is refused when the run would lend that very block as the
// output, rather than read while ORT writes it; the lease is free again after the failed run.
func TestLeaseOverlap(t *testing.T) {
	f := newLeaseFixture(t)
	x := f.input(3)
	y := f.run(x)
	y.Release()
	y = f.run(x) // settled from here
	stale, err := core.Elements[float32](y)
	require.NoError(t, err)
	y.Release()
	bad := core.MustFromSlice(stale, 1, 64)
	for range 2 { // bound afresh (a new input tensor), then settled
		_, err = f.s.Run(map[string]*core.Tensor{"X": bad})
		require.ErrorIs(t, err, ErrOverlap)
	}
	y = f.run(x)
	assert.Equal(t, &stale[0], (*float32)(y.Data()), "the lease was given back by the failed runs")
	assert.Equal(t, f.want(x), elems(t, y))
	y.Release()
}

// TestLeaseDestroy: outputs lent before Destroy stay valid after it (their memory is Go's), and
// releasing them then does nothing harmful.
func TestLeaseDestroy(t *testing.T) {
	leakcheck.Check(t)
	f := newLeaseFixture(t)
	x := f.input(7)
	w := f.want(x)
	y := f.run(x)
	require.NoError(t, f.s.Destroy())
	runtime.GC()
	assert.Equal(t, w, elems(t, y))
	y.Release()
	_, err := f.s.Run(map[string]*core.Tensor{"X": x})
	assert.ErrorIs(t, err, ErrModel)
}

// TestLeaseConcurrent: runs from several goroutines, each releasing its output or keeping it for
// a while, with collections throughout: every output holds its own run's result until released.
func TestLeaseConcurrent(t *testing.T) {
	leakcheck.Check(t)
	f := newLeaseFixture(t)
	xs := []*core.Tensor{f.input(3), f.input(5), f.input(7)}
	ws := make([][]float32, len(xs))
	for i, x := range xs {
		ws[i] = f.want(x)
	}
	stop := make(chan struct{})
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var kept []*core.Tensor
			var keptW [][]float32
			for i := range 200 {
				k := (g + i) % len(xs)
				out, err := f.s.Run(map[string]*core.Tensor{"X": xs[k]})
				if !assert.NoError(t, err) {
					return
				}
				y := out["Y"]
				kept, keptW = append(kept, y), append(keptW, ws[k])
				if len(kept) > g { // goroutine g holds up to g outputs at a time
					for j, y := range kept {
						e, err := core.ReadOnlyElements[float32](y)
						assert.NoError(t, err)
						assert.Equal(t, keptW[j], e)
						if g != 3 || j%2 == 0 {
							y.Release()
						} // goroutine 3 drops every other output unreleased
					}
					kept, keptW = kept[:0], keptW[:0]
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-gcDone
	assert.LessOrEqual(t, len(f.s.b.leases[0]), maxLeases)
}
