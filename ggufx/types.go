package ggufx

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// Type is a ggml tensor type (enum ggml_type): how a tensor's elements are stored.
type Type uint32

// The ggml types (ggml.h). Numbers 4, 5, 31-33 and 36-38 are types ggml has removed (Removed);
// a file's tensors of those, and of numbers past the last (a newer ggml's, or a fork's, such as
// 133-158), are listed with their number but not read as elements (TensorInfo.Err).
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
	NVFP4   Type = 40
	Q1_0    Type = 41
	Q2_0    Type = 42
)

type traits struct {
	name       string
	blockSize  int // elements per block
	blockBytes int // bytes per block
	dtype      core.DLDataType
	plain      bool // elements are a DLPack type (dtype is set)
}

var typeTraits = map[Type]traits{
	F32:     {"F32", 1, 4, core.Float32, true},
	F16:     {"F16", 1, 2, core.Float16, true},
	BF16:    {"BF16", 1, 2, core.BFloat16, true},
	F64:     {"F64", 1, 8, core.Float64, true},
	I8:      {"I8", 1, 1, core.Int8, true},
	I16:     {"I16", 1, 2, core.Int16, true},
	I32:     {"I32", 1, 4, core.Int32, true},
	I64:     {"I64", 1, 8, core.Int64, true},
	Q4_0:    {name: "Q4_0", blockSize: 32, blockBytes: 18},
	Q4_1:    {name: "Q4_1", blockSize: 32, blockBytes: 20},
	Q5_0:    {name: "Q5_0", blockSize: 32, blockBytes: 22},
	Q5_1:    {name: "Q5_1", blockSize: 32, blockBytes: 24},
	Q8_0:    {name: "Q8_0", blockSize: 32, blockBytes: 34},
	Q8_1:    {name: "Q8_1", blockSize: 32, blockBytes: 36},
	Q2_K:    {name: "Q2_K", blockSize: 256, blockBytes: 84},
	Q3_K:    {name: "Q3_K", blockSize: 256, blockBytes: 110},
	Q4_K:    {name: "Q4_K", blockSize: 256, blockBytes: 144},
	Q5_K:    {name: "Q5_K", blockSize: 256, blockBytes: 176},
	Q6_K:    {name: "Q6_K", blockSize: 256, blockBytes: 210},
	Q8_K:    {name: "Q8_K", blockSize: 256, blockBytes: 292},
	IQ2_XXS: {name: "IQ2_XXS", blockSize: 256, blockBytes: 66},
	IQ2_XS:  {name: "IQ2_XS", blockSize: 256, blockBytes: 74},
	IQ3_XXS: {name: "IQ3_XXS", blockSize: 256, blockBytes: 98},
	IQ1_S:   {name: "IQ1_S", blockSize: 256, blockBytes: 50},
	IQ4_NL:  {name: "IQ4_NL", blockSize: 32, blockBytes: 18},
	IQ3_S:   {name: "IQ3_S", blockSize: 256, blockBytes: 110},
	IQ2_S:   {name: "IQ2_S", blockSize: 256, blockBytes: 82},
	IQ4_XS:  {name: "IQ4_XS", blockSize: 256, blockBytes: 136},
	IQ1_M:   {name: "IQ1_M", blockSize: 256, blockBytes: 56},
	TQ1_0:   {name: "TQ1_0", blockSize: 256, blockBytes: 54},
	TQ2_0:   {name: "TQ2_0", blockSize: 256, blockBytes: 66},
	MXFP4:   {name: "MXFP4", blockSize: 32, blockBytes: 17},
	NVFP4:   {name: "NVFP4", blockSize: 64, blockBytes: 36},
	Q1_0:    {name: "Q1_0", blockSize: 128, blockBytes: 18},
	Q2_0:    {name: "Q2_0", blockSize: 64, blockBytes: 18},
}

// LastType is the highest type number of current ggml (GGML_TYPE_COUNT - 1).
const LastType = Q2_0

// removedTypes are the numbers ggml once gave types it has since removed, with their names.
var removedTypes = map[Type]string{
	4: "Q4_2", 5: "Q4_3", 31: "Q4_0_4_4", 32: "Q4_0_4_8", 33: "Q4_0_8_8",
	36: "IQ4_NL_4_4", 37: "IQ4_NL_4_8", 38: "IQ4_NL_8_8",
}

// Known reports whether t is a type this package knows (every type of current ggml).
func (t Type) Known() bool { _, ok := typeTraits[t]; return ok }

// Removed reports whether t is a number ggml gave a type it has since removed (4, 5, 31-33,
// 36-38): the repacked Q4_0 and IQ4_NL layouts, and the old Q4_2 and Q4_3.
func (t Type) Removed() bool { _, ok := removedTypes[t]; return ok }

// String is ggml's name of the type ("F32", "Q4_K", ...); "type 31 (Q4_0_4_4, removed)" for a
// type ggml has removed, "type 157 (unknown)" for a number it does not have.
func (t Type) String() string {
	if tr, ok := typeTraits[t]; ok {
		return tr.name
	}
	if name, ok := removedTypes[t]; ok {
		return fmt.Sprintf("type %d (%s, removed)", uint32(t), name)
	}
	return fmt.Sprintf("type %d (unknown)", uint32(t))
}

// BlockSize is the number of elements in one block of the type (1 for plain types, 32 or
// 256 for quantized ones), 0 for unknown types.
func (t Type) BlockSize() int { return typeTraits[t].blockSize }

// BlockBytes is the number of bytes of one block (the element size for plain types), 0 for
// unknown types.
func (t Type) BlockBytes() int { return typeTraits[t].blockBytes }

// Quantized reports whether t is a known type whose elements DLPack has no type for (the block
// quantizations: Q4_0 ... MXFP4).
func (t Type) Quantized() bool { tr, ok := typeTraits[t]; return ok && !tr.plain }

// DType is the DLPack element type of a plain type (F32, F16, BF16, F64, I8, I16, I32, I64);
// ok is false for quantized and unknown types.
func (t Type) DType() (dt core.DLDataType, ok bool) {
	tr := typeTraits[t]
	return tr.dtype, tr.plain
}

// TypeOf is the plain ggml type of elements of dtype dt: F32, F16, BF16, F64, I8, I16, I32 or
// I64. Other dtypes (unsigned integers, bool, complex, float8...) have none: ErrType.
func TypeOf(dt core.DLDataType) (Type, error) {
	for _, t := range []Type{F32, F16, BF16, F64, I8, I16, I32, I64} {
		if typeTraits[t].dtype == dt {
			return t, nil
		}
	}
	return 0, errs.Errorf(ErrType, "ggufx: %s has no ggml type (GGUF holds F32, F16, BF16, F64, I8, I16, I32, I64 and quantized types)", dt)
}
