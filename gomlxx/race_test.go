package gomlxx_test

import (
	"sync"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx"
)

// FromTensor, Take, ShareableFromTensor and Aliases racing FinalizeAll on another goroutine read the
// tensor's state under GoMLX's lock: the race detector sees no race, and each call either works
// on the live tensor (its values, exactly) or fails with core.ErrReleased, every time (reading
// the state without the lock, a third of the calls said "no host storage for dtype
// InvalidDType" instead: the shape was already gone while the tensor still looked valid).
func TestRaceFinalizeAll(t *testing.T) {
	want := []float32{1, 2, 3}
	calls := map[string]func(g *tensors.Tensor) error{
		"FromTensor": func(g *tensors.Tensor) error {
			x, err := gomlxx.FromTensor(g)
			if err == nil {
				got, gerr := core.Elements[float32](x)
				require.NoError(t, gerr)
				require.Equal(t, want, got)
				x.Release()
			}
			return err
		},
		"FromTensor copy": func(g *tensors.Tensor) error {
			x, err := gomlxx.FromTensor(g, adapters.AlwaysCopy())
			if err == nil {
				got, gerr := core.Elements[float32](x)
				require.NoError(t, gerr)
				require.Equal(t, want, got)
				x.Release()
			}
			return err
		},
		"Take": func(g *tensors.Tensor) error {
			x, err := gomlxx.Take(g)
			if err == nil {
				got, gerr := core.Elements[float32](x)
				require.NoError(t, gerr)
				require.Equal(t, want, got)
				x.Release()
			}
			return err
		},
		"ShareableFromTensor": func(g *tensors.Tensor) error {
			if ok, why := gomlxx.ShareableFromTensor(g); !ok {
				require.Contains(t, why, "finalized", why)
			}
			return nil
		},
		"Aliases": func(g *tensors.Tensor) error {
			gomlxx.Aliases(g, core.Scalar(float32(1)))
			return nil
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			ok, released := 0, 0
			for round := range 500 {
				g := tensors.FromFlatDataAndDimensions([]float32{1, 2, 3}, 3)
				start := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() {
					<-start
					_ = g.FinalizeAll()
				})
				close(start)
				err := call(g)
				wg.Wait()
				if err != nil {
					require.ErrorIs(t, err, core.ErrReleased, "round %d", round)
					assert.Equal(t, "gomlxx: the GoMLX tensor was finalized (FinalizeAll, or donated)", err.Error(), "the same error every time")
					released++
				} else {
					ok++
				}
			}
			t.Logf("%s: %d calls on the live tensor, %d found it finalized", name, ok, released)
		})
	}
}
