package pyexchange

/*
#include "pyexchange.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
)

// attached caches the first true answer of pxg_python_attached (the interpreter, once attached,
// stays attached): a cgo call less per import.
var attached atomic.Bool

func pythonAttached() bool {
	if attached.Load() {
		return true
	}
	if C.pxg_python_attached() != 0 {
		attached.Store(true)
		return true
	}
	return false
}

// ImportVersioned takes ownership of m, a DLManagedTensorVersioned that a Python producer
// handed over (the capsule already renamed to "used_dltensor_versioned"), and returns a tensor
// over its memory without copying. Every descriptor field is validated as untrusted input; a
// tensor of another major version or a malformed one is refused, and its deleter still runs.
//
// The producer's deleter runs exactly once, when the last Go holder of the tensor lets go. Go
// may let go on any thread, so once the Python module has attached the interpreter (see the
// package documentation) the deleter runs with the GIL held, and not at all once the interpreter
// is shutting down. Without an attached interpreter the deleter is called directly.
func ImportVersioned(m *core.DLManagedTensorVersioned) (*core.Tensor, error) {
	if m == nil {
		return nil, fmt.Errorf("pyexchange: import: %w: DLManagedTensorVersioned", core.ErrNil)
	}
	if pythonAttached() {
		cm := (*C.pxg_managed_versioned)(unsafe.Pointer(m))
		w := C.pxg_guard_versioned(cm)
		if w == nil {
			C.pxg_delete_guarded_versioned(cm)
			return nil, fmt.Errorf("pyexchange: import: %w", ErrOutOfMemory)
		}
		m = (*core.DLManagedTensorVersioned)(unsafe.Pointer(w))
	}
	t, err := cdlpack.ImportVersioned(m)
	if err != nil {
		return nil, fmt.Errorf("pyexchange: %w", err)
	}
	return t, nil
}

// ImportLegacy is ImportVersioned for the legacy DLManagedTensor (capsule "dltensor") that
// NumPy < 2.1 and PyTorch < 2.9 produce. The tensor is writable: legacy capsules carry no
// read-only flag.
func ImportLegacy(m *core.DLManagedTensor) (*core.Tensor, error) {
	if m == nil {
		return nil, fmt.Errorf("pyexchange: import: %w: DLManagedTensor", core.ErrNil)
	}
	if pythonAttached() {
		cm := (*C.pxg_managed)(unsafe.Pointer(m))
		w := C.pxg_guard_legacy(cm)
		if w == nil {
			C.pxg_delete_guarded_legacy(cm)
			return nil, fmt.Errorf("pyexchange: import: %w", ErrOutOfMemory)
		}
		m = (*core.DLManagedTensor)(unsafe.Pointer(w))
	}
	t, err := cdlpack.ImportLegacy(m)
	if err != nil {
		return nil, fmt.Errorf("pyexchange: %w", err)
	}
	return t, nil
}
