package gorgoniax

import (
	"reflect"
	"strconv"
	"unsafe"

	"github.com/x448/float16"
	"gorgonia.org/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// Float16 is the Gorgonia dtype of IEEE 754 half-precision elements (float16.Float16, the
// element type core uses for DLPack float16). It is registered with Gorgonia when this package
// is loaded. Gorgonia can store, view, transpose and copy such tensors; its arithmetic kernels do
// not cover them.
var Float16 = tensor.Dtype{Type: reflect.TypeOf(float16.Float16(0))}

// BFloat16 is the Gorgonia dtype of bfloat16 elements (core.BF16), registered like Float16.
var BFloat16 = tensor.Dtype{Type: reflect.TypeOf(core.BF16(0))}

func init() {
	tensor.Register(Float16)
	tensor.Register(BFloat16)
}

// dtypes pairs every Gorgonia dtype this package converts with its DLPack type. Gorgonia's Int
// and Uint are the platform's int and uint, 64 bits wide on 64-bit platforms.
var dtypes = []struct {
	g tensor.Dtype
	d core.DLDataType
}{
	{tensor.Bool, core.Bool},
	{tensor.Int8, core.Int8}, {tensor.Int16, core.Int16}, {tensor.Int32, core.Int32}, {tensor.Int64, core.Int64},
	{tensor.Uint8, core.Uint8}, {tensor.Uint16, core.Uint16}, {tensor.Uint32, core.Uint32}, {tensor.Uint64, core.Uint64},
	{tensor.Float32, core.Float32}, {tensor.Float64, core.Float64},
	{tensor.Complex64, core.Complex64}, {tensor.Complex128, core.Complex128},
	{Float16, core.Float16}, {BFloat16, core.BFloat16},
	{tensor.Int, core.DLDataType{Code: core.CodeInt, Bits: strconv.IntSize, Lanes: 1}},
	{tensor.Uint, core.DLDataType{Code: core.CodeUInt, Bits: strconv.IntSize, Lanes: 1}},
}

// FromDType returns the DLPack element type of a Gorgonia dtype. Int and Uint map to the
// DLPack integers of the platform's int size (int64 and uint64 on 64-bit platforms). String,
// Uintptr, UnsafePointer and unregistered dtypes have none (adapters.ErrUnsupported).
func FromDType(dt tensor.Dtype) (core.DLDataType, error) {
	for _, p := range dtypes {
		if p.g == dt {
			return p.d, nil
		}
	}
	return core.DLDataType{}, errs.Errorf(adapters.ErrUnsupported, "gorgoniax: Gorgonia dtype %v has no DLPack type", dt)
}

// ToDType returns the Gorgonia dtype for a DLPack element type: the sized Go types (int64 for
// DLPack int64, never Int), Float16 and BFloat16 for the half types. Types Gorgonia has no
// element type for (float8, sub-byte, opaque handles, complex32, several lanes) are refused with
// adapters.ErrUnsupported.
func ToDType(dt core.DLDataType) (tensor.Dtype, error) {
	for _, p := range dtypes[:15] { // the sized types come first; Int and Uint are aliases
		if p.d == dt {
			return p.g, nil
		}
	}
	return tensor.Dtype{}, errs.Errorf(adapters.ErrUnsupported, "gorgoniax: DLPack dtype %s has no Gorgonia dtype", dt)
}

// backing returns a Go slice of Gorgonia dtype dt and length n over memory at p (or an empty
// slice when n is 0), for tensor.WithBacking.
func backing(dt tensor.Dtype, p unsafe.Pointer, n int) any {
	switch dt {
	case tensor.Bool:
		return sliceAt[bool](p, n)
	case tensor.Int8:
		return sliceAt[int8](p, n)
	case tensor.Int16:
		return sliceAt[int16](p, n)
	case tensor.Int32:
		return sliceAt[int32](p, n)
	case tensor.Int64:
		return sliceAt[int64](p, n)
	case tensor.Uint8:
		return sliceAt[uint8](p, n)
	case tensor.Uint16:
		return sliceAt[uint16](p, n)
	case tensor.Uint32:
		return sliceAt[uint32](p, n)
	case tensor.Uint64:
		return sliceAt[uint64](p, n)
	case tensor.Float32:
		return sliceAt[float32](p, n)
	case tensor.Float64:
		return sliceAt[float64](p, n)
	case tensor.Complex64:
		return sliceAt[complex64](p, n)
	case tensor.Complex128:
		return sliceAt[complex128](p, n)
	case Float16:
		return sliceAt[float16.Float16](p, n)
	case BFloat16:
		return sliceAt[core.BF16](p, n)
	}
	panic("gorgoniax: backing for unmapped dtype " + dt.String()) // unreachable: ToDType vets dt
}

func sliceAt[T any](p unsafe.Pointer, n int) []T {
	if n == 0 || p == nil {
		return []T{}
	}
	return unsafe.Slice((*T)(p), n)
}
