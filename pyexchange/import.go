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
	"github.com/dlpack-go/dlpack/internal/errs"
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
		return nil, errs.Errorf(core.ErrNil, "pyexchange: import: nil *DLManagedTensorVersioned")
	}
	g, err := guard(unsafe.Pointer(m), false)
	if err != nil {
		return nil, err
	}
	t, err := cdlpack.ImportVersioned((*core.DLManagedTensorVersioned)(g))
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
		return nil, errs.Errorf(core.ErrNil, "pyexchange: import: nil *DLManagedTensor")
	}
	g, err := guard(unsafe.Pointer(m), true)
	if err != nil {
		return nil, err
	}
	t, err := cdlpack.ImportLegacy((*core.DLManagedTensor)(g))
	if err != nil {
		return nil, fmt.Errorf("pyexchange: %w", err)
	}
	return t, nil
}

// guard wraps managed tensor p of a Python producer in one whose deleter takes the GIL (see the
// package documentation), once the interpreter is attached; p itself otherwise. Out of memory,
// it runs p's deleter and fails.
func guard(p unsafe.Pointer, legacy bool) (unsafe.Pointer, error) {
	if !pythonAttached() {
		return p, nil
	}
	var g unsafe.Pointer
	if legacy {
		if g = unsafe.Pointer(C.pxg_guard_legacy((*C.pxg_managed)(p))); g == nil {
			C.pxg_delete_guarded_legacy((*C.pxg_managed)(p))
		}
	} else if g = unsafe.Pointer(C.pxg_guard_versioned((*C.pxg_managed_versioned)(p))); g == nil {
		C.pxg_delete_guarded_versioned((*C.pxg_managed_versioned)(p))
	}
	if g == nil {
		return nil, errs.Errorf(ErrOutOfMemory, "pyexchange: import: out of C memory for the guard of a managed tensor")
	}
	return g, nil
}

// importOwned imports managed tensor p (a DLManagedTensor if legacy, else versioned) for an
// owner that always releases the tensor itself, as the handle registry does: it is validated as
// any import, and made with core.WrapExplicit, so it carries no collector cleanup (the cleanup
// alone costs more than the rest of an import). release lets go of p: it runs exactly once, on
// the last holder, or before importOwned returns an error.
func importOwned(p unsafe.Pointer, legacy bool, release func()) (*core.Tensor, error) {
	d, err := managedDesc(p, legacy)
	if err != nil {
		release()
		return nil, err
	}
	t, err := core.WrapExplicit(d, release) // validates d and copies its arrays
	if err != nil {
		return nil, fmt.Errorf("pyexchange: import: %w", err)
	}
	return t, nil
}

// managedDesc reads the descriptor of managed tensor p (a DLManagedTensor if legacy, else
// versioned), refusing another major version; its Shape and Strides are p's own arrays (see
// core.DescOf).
func managedDesc(p unsafe.Pointer, legacy bool) (core.Desc, error) {
	dl, flags, err := managedDL(p, legacy)
	if err != nil {
		return core.Desc{}, err
	}
	d, err := core.DescOf(dl)
	if err != nil {
		return core.Desc{}, fmt.Errorf("pyexchange: import: %w", err)
	}
	d.Flags = flags
	return d, nil
}

// managedDL returns the DLTensor and flags of managed tensor p (a DLManagedTensor if legacy,
// else versioned), refusing another major version.
func managedDL(p unsafe.Pointer, legacy bool) (*core.DLTensor, core.Flags, error) {
	if legacy {
		return &(*core.DLManagedTensor)(p).DLTensor, 0, nil
	}
	m := (*core.DLManagedTensorVersioned)(p)
	if v := m.Version; v.Major != core.Version.Major {
		return nil, 0, errs.Errorf(core.ErrVersion, "pyexchange: import: DLPack major version %d (%d.%d), this package speaks %d.x",
			v.Major, v.Major, v.Minor, core.Version.Major)
	}
	return &m.DLTensor, m.Flags, nil
}

// deleter returns the function that runs the deleter of managed tensor p.
func deleter(p unsafe.Pointer, legacy bool) func() {
	if legacy {
		return func() { cdlpack.DeleteLegacy((*core.DLManagedTensor)(p)) }
	}
	return func() { cdlpack.DeleteVersioned((*core.DLManagedTensorVersioned)(p)) }
}
