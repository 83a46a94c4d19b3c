package pyexchange

/*
#include "pyexchange.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// Handle names a Go tensor for C and Python code: an integer they pass back to the library's
// exported functions. 0 is never a valid handle.
//
// Handles are not runtime/cgo.Handle values: cgo.Handle.Value panics on an integer it did not
// issue, and Python code can pass any integer. Lookup and Release answer ErrHandle instead.
type Handle uintptr

var (
	// handles maps each live handle to its tensor: a map under a lock, which costs a third of a
	// sync.Map's Store and LoadAndDelete for keys that are stored once and deleted once.
	handles = struct {
		sync.RWMutex
		m map[Handle]*core.Tensor
	}{m: map[Handle]*core.Tensor{}}
	lastHandle  atomic.Uintptr
	liveHandles atomic.Int64
)

// NewHandle registers a view of t (see core.Tensor.View) under a new handle and returns it. The
// view holds t's memory until the handle is released, so the caller may Release t at once.
// A released tensor is refused (core.ErrReleased).
func NewHandle(t *core.Tensor) (Handle, error) {
	if t == nil {
		return 0, errs.Errorf(core.ErrNil, "pyexchange: a nil tensor gets no handle")
	}
	v, err := t.View()
	if err != nil {
		return 0, fmt.Errorf("pyexchange: new handle: %w", err)
	}
	return register(v), nil
}

// register publishes v (which the registry now owns) under a new handle.
func register(v *core.Tensor) Handle {
	h := Handle(lastHandle.Add(1))
	handles.Lock()
	handles.m[h] = v
	handles.Unlock()
	liveHandles.Add(1)
	return h
}

// Lookup returns the tensor registered under h. The registry owns it: use it, make views of it,
// but do not Release it (release the handle instead).
func Lookup(h Handle) (*core.Tensor, error) {
	handles.RLock()
	v, ok := handles.m[h]
	handles.RUnlock()
	if !ok {
		return nil, errs.Errorf(ErrHandle, "pyexchange: unknown tensor handle %d (never issued, or released)", uintptr(h))
	}
	return v, nil
}

// Release unregisters h and releases its tensor: the memory is freed once no other holder (an
// export still held by NumPy or PyTorch, a view) is left. Releasing an unknown handle, or one
// twice, returns ErrHandle.
func Release(h Handle) error {
	handles.Lock()
	v, ok := handles.m[h]
	delete(handles.m, h)
	handles.Unlock()
	if !ok {
		return errs.Errorf(ErrHandle, "pyexchange: unknown tensor handle %d (never issued, or released)", uintptr(h))
	}
	liveHandles.Add(-1)
	v.Release()
	return nil
}

// LiveHandles returns how many handles are registered and not yet released.
func LiveHandles() int64 { return liveHandles.Load() }

// LiveExports returns how many tensors exported to consumers have not had their deleter run:
// those of ExportVersioned and ExportLegacy (cdlpack.LiveExports), the capsules the sharer of
// dlpackgo_sharer made in C, and the small results of registered functions exported the light
// way (results.go). The template export each sharer holds is not counted: it is let go
// when the sharer and all its capsules are.
func LiveExports() int64 {
	return cdlpack.LiveExports() - int64(C.pxg_live_anchors()) + int64(C.pxg_live_shares()) + liveResults()
}
