package core

import (
	"math"
	"strconv"

	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// DataTypeCode is DLDataTypeCode: the kind of number an element holds.
type DataTypeCode uint8

// The type codes of dlpack.h v1.3, and CodeBcomplex, which DLPack added after the v1.3 tag
// without changing the ABI (the minor version is still 3).
const (
	CodeInt               DataTypeCode = 0  // kDLInt: signed two's-complement integer.
	CodeUInt              DataTypeCode = 1  // kDLUInt: unsigned integer.
	CodeFloat             DataTypeCode = 2  // kDLFloat: IEEE 754 binary float (16, 32, 64 bits).
	CodeOpaqueHandle      DataTypeCode = 3  // kDLOpaqueHandle: an opaque pointer-sized handle.
	CodeBfloat            DataTypeCode = 4  // kDLBfloat: bfloat16.
	CodeComplex           DataTypeCode = 5  // kDLComplex: two floats (real, imaginary); Bits covers both.
	CodeBool              DataTypeCode = 6  // kDLBool: boolean, 8 bits per element.
	CodeFloat8E3M4        DataTypeCode = 7  // kDLFloat8_e3m4.
	CodeFloat8E4M3        DataTypeCode = 8  // kDLFloat8_e4m3.
	CodeFloat8E4M3B11FNUZ DataTypeCode = 9  // kDLFloat8_e4m3b11fnuz.
	CodeFloat8E4M3FN      DataTypeCode = 10 // kDLFloat8_e4m3fn.
	CodeFloat8E4M3FNUZ    DataTypeCode = 11 // kDLFloat8_e4m3fnuz.
	CodeFloat8E5M2        DataTypeCode = 12 // kDLFloat8_e5m2.
	CodeFloat8E5M2FNUZ    DataTypeCode = 13 // kDLFloat8_e5m2fnuz.
	CodeFloat8E8M0FNU     DataTypeCode = 14 // kDLFloat8_e8m0fnu.
	CodeFloat6E2M3FN      DataTypeCode = 15 // kDLFloat6_e2m3fn (6 bits).
	CodeFloat6E3M2FN      DataTypeCode = 16 // kDLFloat6_e3m2fn (6 bits).
	CodeFloat4E2M1FN      DataTypeCode = 17 // kDLFloat4_e2m1fn (4 bits).
	CodeBcomplex          DataTypeCode = 18 // kDLBcomplex: two bfloat16 (real, imaginary); 32 bits (after v1.3).
)

var codeNames = [...]string{
	CodeInt: "int", CodeUInt: "uint", CodeFloat: "float", CodeOpaqueHandle: "handle",
	CodeBfloat: "bfloat", CodeComplex: "complex", CodeBool: "bool",
	CodeFloat8E3M4: "float8_e3m4", CodeFloat8E4M3: "float8_e4m3",
	CodeFloat8E4M3B11FNUZ: "float8_e4m3b11fnuz", CodeFloat8E4M3FN: "float8_e4m3fn",
	CodeFloat8E4M3FNUZ: "float8_e4m3fnuz", CodeFloat8E5M2: "float8_e5m2",
	CodeFloat8E5M2FNUZ: "float8_e5m2fnuz", CodeFloat8E8M0FNU: "float8_e8m0fnu",
	CodeFloat6E2M3FN: "float6_e2m3fn", CodeFloat6E3M2FN: "float6_e3m2fn",
	CodeFloat4E2M1FN: "float4_e2m1fn", CodeBcomplex: "bcomplex",
}

// DataTypeCodes lists every type code DLPack defines (dlpack.h v1.3 and CodeBcomplex, added
// after it), in numeric order.
func DataTypeCodes() []DataTypeCode {
	out := make([]DataTypeCode, len(codeNames))
	for i := range out {
		out[i] = DataTypeCode(i)
	}
	return out
}

// Known reports whether c is one of the type codes DLPack defines (see DataTypeCodes).
func (c DataTypeCode) Known() bool { return int(c) < len(codeNames) }

// String returns the code's name ("int", "float", "float8_e4m3fn", ...), or "code(N)".
func (c DataTypeCode) String() string {
	if c.Known() {
		return codeNames[c]
	}
	return "code(" + strconv.Itoa(int(c)) + ")"
}

// The common element types.
var (
	Bool       = DLDataType{CodeBool, 8, 1}
	Int8       = DLDataType{CodeInt, 8, 1}
	Int16      = DLDataType{CodeInt, 16, 1}
	Int32      = DLDataType{CodeInt, 32, 1}
	Int64      = DLDataType{CodeInt, 64, 1}
	Uint8      = DLDataType{CodeUInt, 8, 1}
	Uint16     = DLDataType{CodeUInt, 16, 1}
	Uint32     = DLDataType{CodeUInt, 32, 1}
	Uint64     = DLDataType{CodeUInt, 64, 1}
	Float16    = DLDataType{CodeFloat, 16, 1}
	Float32    = DLDataType{CodeFloat, 32, 1}
	Float64    = DLDataType{CodeFloat, 64, 1}
	BFloat16   = DLDataType{CodeBfloat, 16, 1}
	BComplex32 = DLDataType{CodeBcomplex, 32, 1} // a complex of two bfloat16 (kDLBcomplex)
	Complex64  = DLDataType{CodeComplex, 64, 1}
	Complex128 = DLDataType{CodeComplex, 128, 1}
)

// String names the type the way NumPy and PyTorch do ("float32", "bfloat16", "complex64",
// "bool", "float8_e4m3fn"; "bcomplex32" for two bfloat16, which neither has), with "xN" appended
// for N lanes.
func (d DLDataType) String() string {
	var s string
	switch {
	case d.Code == CodeBool && d.Bits == 8:
		s = "bool"
	case d.Code == CodeBfloat && d.Bits == 16:
		s = "bfloat16"
	case d.Code >= CodeFloat8E3M4 && d.Code <= CodeFloat4E2M1FN:
		s = d.Code.String()
	default:
		s = d.Code.String() + strconv.Itoa(int(d.Bits))
	}
	if d.Lanes != 1 {
		s += "x" + strconv.Itoa(int(d.Lanes))
	}
	return s
}

// Validate reports whether d is a well-formed DLPack element type: a known code, lanes ≥ 1, and
// a bit width that code allows.
func (d DLDataType) Validate() error {
	if !d.Code.Known() {
		return errs.Errorf(ErrDType, "core: dtype.code = %d is not a DLPack type code", d.Code)
	}
	if d.Lanes == 0 {
		return errs.Errorf(ErrDType, "core: dtype.lanes = 0 in %s", d.Code)
	}
	ok := false
	switch d.Code {
	case CodeInt, CodeUInt:
		ok = d.Bits == 1 || d.Bits == 4 || d.Bits == 8 || d.Bits == 16 || d.Bits == 32 || d.Bits == 64
	case CodeFloat:
		ok = d.Bits == 16 || d.Bits == 32 || d.Bits == 64
	case CodeOpaqueHandle:
		ok = d.Bits == 64 || d.Bits == 32
	case CodeBfloat:
		ok = d.Bits == 16
	case CodeComplex:
		ok = d.Bits == 32 || d.Bits == 64 || d.Bits == 128
	case CodeBcomplex:
		ok = d.Bits == 32
	case CodeBool:
		ok = d.Bits == 8
	case CodeFloat6E2M3FN, CodeFloat6E3M2FN:
		ok = d.Bits == 6
	case CodeFloat4E2M1FN:
		ok = d.Bits == 4
	default: // the float8 family
		ok = d.Bits == 8
	}
	if !ok {
		return errs.Errorf(ErrDType, "core: dtype.bits = %d is not valid for %s", d.Bits, d.Code)
	}
	return nil
}

// SubByte reports whether one element (all lanes) takes less than a byte, as int4 or float4 do.
func (d DLDataType) SubByte() bool {
	return int(d.Bits)*int(d.Lanes) < 8 || int(d.Bits)*int(d.Lanes)%8 != 0
}

// Size returns the bytes one element (all lanes) occupies, or 0 for sub-byte types, which have
// no whole-byte element size.
func (d DLDataType) Size() int {
	if d.SubByte() {
		return 0
	}
	return int(d.Bits) * int(d.Lanes) / 8
}

// BF16 is a bfloat16 number: the upper 16 bits of an IEEE 754 float32.
type BF16 uint16

// BF16FromFloat32 converts f to the nearest bfloat16 (ties to even); NaN stays NaN.
func BF16FromFloat32(f float32) BF16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 { // NaN: keep it quiet and keep the sign
		return BF16(u>>16 | 0x0040)
	}
	u += 0x7fff + (u>>16)&1
	return BF16(u >> 16)
}

// Float32 returns b as a float32 (exact).
func (b BF16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// String formats b as its float32 value.
func (b BF16) String() string {
	return strconv.FormatFloat(float64(b.Float32()), 'g', -1, 32)
}

// Element is the set of Go types that a tensor's elements can be viewed as. int and uint map to
// the 64-bit DLPack types on 64-bit platforms.
type Element interface {
	bool | int8 | int16 | int32 | int64 | int | uint8 | uint16 | uint32 | uint64 | uint |
		float32 | float64 | complex64 | complex128 | float16.Float16 | BF16
}

// DTypeOf returns the DLPack element type that holds values of the Go type T.
func DTypeOf[T Element]() DLDataType {
	var z T
	switch any(z).(type) {
	case bool:
		return Bool
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case int:
		return DLDataType{CodeInt, strconv.IntSize, 1}
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case uint:
		return DLDataType{CodeUInt, strconv.IntSize, 1}
	case float32:
		return Float32
	case float64:
		return Float64
	case complex64:
		return Complex64
	case complex128:
		return Complex128
	case float16.Float16:
		return Float16
	default: // BF16
		return BFloat16
	}
}
