package gomlxx

import (
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/gomlx/gomlx/core/tensors"
)

// origins remembers, for the first element of each local storage FromTensor made a view of,
// which GoMLX tensor owned it, so that ToTensor can hand that tensor back instead of copying.
// It holds the tensors weakly; entries whose tensor was collected are swept every sweepEvery
// records, so the map never holds more than the live tensors' entries plus sweepEvery. Keys are
// addresses of Go memory, which does not move; a stale entry is never trusted (origin checks that
// the tensor still keeps its data at that address).
var (
	origins sync.Map // uintptr → weak.Pointer[tensors.Tensor]
	records atomic.Uint64
)

// sweepEvery is how many records pass between sweeps of dead entries (a cleanup per tensor would
// cost more than the rest of FromTensor).
const sweepEvery = 1024

// remember records that p is the first element of g's local storage.
func remember(g *tensors.Tensor, p unsafe.Pointer) {
	if p == nil {
		return
	}
	if v, ok := origins.Load(uintptr(p)); ok && v.(weak.Pointer[tensors.Tensor]).Value() == g {
		return // a view of this storage was made before
	}
	origins.Store(uintptr(p), weak.Make(g))
	if records.Add(1)%sweepEvery == 0 {
		origins.Range(func(k, v any) bool {
			if v.(weak.Pointer[tensors.Tensor]).Value() == nil {
				origins.CompareAndDelete(k, v)
			}
			return true
		})
	}
}

// recall returns the live GoMLX tensor recorded for p, or nil.
func recall(p unsafe.Pointer) *tensors.Tensor {
	v, ok := origins.Load(uintptr(p))
	if !ok {
		return nil
	}
	return v.(weak.Pointer[tensors.Tensor]).Value()
}
