package onnxx

import (
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	ort "github.com/yalue/onnxruntime_go"
)

var errUnsupported = adapters.ErrUnsupported

// dtypes pairs the core element types with ONNX's.
var dtypes = []struct {
	core core.DLDataType
	onnx ort.TensorElementDataType
}{
	{core.Float32, ort.TensorElementDataTypeFloat},
	{core.Float64, ort.TensorElementDataTypeDouble},
	{core.Float16, ort.TensorElementDataTypeFloat16},
	{core.BFloat16, ort.TensorElementDataTypeBFloat16},
	{core.Int8, ort.TensorElementDataTypeInt8},
	{core.Int16, ort.TensorElementDataTypeInt16},
	{core.Int32, ort.TensorElementDataTypeInt32},
	{core.Int64, ort.TensorElementDataTypeInt64},
	{core.Uint8, ort.TensorElementDataTypeUint8},
	{core.Uint16, ort.TensorElementDataTypeUint16},
	{core.Uint32, ort.TensorElementDataTypeUint32},
	{core.Uint64, ort.TensorElementDataTypeUint64},
	{core.Bool, ort.TensorElementDataTypeBool},
}

// ONNXType returns the ONNX element type of a core dtype, or ErrDType.
func ONNXType(dt core.DLDataType) (ort.TensorElementDataType, error) {
	for _, p := range dtypes {
		if p.core == dt {
			return p.onnx, nil
		}
	}
	return 0, fmt.Errorf("%w: %s has no ONNX Runtime equivalent here", ErrDType, dt)
}

// DType returns the core dtype of an ONNX element type, or ErrDType.
func DType(t ort.TensorElementDataType) (core.DLDataType, error) {
	for _, p := range dtypes {
		if p.onnx == t {
			return p.core, nil
		}
	}
	return core.DLDataType{}, fmt.Errorf("%w: ONNX element type %s", ErrDType, t)
}
