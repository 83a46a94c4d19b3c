package gomlxx

import (
	"github.com/gomlx/compute/dtypes"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx/internal/errs"
)

// pairs maps every GoMLX dtype that DLPack can express to its DLPack element type. The first
// nStorable have a Go element type in GoMLX v0.28 (DType.GoType), so GoMLX can hold tensors of
// them in host memory; the float8, float4 and 4-bit integer kinds after them are names only.
var pairs = []struct {
	g dtypes.DType
	d core.DLDataType
}{
	{dtypes.Bool, core.Bool},
	{dtypes.Int8, core.Int8}, {dtypes.Int16, core.Int16}, {dtypes.Int32, core.Int32}, {dtypes.Int64, core.Int64},
	{dtypes.Uint8, core.Uint8}, {dtypes.Uint16, core.Uint16}, {dtypes.Uint32, core.Uint32}, {dtypes.Uint64, core.Uint64},
	{dtypes.Float16, core.Float16}, {dtypes.BFloat16, core.BFloat16},
	{dtypes.Float32, core.Float32}, {dtypes.Float64, core.Float64},
	{dtypes.Complex64, core.Complex64}, {dtypes.Complex128, core.Complex128},
	// names without host storage in GoMLX v0.28
	{dtypes.F8E5M2, f8(core.CodeFloat8E5M2)},
	{dtypes.F8E4M3FN, f8(core.CodeFloat8E4M3FN)},
	{dtypes.F8E4M3B11FNUZ, f8(core.CodeFloat8E4M3B11FNUZ)},
	{dtypes.F8E5M2FNUZ, f8(core.CodeFloat8E5M2FNUZ)},
	{dtypes.F8E4M3FNUZ, f8(core.CodeFloat8E4M3FNUZ)},
	{dtypes.F8E4M3, f8(core.CodeFloat8E4M3)},
	{dtypes.F8E3M4, f8(core.CodeFloat8E3M4)},
	{dtypes.F8E8M0FNU, f8(core.CodeFloat8E8M0FNU)},
	{dtypes.F4E2M1FN, core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}},
	{dtypes.S4, core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}},
	{dtypes.U4, core.DLDataType{Code: core.CodeUInt, Bits: 4, Lanes: 1}},
}

// nStorable is how many entries of pairs GoMLX v0.28 can store (see pairs).
const nStorable = 15

func f8(c core.DataTypeCode) core.DLDataType { return core.DLDataType{Code: c, Bits: 8, Lanes: 1} }

// FromDType returns the DLPack element type of a GoMLX dtype: Bool, Int8…Int64, Uint8…Uint64,
// Float16, BFloat16, Float32, Float64, Complex64, Complex128 (the dtypes GoMLX v0.28 stores in
// host memory), and the names GoMLX has for the float8 kinds (F8E5M2, F8E4M3FN, F8E4M3B11FNUZ,
// F8E5M2FNUZ, F8E4M3FNUZ, F8E4M3, F8E3M4, F8E8M0FNU), F4E2M1FN and the 4-bit integers S4 and
// U4, which DLPack has codes for but GoMLX v0.28 cannot hold on the host (FromTensor and
// ToTensor refuse them). InvalidDType, TOKEN and the 2-bit integers S2 and U2 have no DLPack type:
// the error wraps adapters.ErrUnsupported and names the dtype.
func FromDType(dt dtypes.DType) (core.DLDataType, error) {
	for _, p := range pairs {
		if p.g == dt {
			return p.d, nil
		}
	}
	return core.DLDataType{}, errs.Errorf(adapters.ErrUnsupported, "gomlxx: GoMLX dtype %s (%d) has no DLPack type", dt, int32(dt))
}

// ToDType returns the GoMLX dtype of a DLPack element type, the inverse of FromDType. An
// element type that is not well formed (an unknown code, a bit width its code does not allow,
// zero lanes) is refused with an error wrapping core.ErrDType; a well-formed one GoMLX has no
// dtype for (float6, opaque handles, complex32, int1, several lanes) with adapters.ErrUnsupported.
func ToDType(dt core.DLDataType) (dtypes.DType, error) {
	if err := dt.Validate(); err != nil {
		return dtypes.InvalidDType, errs.Wrap("gomlxx", err, "")
	}
	for _, p := range pairs {
		if p.d == dt {
			return p.g, nil
		}
	}
	return dtypes.InvalidDType, errs.Errorf(adapters.ErrUnsupported, "gomlxx: DLPack dtype %s has no GoMLX dtype", dt)
}

// storable reports whether GoMLX v0.28 can hold elements of dt in host memory.
func storable(dt dtypes.DType) bool {
	for _, p := range pairs[:nStorable] {
		if p.g == dt {
			return true
		}
	}
	return false
}
