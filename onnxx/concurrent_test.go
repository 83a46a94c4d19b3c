package onnxx_test

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
)

// TestConcurrentMixedRuns: 16 goroutines on one session, each mixing Run (lent outputs, kept for a
// few runs before their release) and RunInto (its own destination), with inputs of its own:
// every result is exact (float64 MatMul of small integers), a kept output still holds its values
// after the other goroutines' runs, and no two live outputs are ever over one block.
func TestConcurrentMixedRuns(t *testing.T) {
	s, err := onnxx.NewSession(model("matmul_float64"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	const goroutines, runs, keep = 16, 60, 3
	var mu sync.Mutex
	live := map[unsafe.Pointer]string{} // data address of every live output -> who holds it
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				type kept struct {
					t    *core.Tensor
					want []float64
				}
				var held []kept
				release := func(k kept) error {
					got, err := core.ReadOnlyElements[float64](k.t)
					if err != nil {
						return err
					}
					if !equalFloats(got, k.want) {
						return fmt.Errorf("goroutine %d: a kept output changed", g)
					}
					mu.Lock()
					delete(live, k.t.Data())
					mu.Unlock()
					k.t.Release()
					return nil
				}
				for r := range runs {
					a, b, want := matmulCase(g, r)
					ins := []*core.Tensor{core.MustFromSlice(a, 8, 16), core.MustFromSlice(b, 16, 4)}
					if r%2 == 1 {
						dst := core.MustNew(core.Float64, 8, 4)
						if err := s.RunInto(ins, []*core.Tensor{dst}); err != nil {
							return err
						}
						got, _ := core.ReadOnlyElements[float64](dst)
						if !equalFloats(got, want) {
							return fmt.Errorf("goroutine %d run %d: RunInto gave wrong values", g, r)
						}
						continue
					}
					out, err := s.Run(map[string]*core.Tensor{"A": ins[0], "B": ins[1]})
					if err != nil {
						return err
					}
					c := out["C"]
					got, _ := core.ReadOnlyElements[float64](c)
					if !equalFloats(got, want) {
						return fmt.Errorf("goroutine %d run %d: Run gave wrong values", g, r)
					}
					mu.Lock()
					other, dup := live[c.Data()]
					live[c.Data()] = fmt.Sprintf("goroutine %d run %d", g, r)
					mu.Unlock()
					if dup {
						return fmt.Errorf("goroutine %d run %d: its output is over the block %s holds", g, r, other)
					}
					held = append(held, kept{c, want})
					if len(held) > keep {
						if err := release(held[0]); err != nil {
							return err
						}
						held = held[1:]
					}
				}
				for _, k := range held {
					if err := release(k); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

// matmulCase is goroutine g's run r: A [8,16], B [16,4] of small integers and A·B, exact in
// float64.
func matmulCase(g, r int) (a, b, c []float64) {
	a, b, c = make([]float64, 8*16), make([]float64, 16*4), make([]float64, 8*4)
	for i := range a {
		a[i] = float64((i*7+g*3+r)%11 - 5)
	}
	for i := range b {
		b[i] = float64((i*5+g+r*2)%9 - 4)
	}
	for i := range 8 {
		for j := range 4 {
			for k := range 16 {
				c[i*4+j] += a[i*16+k] * b[k*4+j]
			}
		}
	}
	return a, b, c
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
