package core

import "github.com/x448/float16"

// Non-generic twins of FromSlice, Elements and ReadOnlyElements, one set per element type, for
// one reader: the Go kernel of Jupyter (gophernotes, whose interpreter gomacro cannot instantiate
// generic functions), so that a notebook can make a tensor over a slice and read its elements
// (ReadOnlyFloat32s and its siblings for read-only tensors such as memory-mapped files). Go code
// calls the generic forms. Each twin behaves exactly like its generic form; this file is the only
// place they live, and a new element type gets its set here.

// FromBools is FromSlice for []bool: a C-order bool tensor over data, without copying.
func FromBools(data []bool, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Bools is Elements for bool elements: the tensor's memory as a []bool, without copying.
func (t *Tensor) Bools() ([]bool, error) { return Elements[bool](t) }

// ReadOnlyBools is ReadOnlyElements for bool elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyBools() ([]bool, error) { return ReadOnlyElements[bool](t) }

// FromInt8s is FromSlice for []int8: a C-order int8 tensor over data, without copying.
func FromInt8s(data []int8, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Int8s is Elements for int8 elements: the tensor's memory as a []int8, without copying.
func (t *Tensor) Int8s() ([]int8, error) { return Elements[int8](t) }

// ReadOnlyInt8s is ReadOnlyElements for int8 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyInt8s() ([]int8, error) { return ReadOnlyElements[int8](t) }

// FromInt16s is FromSlice for []int16: a C-order int16 tensor over data, without copying.
func FromInt16s(data []int16, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Int16s is Elements for int16 elements: the tensor's memory as a []int16, without copying.
func (t *Tensor) Int16s() ([]int16, error) { return Elements[int16](t) }

// ReadOnlyInt16s is ReadOnlyElements for int16 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyInt16s() ([]int16, error) { return ReadOnlyElements[int16](t) }

// FromInt32s is FromSlice for []int32: a C-order int32 tensor over data, without copying.
func FromInt32s(data []int32, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Int32s is Elements for int32 elements: the tensor's memory as a []int32, without copying.
func (t *Tensor) Int32s() ([]int32, error) { return Elements[int32](t) }

// ReadOnlyInt32s is ReadOnlyElements for int32 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyInt32s() ([]int32, error) { return ReadOnlyElements[int32](t) }

// FromInt64s is FromSlice for []int64: a C-order int64 tensor over data, without copying.
func FromInt64s(data []int64, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Int64s is Elements for int64 elements: the tensor's memory as a []int64, without copying.
func (t *Tensor) Int64s() ([]int64, error) { return Elements[int64](t) }

// ReadOnlyInt64s is ReadOnlyElements for int64 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyInt64s() ([]int64, error) { return ReadOnlyElements[int64](t) }

// FromUint8s is FromSlice for []uint8: a C-order uint8 tensor over data, without copying.
func FromUint8s(data []uint8, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Uint8s is Elements for uint8 elements: the tensor's memory as a []uint8, without copying.
func (t *Tensor) Uint8s() ([]uint8, error) { return Elements[uint8](t) }

// ReadOnlyUint8s is ReadOnlyElements for uint8 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyUint8s() ([]uint8, error) { return ReadOnlyElements[uint8](t) }

// FromUint16s is FromSlice for []uint16: a C-order uint16 tensor over data, without copying.
func FromUint16s(data []uint16, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Uint16s is Elements for uint16 elements: the tensor's memory as a []uint16, without copying.
func (t *Tensor) Uint16s() ([]uint16, error) { return Elements[uint16](t) }

// ReadOnlyUint16s is ReadOnlyElements for uint16 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyUint16s() ([]uint16, error) { return ReadOnlyElements[uint16](t) }

// FromUint32s is FromSlice for []uint32: a C-order uint32 tensor over data, without copying.
func FromUint32s(data []uint32, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Uint32s is Elements for uint32 elements: the tensor's memory as a []uint32, without copying.
func (t *Tensor) Uint32s() ([]uint32, error) { return Elements[uint32](t) }

// ReadOnlyUint32s is ReadOnlyElements for uint32 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyUint32s() ([]uint32, error) { return ReadOnlyElements[uint32](t) }

// FromUint64s is FromSlice for []uint64: a C-order uint64 tensor over data, without copying.
func FromUint64s(data []uint64, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Uint64s is Elements for uint64 elements: the tensor's memory as a []uint64, without copying.
func (t *Tensor) Uint64s() ([]uint64, error) { return Elements[uint64](t) }

// ReadOnlyUint64s is ReadOnlyElements for uint64 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyUint64s() ([]uint64, error) { return ReadOnlyElements[uint64](t) }

// FromFloat16s is FromSlice for []float16.Float16: a C-order float16 tensor over data, without copying.
func FromFloat16s(data []float16.Float16, shape ...int64) (*Tensor, error) {
	return FromSlice(data, shape...)
}

// Float16s is Elements for float16.Float16 elements: the tensor's memory as a []float16.Float16, without copying.
func (t *Tensor) Float16s() ([]float16.Float16, error) { return Elements[float16.Float16](t) }

// ReadOnlyFloat16s is ReadOnlyElements for float16.Float16 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyFloat16s() ([]float16.Float16, error) {
	return ReadOnlyElements[float16.Float16](t)
}

// FromBF16s is FromSlice for []BF16: a C-order bfloat16 tensor over data, without copying.
func FromBF16s(data []BF16, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// BF16s is Elements for BF16 elements: the tensor's memory as a []BF16, without copying.
func (t *Tensor) BF16s() ([]BF16, error) { return Elements[BF16](t) }

// ReadOnlyBF16s is ReadOnlyElements for BF16 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyBF16s() ([]BF16, error) { return ReadOnlyElements[BF16](t) }

// FromFloat32s is FromSlice for []float32: a C-order float32 tensor over data, without copying.
func FromFloat32s(data []float32, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Float32s is Elements for float32 elements: the tensor's memory as a []float32, without copying.
func (t *Tensor) Float32s() ([]float32, error) { return Elements[float32](t) }

// ReadOnlyFloat32s is ReadOnlyElements for float32 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyFloat32s() ([]float32, error) { return ReadOnlyElements[float32](t) }

// FromFloat64s is FromSlice for []float64: a C-order float64 tensor over data, without copying.
func FromFloat64s(data []float64, shape ...int64) (*Tensor, error) { return FromSlice(data, shape...) }

// Float64s is Elements for float64 elements: the tensor's memory as a []float64, without copying.
func (t *Tensor) Float64s() ([]float64, error) { return Elements[float64](t) }

// ReadOnlyFloat64s is ReadOnlyElements for float64 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyFloat64s() ([]float64, error) { return ReadOnlyElements[float64](t) }

// FromComplex64s is FromSlice for []complex64: a C-order complex64 tensor over data, without copying.
func FromComplex64s(data []complex64, shape ...int64) (*Tensor, error) {
	return FromSlice(data, shape...)
}

// Complex64s is Elements for complex64 elements: the tensor's memory as a []complex64, without copying.
func (t *Tensor) Complex64s() ([]complex64, error) { return Elements[complex64](t) }

// ReadOnlyComplex64s is ReadOnlyElements for complex64 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyComplex64s() ([]complex64, error) { return ReadOnlyElements[complex64](t) }

// FromComplex128s is FromSlice for []complex128: a C-order complex128 tensor over data, without copying.
func FromComplex128s(data []complex128, shape ...int64) (*Tensor, error) {
	return FromSlice(data, shape...)
}

// Complex128s is Elements for complex128 elements: the tensor's memory as a []complex128, without copying.
func (t *Tensor) Complex128s() ([]complex128, error) { return Elements[complex128](t) }

// ReadOnlyComplex128s is ReadOnlyElements for complex128 elements: the memory of a tensor that may be
// read-only (a memory-mapped file), without copying; the caller must not write to it.
func (t *Tensor) ReadOnlyComplex128s() ([]complex128, error) { return ReadOnlyElements[complex128](t) }
