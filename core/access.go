package core

import (
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// check verifies that T matches the tensor's dtype and that the CPU may touch its memory.
func check[T Element](t *Tensor, write bool) error {
	switch {
	case t.Released():
		return ErrReleased
	case !t.HostAccessible():
		return errs.Errorf(ErrNotHost, "core: the tensor is on %s, not in host memory", t.device)
	case DTypeOf[T]() != t.dtype:
		var z T
		return errs.Errorf(ErrTypeMismatch, "core: %T cannot view %s", z, t.dtype)
	case write && t.ReadOnly():
		return ErrReadOnly
	}
	return nil
}

// Elements returns the elements of a C-contiguous host tensor as a slice over its memory, without
// copying: writes to the slice are writes to the tensor. It refuses read-only tensors
// (ErrReadOnly; see ReadOnlyElements), other layouts (ErrNotContiguous; see Span), device memory
// (ErrNotHost) and a T that does not match the dtype (ErrTypeMismatch).
//
// The slice does not keep foreign memory alive: Hold t while the slice is in use, or the memory
// may be released under it.
func Elements[T Element](t *Tensor) ([]T, error) { return data[T](t, true) }

// ReadOnlyElements is Elements for tensors that may be read-only: the caller must not write to the
// slice (memory-mapped files are mapped read-only and a write faults).
func ReadOnlyElements[T Element](t *Tensor) ([]T, error) { return data[T](t, false) }

func data[T Element](t *Tensor, write bool) ([]T, error) {
	if err := check[T](t, write); err != nil {
		return nil, err
	}
	if !t.IsContiguous() {
		return nil, errs.Errorf(ErrNotContiguous, "core: strides %v for shape %v are not C-contiguous", t.strides, t.shape)
	}
	n := t.Len()
	if n == 0 {
		return []T{}, nil
	}
	return unsafe.Slice((*T)(t.data), n), nil
}

// Span returns the memory every element of a host tensor lies in, whatever its strides, and
// the index in that slice of the first element: element (i, j, ...) is
// span[first + i*Stride(0) + j*Stride(1) + ...]. Elements may be repeated (zero strides) or
// reversed (negative strides); memory between them belongs to the tensor's owner and may hold
// other data. It refuses read-only tensors (see ReadOnlySpan).
func Span[T Element](t *Tensor) (span []T, first int64, err error) { return spanOf[T](t, true) }

// ReadOnlySpan is Span for tensors that may be read-only; the caller must not write.
func ReadOnlySpan[T Element](t *Tensor) (span []T, first int64, err error) {
	return spanOf[T](t, false)
}

func spanOf[T Element](t *Tensor, write bool) ([]T, int64, error) {
	if err := check[T](t, write); err != nil {
		return nil, 0, err
	}
	if t.Len() == 0 {
		return []T{}, 0, nil
	}
	lo, hi, _ := extent(t.shape, t.strides) // validated at construction
	var z T
	base := unsafe.Add(t.data, lo*int64(unsafe.Sizeof(z)))
	return unsafe.Slice((*T)(base), hi-lo+1), -lo, nil
}

// Offset returns the position, in elements relative to the first element, of the element at
// index idx, checking every index against the shape.
func (t *Tensor) Offset(idx ...int64) (int64, error) {
	if len(idx) != len(t.shape) {
		return 0, errs.Errorf(ErrArgument, "core: %d indices for ndim = %d", len(idx), len(t.shape))
	}
	var off int64
	for i, x := range idx {
		if x < 0 || x >= t.shape[i] {
			return 0, errs.Errorf(ErrArgument, "core: index %d out of range [0, %d) in dimension %d", x, t.shape[i], i)
		}
		off += x * t.strides[i]
	}
	return off, nil
}

// At returns the element at idx of a host tensor.
func At[T Element](t *Tensor, idx ...int64) (T, error) {
	var z T
	h, err := Hold(t)
	if err != nil {
		return z, err
	}
	defer h.Release()
	span, first, err := ReadOnlySpan[T](t)
	if err != nil {
		return z, err
	}
	off, err := t.Offset(idx...)
	if err != nil {
		return z, err
	}
	return span[first+off], nil
}

// Set stores v at idx of a writable host tensor.
func Set[T Element](t *Tensor, v T, idx ...int64) error {
	h, err := Hold(t)
	if err != nil {
		return err
	}
	defer h.Release()
	span, first, err := Span[T](t)
	if err != nil {
		return err
	}
	off, err := t.Offset(idx...)
	if err != nil {
		return err
	}
	span[first+off] = v
	return nil
}

// Bytes returns the memory of a C-contiguous, writable host tensor as bytes (NumBytes of them),
// without copying.
func (t *Tensor) Bytes() ([]byte, error) { return t.bytes(true) }

// ReadOnlyBytes is Bytes for tensors that may be read-only; the caller must not write.
func (t *Tensor) ReadOnlyBytes() ([]byte, error) { return t.bytes(false) }

func (t *Tensor) bytes(write bool) ([]byte, error) {
	switch {
	case t.Released():
		return nil, ErrReleased
	case !t.HostAccessible():
		return nil, errs.Errorf(ErrNotHost, "core: the tensor is on %s, not in host memory", t.device)
	case write && t.ReadOnly():
		return nil, ErrReadOnly
	case !t.IsContiguous():
		return nil, errs.Errorf(ErrNotContiguous, "core: strides %v for shape %v are not C-contiguous", t.strides, t.shape)
	}
	n := t.NumBytes()
	if n == 0 {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(t.data), n), nil
}
