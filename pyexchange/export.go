package pyexchange

/*
#include "pyexchange.h"
*/
import "C"

import (
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// Shareable reports whether t can be handed to a Python consumer without copying, and if not,
// why. Two things force a copy:
//
//   - negative strides: PyTorch 1.13 aborts the whole process on them, and NumPy's
//     consumers are no better tested, so no export of this package ever carries one;
//   - a read-only tensor (a memory-mapped file, a broadcast view): a legacy capsule cannot carry
//     the read-only flag, and real versioned consumers do not all honour it (PyTorch 2.11 shares
//     the memory and lets Python write through it: a fault, for a read-only memory map), so a
//     read-only tensor is exported as a copy to every consumer.
//
// Everything else is shared: any other strides (zero, Fortran order, steps), offsets (folded
// into data; byte_offset is always 0), 0-d and empty tensors, every dtype (a consumer that does
// not know one raises its own Python exception).
func Shareable(t *core.Tensor, legacy bool) (ok bool, why string) {
	if hasNegativeStride(t) {
		return false, fmt.Sprintf("strides %v are negative", t.Strides())
	}
	if t.ReadOnly() {
		if legacy {
			return false, "the tensor is read-only and a legacy capsule cannot say so"
		}
		return false, "the tensor is read-only and consumers such as PyTorch ignore DLPack's READ_ONLY flag"
	}
	return true, ""
}

// hasNegativeStride reports whether a dimension that matters (size > 1, tensor not empty) runs
// backwards.
func hasNegativeStride(t *core.Tensor) bool {
	if t.Empty() {
		return false
	}
	for i := range t.Ndim() {
		if t.Dim(i) > 1 && t.Stride(i) < 0 {
			return true
		}
	}
	return false
}

// forConsumer returns the tensor to export to a consumer under the copy policy o: t, a tidied
// view of it, or a C-order copy of it (flagged core.FlagIsCopied); and, when it copied, the copy
// itself (the caller reports whether it copied once the export is made). The caller must not
// Release the result (it may be t). A copy that is needed but not allowed fails with
// adapters.ErrCopyRequired.
//
// The copy is the caller's: it exports the result (the export takes a view of its own) and then
// releases the copy, which leaves the export the only holder of its memory, so that the copy is
// released when the consumer calls the deleter (a large copy is a mapped block that goes back to
// memory.NewUninit's cache at once) rather than whenever the garbage collector notices it.
func forConsumer(t *core.Tensor, legacy bool, o adapters.Options) (v, copied *core.Tensor, err error) {
	if t == nil {
		return nil, nil, errs.Errorf(core.ErrNil, "nil tensor")
	}
	if t.Released() {
		return nil, nil, errs.Errorf(core.ErrReleased, "the tensor was released")
	}
	shareable, why := Shareable(t, legacy)
	cp, err := o.Choose(shareable, why)
	if err != nil {
		return nil, nil, err
	}
	if cp {
		c, err := memory.Contiguous(t)
		if err != nil {
			return nil, nil, errs.Errorf(adapters.ErrUnsupported, "%w (copying for export)", err)
		}
		v, err := tidy(c)
		if err != nil {
			c.Release()
			return nil, nil, err
		}
		return v, c, nil
	}
	v, err = tidy(t)
	return v, nil, err
}

// tidy returns a view of t fit for any consumer. Dimensions of size 1 (and every dimension of an
// empty tensor) may carry any stride, and a consumer that checks the sign without looking at the
// size (PyTorch 1.13) must not see a negative one: those strides become C-order strides. An
// empty host tensor with no data address gets a static one: PyTorch 1.13 never calls the
// deleter of a tensor whose data is NULL. Other tensors are returned as they are (the export
// takes a view of its own).
func tidy(t *core.Tensor) (*core.Tensor, error) {
	strides := t.Strides()
	data := t.Data()
	plain := true
	for _, s := range strides {
		if s < 0 {
			plain = false
		}
	}
	if t.Empty() && data == nil && t.Device().DeviceType == core.CPU {
		data, plain = C.pxg_empty_data(), false
	}
	if plain {
		return t, nil
	}
	shape := t.Shape()
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] <= 1 || t.Empty() {
			strides[i] = acc
		}
		acc *= max(shape[i], 1)
	}
	hold, err := t.View() // keeps t's memory for as long as the new tensor is reachable
	if err != nil {
		return nil, err
	}
	return core.WrapKeep(core.Desc{Data: data, ByteOffset: t.ByteOffset(), Device: t.Device(),
		DType: t.DType(), Shape: shape, Strides: strides, Flags: t.Flags()}, hold)
}

// ExportVersioned exports t as a DLPack 1.3 DLManagedTensorVersioned for a Python consumer that
// passed max_version >= (1, 0), following the export policy of Shareable: a tensor that cannot
// be shared is copied (flag IS_COPIED) under the default policy, and refused with
// adapters.ErrCopyRequired under adapters.ZeroCopyOnly (Python's copy=False).
// adapters.AlwaysCopy (copy=True) always copies; adapters.ReportCopy reports what happened.
//
// A shared export carries t's read-only flag and never IS_COPIED (Go still aliases the memory).
// A copy is the export's alone: nothing else in Go holds it, and it is released when the
// consumer calls the deleter. The export holds a view of its own: the caller may Release t at
// once, and the memory stays valid until the consumer calls the deleter.
func ExportVersioned(t *core.Tensor, opts ...adapters.Option) (*core.DLManagedTensorVersioned, error) {
	o := adapters.Apply(opts...)
	v, copied, err := forConsumer(t, false, o)
	if err != nil {
		return nil, fmt.Errorf("pyexchange: export: %w", err)
	}
	m, err := cdlpack.ExportVersioned(v) // takes a view of its own
	if copied != nil {
		copied.Release() // the export's view is the copy's only holder now (or none: err)
	} else if err == nil {
		m.Flags &^= core.FlagIsCopied
	}
	if err != nil {
		return nil, fmt.Errorf("pyexchange: export: %w", err)
	}
	o.Report(copied != nil)
	return m, nil
}

// ExportLegacy is ExportVersioned for consumers of the legacy, unversioned DLManagedTensor:
// NumPy < 2.1 and PyTorch < 2.9, which call __dlpack__() without max_version. A read-only
// tensor is copied (or refused under ZeroCopyOnly), since the capsule cannot carry the flag.
func ExportLegacy(t *core.Tensor, opts ...adapters.Option) (*core.DLManagedTensor, error) {
	o := adapters.Apply(opts...)
	v, copied, err := forConsumer(t, true, o)
	if err != nil {
		return nil, fmt.Errorf("pyexchange: export: %w", err)
	}
	m, err := cdlpack.ExportLegacy(v)
	if copied != nil {
		copied.Release()
	}
	if err != nil {
		return nil, fmt.Errorf("pyexchange: export: %w", err)
	}
	o.Report(copied != nil)
	return m, nil
}
