package arrowx

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// FromDType maps an Arrow fixed-width primitive type to its DLPack element type: the signed and
// unsigned integers of 8 to 64 bits, float16, float32, float64, and boolean (core.Bool, one byte
// per element in a tensor, one bit in Arrow: arrays of it are always copied), and Arrow's
// canonical arrow.bool8 extension type (one byte per element as in a tensor: arrays of it are
// shared when every byte is 0 or 1, else copied with every other byte read as true). Other Arrow types
// (temporal, decimal, nested, variable-width) fail with an error wrapping adapters.ErrUnsupported
// that names the type.
func FromDType(dt arrow.DataType) (core.DLDataType, error) {
	if dt == nil {
		return core.DLDataType{}, errs.Errorf(adapters.ErrUnsupported, "arrowx: nil Arrow data type")
	}
	switch dt.ID() {
	case arrow.INT8:
		return core.Int8, nil
	case arrow.INT16:
		return core.Int16, nil
	case arrow.INT32:
		return core.Int32, nil
	case arrow.INT64:
		return core.Int64, nil
	case arrow.UINT8:
		return core.Uint8, nil
	case arrow.UINT16:
		return core.Uint16, nil
	case arrow.UINT32:
		return core.Uint32, nil
	case arrow.UINT64:
		return core.Uint64, nil
	case arrow.FLOAT16:
		return core.Float16, nil
	case arrow.FLOAT32:
		return core.Float32, nil
	case arrow.FLOAT64:
		return core.Float64, nil
	case arrow.BOOL:
		return core.Bool, nil
	}
	if isBool8(dt) {
		return core.Bool, nil
	}
	return core.DLDataType{}, errs.Errorf(adapters.ErrUnsupported, "arrowx: Arrow type %s has no DLPack element type", typeString(dt))
}

// typeString is dt's name for a message, cut at 200 bytes: a type read from an IPC stream or
// a file may have names of any length.
func typeString(dt arrow.DataType) string {
	s := dt.String()
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// isBool8 reports whether dt is Arrow's canonical arrow.bool8 (one byte per bool, 0 false and
// any other value true), which arrow-go registers as extensions.Bool8Type.
func isBool8(dt arrow.DataType) bool {
	_, ok := dt.(*extensions.Bool8Type)
	return ok
}

// ToDType maps a DLPack element type to the Arrow type of the same values: the inverse of
// FromDType. bfloat16, complex, float8, sub-byte and vector types have no Arrow primitive type and
// fail with an error wrapping adapters.ErrUnsupported; a malformed dtype fails with core.ErrDType.
func ToDType(dt core.DLDataType) (arrow.DataType, error) {
	if err := dt.Validate(); err != nil {
		return nil, wrapf(err, "")
	}
	switch dt {
	case core.Int8:
		return arrow.PrimitiveTypes.Int8, nil
	case core.Int16:
		return arrow.PrimitiveTypes.Int16, nil
	case core.Int32:
		return arrow.PrimitiveTypes.Int32, nil
	case core.Int64:
		return arrow.PrimitiveTypes.Int64, nil
	case core.Uint8:
		return arrow.PrimitiveTypes.Uint8, nil
	case core.Uint16:
		return arrow.PrimitiveTypes.Uint16, nil
	case core.Uint32:
		return arrow.PrimitiveTypes.Uint32, nil
	case core.Uint64:
		return arrow.PrimitiveTypes.Uint64, nil
	case core.Float16:
		return arrow.FixedWidthTypes.Float16, nil
	case core.Float32:
		return arrow.PrimitiveTypes.Float32, nil
	case core.Float64:
		return arrow.PrimitiveTypes.Float64, nil
	case core.Bool:
		return arrow.FixedWidthTypes.Boolean, nil
	}
	return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: dtype %s has no Arrow primitive type", dt)
}
