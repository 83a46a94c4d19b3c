package safetensorsx

import (
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// dtypeEntry is one dtype the format names: its string, the core dtype, and its rank in the
// reference implementation's Dtype enum (the writer orders tensors by it).
type dtypeEntry struct {
	name string
	dt   core.DLDataType
	rank int
}

// dtypes lists every dtype of the format in the order of the reference implementation's Dtype
// enum (huggingface/safetensors, safetensors/src/tensor.rs), which is "increasing alignment"
// and which the reference writer sorts by, largest first.
var dtypes = []dtypeEntry{
	{"BOOL", core.Bool, 0},
	{"F4", core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}, 1},
	{"F6_E2M3", core.DLDataType{Code: core.CodeFloat6E2M3FN, Bits: 6, Lanes: 1}, 2},
	{"F6_E3M2", core.DLDataType{Code: core.CodeFloat6E3M2FN, Bits: 6, Lanes: 1}, 3},
	{"U8", core.Uint8, 4},
	{"I8", core.Int8, 5},
	{"F8_E5M2", core.DLDataType{Code: core.CodeFloat8E5M2, Bits: 8, Lanes: 1}, 6},
	{"F8_E4M3", core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, 7},
	{"F8_E8M0", core.DLDataType{Code: core.CodeFloat8E8M0FNU, Bits: 8, Lanes: 1}, 8},
	{"F8_E4M3FNUZ", core.DLDataType{Code: core.CodeFloat8E4M3FNUZ, Bits: 8, Lanes: 1}, 9},
	{"F8_E5M2FNUZ", core.DLDataType{Code: core.CodeFloat8E5M2FNUZ, Bits: 8, Lanes: 1}, 10},
	{"I16", core.Int16, 11},
	{"U16", core.Uint16, 12},
	{"F16", core.Float16, 13},
	{"BF16", core.BFloat16, 14},
	{"I32", core.Int32, 15},
	{"U32", core.Uint32, 16},
	{"F32", core.Float32, 17},
	{"C64", core.Complex64, 18},
	{"F64", core.Float64, 19},
	{"I64", core.Int64, 20},
	{"U64", core.Uint64, 21},
}

// DTypes returns the dtype strings of the format, in the reference implementation's order.
func DTypes() []string {
	out := make([]string, len(dtypes))
	for i, e := range dtypes {
		out[i] = e.name
	}
	return out
}

func entryOfName(s string) (dtypeEntry, bool) {
	for _, e := range dtypes {
		if e.name == s {
			return e, true
		}
	}
	return dtypeEntry{}, false
}

func entryOf(dt core.DLDataType) (dtypeEntry, bool) {
	for _, e := range dtypes {
		if e.dt == dt {
			return e, true
		}
	}
	return dtypeEntry{}, false
}

// FromDType returns the core dtype of a safetensors dtype string ("F32", "BF16", "F8_E4M3",
// ...). Strings the format does not name are refused with ErrUnsupportedDType. F8_E4M3 is the
// "fn" variant (no infinities: torch.float8_e4m3fn, DLPack's float8_e4m3fn); F4 and F6_* are
// DLPack's packed float4_e2m1fn and float6_*fn; F8_E8M0 is float8_e8m0fnu.
func FromDType(s string) (core.DLDataType, error) {
	if e, ok := entryOfName(s); ok {
		return e.dt, nil
	}
	return core.DLDataType{}, errs.Errorf(ErrUnsupportedDType, "safetensorsx: %q is not a safetensors dtype (want one of %v)", s, DTypes())
}

// ToDType returns the safetensors dtype string of a core dtype. Dtypes the format cannot hold
// are refused with ErrUnsupportedDType: complex128, vectors (lanes > 1), int4 and other
// sub-byte integers, float8_e4m3 (the IEEE-style variant with infinities), float8_e3m4,
// float8_e4m3b11fnuz, opaque handles.
func ToDType(dt core.DLDataType) (string, error) {
	if e, ok := entryOf(dt); ok {
		return e.name, nil
	}
	return "", errs.Errorf(ErrUnsupportedDType, "safetensorsx: %s has no safetensors dtype", dt)
}
