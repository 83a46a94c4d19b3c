package core

import (
	"sync"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// ValidateDLTensor reads a DLTensor that came from elsewhere, treating every field as untrusted:
// ndim is checked before shape and strides are read, sizes and offsets are checked for overflow,
// and NULL strides (legacy producers) become C-order strides. Data is never dereferenced. The
// result is a Desc in Go memory, safe to keep after the descriptor is gone.
func ValidateDLTensor(dl *DLTensor) (Desc, error) {
	d, err := DescOf(dl)
	if err != nil {
		return Desc{}, err
	}
	return ValidateDesc(d)
}

// DescOf reads a DLTensor's fields into a Desc, reading shape and strides only after checking
// ndim and the shape pointer; the rest of the validation is ValidateDesc's, which Wrap and
// WrapExplicit run. The Desc's Shape and Strides are dl's own arrays, not copies: use it while dl
// is alive (Wrap, WrapExplicit and ValidateDesc copy them).
func DescOf(dl *DLTensor) (Desc, error) {
	var d Desc
	if err := descOf(dl, &d); err != nil {
		return Desc{}, err
	}
	return d, nil
}

// descOf is DescOf into *d, which it sets only on success.
func descOf(dl *DLTensor, d *Desc) error {
	if dl == nil {
		return errs.Errorf(ErrNil, "core: the DLTensor is nil")
	}
	if dl.Ndim < 0 || dl.Ndim > MaxNdim {
		return errs.Errorf(ErrNdim, "core: ndim = %d is outside [0, %d]", dl.Ndim, MaxNdim)
	}
	shape, strides := []int64{}, []int64(nil)
	if n := int(dl.Ndim); n > 0 {
		if dl.Shape == nil {
			return errs.Errorf(ErrShape, "core: shape is NULL for ndim = %d", n)
		}
		shape = unsafe.Slice(dl.Shape, n)
		if dl.Strides != nil {
			strides = unsafe.Slice(dl.Strides, n)
		}
	}
	d.Data, d.ByteOffset, d.Device, d.DType = dl.Data, dl.ByteOffset, dl.Device, dl.Dtype
	d.Shape, d.Strides, d.Flags = shape, strides, 0
	return nil
}

// ImportVersioned makes a Tensor of a DLManagedTensorVersioned handed over by a producer, without
// copying; the tensor now owns it. A managed tensor that a live import already owns is refused
// (ErrImported), and its deleter is not run: that would free it under the first import. deleter must call the producer's deleter on m (the C bridge in
// core/cdlpack does); it may be nil when m.Deleter is NULL.
//
// deleter runs exactly once: when the last holder of the tensor lets go (see Tensor.Release),
// or before ImportVersioned returns an error. A tensor of another major version is refused
// (ErrVersion) after reading nothing but the version. FlagReadOnly makes the tensor read-only.
func ImportVersioned(m *DLManagedTensorVersioned, deleter func()) (*Tensor, error) {
	if m == nil {
		return nil, errs.Errorf(ErrNil, "core: the DLManagedTensorVersioned is nil")
	}
	deleter, err := claim(unsafe.Pointer(m), deleter)
	if err != nil {
		return nil, err
	}
	if v := m.Version; v.Major != Version.Major {
		// v is a copy: the deleter may free m.
		if deleter != nil {
			deleter()
		}
		return nil, errs.Errorf(ErrVersion, "core: DLPack version %d.%d is unsupported, this package speaks %d.x",
			v.Major, v.Minor, Version.Major)
	}
	return importDL(&m.DLTensor, m.Flags, deleter)
}

// ImportLegacy is ImportVersioned for the unversioned DLManagedTensor of DLPack < 1.0 (what
// NumPy < 2.1 and PyTorch < 2.9 produce). It carries no flags, so the tensor is writable.
func ImportLegacy(m *DLManagedTensor, deleter func()) (*Tensor, error) {
	if m == nil {
		return nil, errs.Errorf(ErrNil, "core: the DLManagedTensor is nil")
	}
	deleter, err := claim(unsafe.Pointer(m), deleter)
	if err != nil {
		return nil, err
	}
	return importDL(&m.DLTensor, 0, deleter)
}

// imported holds the addresses of the managed tensors imported and not yet deleted: a producer
// hands a managed tensor over once, so a second import of one that is still held would run its
// deleter twice.
var imported sync.Map // unsafe.Pointer → struct{}

// claim records that m is now owned by an import, or refuses it (ErrImported, without running
// the deleter: the first import still owns it) when a live import owns it already. The returned
// deleter forgets m before calling the producer's deleter, after which the producer may reuse
// the address.
func claim(m unsafe.Pointer, deleter func()) (func(), error) {
	if _, dup := imported.LoadOrStore(m, struct{}{}); dup {
		return nil, errs.Errorf(ErrImported, "core: managed tensor %p is already imported (release the earlier import first)", m)
	}
	return func() {
		imported.Delete(m)
		if deleter != nil {
			deleter()
		}
	}, nil
}

func importDL(dl *DLTensor, flags Flags, deleter func()) (*Tensor, error) {
	d, err := DescOf(dl) // Wrap validates the rest
	if err != nil {
		if deleter != nil {
			deleter()
		}
		return nil, err
	}
	d.Flags = flags
	if deleter == nil {
		// Nothing to free, but the tensor still counts as foreign memory with a no-op release,
		// so that its lifetime is accounted like any other import.
		deleter = func() {}
	}
	return Wrap(d, deleter)
}
