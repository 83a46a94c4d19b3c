package gomlxx

import (
	"runtime"
	"sync"
	"unsafe"
	"weak"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// origins remembers, for the first element of each local storage FromTensor made a view of,
// which GoMLX tensor owned it, so that ToTensor can hand that tensor back instead of copying.
// It holds the tensors weakly: an entry goes when its tensor is collected. Keys are addresses of
// Go memory, which does not move; a stale entry is never trusted (origin checks that the tensor
// still keeps its data at that address).
var origins sync.Map // uintptr → weak.Pointer[tensors.Tensor]

// remember records that p is the first element of g's local storage.
func remember(g *tensors.Tensor, p unsafe.Pointer) {
	if p == nil {
		return
	}
	key, w := uintptr(p), weak.Make(g)
	if prev, loaded := origins.Swap(key, w); loaded && prev.(weak.Pointer[tensors.Tensor]) == w {
		return // already recorded, and its cleanup registered
	}
	runtime.AddCleanup(g, func(key uintptr) { origins.CompareAndDelete(key, w) }, key)
}

// recall returns the live GoMLX tensor recorded for p, or nil.
func recall(p unsafe.Pointer) *tensors.Tensor {
	v, ok := origins.Load(uintptr(p))
	if !ok {
		return nil
	}
	return v.(weak.Pointer[tensors.Tensor]).Value()
}
