package pyexchange

/*
#include <stdint.h>
#include "results.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

// The light export of small function results. ExportVersioned (core/cdlpack) registers every
// export under a cgo.Handle, and its deleter enters Go: together they cost more than the rest of
// a call that returns a small new array. A result that is small (smallResult bytes at most),
// host memory Go allocated (not Foreign: no Python object's memory is held) and shareable as it
// is goes out through results.c instead: its view and pin live in a slot of the table below, the
// managed tensor carries the slot's number, and its C deleter only queues the slot, which Go
// releases at its next chance (see results.c). The memory stays pinned and valid until then.

// smallResult is the largest result, in bytes, exported the light way.
const smallResult = 64 << 10

type resultSlot struct {
	view   *core.Tensor
	pinner runtime.Pinner
}

var results struct {
	sync.Mutex
	slots []*resultSlot // slot n is slots[n-1]; nil when free
	free  []uint64
	live  atomic.Int64
}

// lightResult reports whether result t goes out the light way (see above).
func lightResult(t *core.Tensor) bool {
	if t.Device().DeviceType != core.CPU || t.Foreign() || t.ReadOnly() || t.Released() ||
		t.Data() == nil || t.NumBytes() > smallResult || t.Flags()&core.FlagIsSubbyteTypePadded != 0 {
		return false
	}
	for i := range t.Ndim() {
		if t.Stride(i) < 0 {
			return false
		}
	}
	return true
}

// exportResult exports a result for which lightResult said yes. It returns nil, and no error,
// when it cannot (out of C memory, t released meanwhile): the caller then exports the usual way.
func exportResult(t *core.Tensor) *core.DLManagedTensorVersioned {
	v, err := t.View()
	if err != nil {
		return nil
	}
	s := &resultSlot{view: v}
	s.pinner.Pin(v.Data()) // C holds the address from now on: it must not move
	results.Lock()
	var n uint64
	if k := len(results.free); k > 0 {
		n = results.free[k-1]
		results.free = results.free[:k-1]
		results.slots[n-1] = s
	} else {
		results.slots = append(results.slots, s)
		n = uint64(len(results.slots))
	}
	results.Unlock()
	results.live.Add(1)
	nd := v.Ndim()
	cm := C.pxg_result_new(C.int(nd), C.uint64_t(n))
	if cm == nil {
		releaseResult(n)
		return nil
	}
	m := (*core.DLManagedTensorVersioned)(unsafe.Pointer(cm))
	dl := &m.DLTensor
	dl.Data = v.Data()
	dl.Device = v.Device()
	dl.Dtype = v.DType()
	dl.ByteOffset = v.ByteOffset()
	m.Flags = 0 // shared: neither read-only (lightResult) nor a copy
	if nd > 0 {
		dims := unsafe.Slice(dl.Shape, 2*nd)
		for i := range nd {
			dims[i], dims[nd+i] = v.Dim(i), v.Stride(i)
		}
	}
	return m
}

// releaseResult lets go of slot n.
func releaseResult(n uint64) {
	results.Lock()
	if n == 0 || n > uint64(len(results.slots)) || results.slots[n-1] == nil {
		results.Unlock()
		return // cannot happen: every slot is queued once
	}
	s := results.slots[n-1]
	results.slots[n-1] = nil
	results.free = append(results.free, n)
	results.Unlock()
	s.pinner.Unpin()
	s.view.Release()
	results.live.Add(-1)
}

// drainResults releases the slots whose deleters have run.
func drainResults() {
	if atomic.LoadInt64((*int64)(unsafe.Pointer(&C.pxg_results_due))) == 0 {
		return
	}
	var buf [C.PXG_RESULTS_BATCH]C.uint64_t
	for {
		k := C.pxg_results_take(&buf[0], C.int64_t(len(buf)))
		if k == 0 {
			return
		}
		for _, n := range buf[:k] {
			releaseResult(uint64(n))
		}
	}
}

// liveResults returns how many light results have not had their deleter run (drained first).
func liveResults() int64 {
	drainResults()
	return results.live.Load()
}

// dlpackgo_results_drain releases the slots whose deleters have run: results.c calls it once
// PXG_RESULTS_BATCH are due.
//
//export dlpackgo_results_drain
func dlpackgo_results_drain() { drainResults() }

// dlpackgo_results_release releases slot n at once: results.c calls it when it has no memory to
// queue it.
//
//export dlpackgo_results_release
func dlpackgo_results_release(n C.uint64_t) { releaseResult(uint64(n)) }
