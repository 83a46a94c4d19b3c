package core

import (
	"fmt"
	"unsafe"
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
	dt := DTypeOf[T]()
	if shape == nil {
		shape = []int64{}
	}
	d := Desc{Device: CPUDevice, DType: dt, Shape: shape, Strides: strides}
	if len(data) > 0 {
		d.Data = unsafe.Pointer(unsafe.SliceData(data))
	}
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		st := strides
		if st == nil {
			st = cStrides(shape)
		} else if len(st) != len(shape) {
			return nil, fmt.Errorf("%w: %d strides for ndim = %d", ErrStrides, len(st), len(shape))
		}
		lo, hi, err := extent(shape, st)
		if err != nil {
			return nil, err
		}
		if offset < 0 || offset+lo < 0 || offset > int64(len(data))-1 || hi > int64(len(data))-1-offset {
			return nil, fmt.Errorf("%w: offset %d with shape %v, strides %v reaches [%d, %d] of a slice of %d",
				ErrBounds, offset, shape, st, offset+lo, offset+hi, len(data))
		}
		d.Data = unsafe.Add(d.Data, offset*int64(dt.Size()))
	}
	return fromDesc(d, nil)
}

// New allocates a zeroed C-order tensor in Go memory, its data 64-byte aligned.
func New(dtype DLDataType, shape ...int64) (*Tensor, error) {
	nbytes, err := allocSize(dtype, shape)
	if err != nil {
		return nil, err
	}
	if t := newCompact(dtype, shape, nbytes); t != nil {
		return t, nil
	}
	// more dimensions than newCompact keeps inline (shape is copied so that the caller's
	// variadic slice does not escape on the common path)
	d := Desc{Device: CPUDevice, DType: dtype, Shape: append([]int64(nil), shape...)}
	if nbytes > 0 {
		d.Data = alignedAlloc(nbytes)
	}
	return fromDesc(d, nil)
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
