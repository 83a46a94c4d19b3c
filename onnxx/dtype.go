package onnxx

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// ElementType is an ONNX tensor element type, as ONNX Runtime numbers it
// (ONNXTensorElementDataType; the values of onnx.TensorProto.DataType).
type ElementType int32

// The element types of ONNX; this package passes those that FromDType maps to a core dtype.
const (
	Undefined ElementType = iota
	Float
	Uint8
	Int8
	Uint16
	Int16
	Int32
	Int64
	String
	Bool
	Float16
	Double
	Uint32
	Uint64
	Complex64
	Complex128
	BFloat16
	Float8E4M3FN
	Float8E4M3FNUZ
	Float8E5M2
	Float8E5M2FNUZ
	Uint4
	Int4
)

var elementNames = [...]string{"undefined", "float", "uint8", "int8", "uint16", "int16", "int32",
	"int64", "string", "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128",
	"bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4"}

// String is the element type's ONNX name ("float", "int64", "bfloat16").
func (e ElementType) String() string {
	if e >= 0 && int(e) < len(elementNames) {
		return elementNames[e]
	}
	return fmt.Sprintf("ElementType(%d)", int32(e))
}

// dtypes pairs the core element types with ONNX's.
var dtypes = []struct {
	core core.DLDataType
	onnx ElementType
}{
	{core.Float32, Float},
	{core.Float64, Double},
	{core.Float16, Float16},
	{core.BFloat16, BFloat16},
	{core.Int8, Int8},
	{core.Int16, Int16},
	{core.Int32, Int32},
	{core.Int64, Int64},
	{core.Uint8, Uint8},
	{core.Uint16, Uint16},
	{core.Uint32, Uint32},
	{core.Uint64, Uint64},
	{core.Bool, Bool},
}

// ToDType returns the ONNX element type of a core dtype, or an error wrapping ErrDType that
// names the dtype (complex, which ONNX Runtime 1.31 cannot make tensors of, float8, sub-byte
// types and vector lanes have none here).
func ToDType(dt core.DLDataType) (ElementType, error) {
	for _, p := range dtypes {
		if p.core == dt {
			return p.onnx, nil
		}
	}
	return Undefined, errs.Errorf(ErrDType, "onnxx: %s has no ONNX Runtime element type here", dt)
}

// FromDType returns the core dtype of an ONNX element type, or an error wrapping ErrDType that
// names it (string, complex, float8 and 4-bit types).
func FromDType(e ElementType) (core.DLDataType, error) {
	for _, p := range dtypes {
		if p.onnx == e {
			return p.core, nil
		}
	}
	return core.DLDataType{}, errs.Errorf(ErrDType, "onnxx: ONNX element type %s has no core dtype here", e)
}
