package core

import (
	"fmt"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// FromSlice makes a C-order tensor over data, without copying: writes through either are seen by
// the other. With no shape it is 1-D of len(data); otherwise the shape's product must equal
// len(data). The tensor keeps data alive.
func FromSlice[T Element](data []T, shape ...int64) (*Tensor, error) {
	if len(shape) == 0 {
		shape = []int64{int64(len(data))}
	}
	return FromSliceStrided(data, 0, shape, nil)
}

// MustFromSlice is FromSlice that panics on error, for literals in tests and examples.
func MustFromSlice[T Element](data []T, shape ...int64) *Tensor {
	t, err := FromSlice(data, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Scalar makes a 0-d tensor holding v.
func Scalar[T Element](v T) *Tensor {
	t, _ := FromSliceStrided([]T{v}, 0, nil, nil)
	return t
}

// FromSliceStrided makes a tensor over data, without copying, whose first element is
// data[offset] and whose strides (in elements; nil for C order) may be negative or zero. Every
// element must lie inside data; shape may be empty for a 0-d tensor.
func FromSliceStrided[T Element](data []T, offset int64, shape, strides []int64) (*Tensor, error) {
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if strides != nil && len(strides) != len(shape) {
		return nil, errs.Errorf(ErrStrides, "core: %d strides for ndim = %d", len(strides), len(shape))
	}
	if len(shape) > MaxNdim {
		return nil, errNdim(len(shape))
	}
	t, s, st := newMeta(len(shape))
	copy(s, shape)
	if strides == nil {
		fillCStrides(st, s)
	} else {
		copy(st, strides)
	}
	if n > 0 {
		lo, hi, err := extent(s, st)
		if err != nil {
			return nil, err
		}
		if offset < 0 || offset+lo < 0 || offset > int64(len(data))-1 || hi > int64(len(data))-1-offset {
			return nil, errs.Errorf(ErrBounds, "core: offset %d with shape %v, strides %v reaches [%d, %d] of a slice of %d", offset, s, st, offset+lo, offset+hi, len(data))
		}
		t.data = unsafe.Pointer(&data[offset])
	} else if len(data) > 0 {
		t.data = unsafe.Pointer(unsafe.SliceData(data)) // an empty view still points into data
	}
	t.device, t.dtype, t.shape, t.strides = CPUDevice, DTypeOf[T](), s, st
	return t, nil
}

// New allocates a zeroed C-order tensor in Go memory, its data 64-byte aligned.
func New(dtype DLDataType, shape ...int64) (*Tensor, error) {
	if len(shape) > MaxNdim {
		return nil, errNdim(len(shape))
	}
	nbytes, err := allocSize(dtype, shape)
	if err != nil {
		return nil, err
	}
	if err := FitsMemory(nbytes); err != nil {
		return nil, fmt.Errorf("%w (%v of %s)", err, shape, dtype)
	}
	return newCompact(dtype, shape, nbytes), nil
}

// MustNew is New that panics on error.
func MustNew(dtype DLDataType, shape ...int64) *Tensor {
	t, err := New(dtype, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Alignment is the byte alignment of memory that New allocates.
const Alignment = 64

// maxAlloc bounds what New asks of the Go allocator (whose own limit on 64-bit platforms is 2^48
// bytes; asking for more panics instead of failing).
const maxAlloc = 1<<47 - Alignment

// alignedAlloc returns n zeroed bytes of Go memory at a 64-byte boundary. The memory holds no Go
// pointers, so the collector does not scan it.
func alignedAlloc(n int64) unsafe.Pointer {
	buf := make([]byte, n+Alignment-1)
	return alignUp(unsafe.Pointer(unsafe.SliceData(buf)))
}
