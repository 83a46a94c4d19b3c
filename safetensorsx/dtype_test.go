package safetensorsx_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// TestDTypes: every dtype the format names maps to a valid core dtype and back; the rest of
// core's dtypes and unknown strings are refused with sentinels that name them.
func TestDTypes(t *testing.T) {
	want := map[string]core.DLDataType{
		"BOOL": core.Bool, "U8": core.Uint8, "I8": core.Int8, "I16": core.Int16, "U16": core.Uint16,
		"I32": core.Int32, "U32": core.Uint32, "I64": core.Int64, "U64": core.Uint64,
		"F16": core.Float16, "BF16": core.BFloat16, "F32": core.Float32, "F64": core.Float64, "C64": core.Complex64,
		"F8_E5M2":     {Code: core.CodeFloat8E5M2, Bits: 8, Lanes: 1},
		"F8_E4M3":     {Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1},
		"F8_E4M3FNUZ": {Code: core.CodeFloat8E4M3FNUZ, Bits: 8, Lanes: 1},
		"F8_E5M2FNUZ": {Code: core.CodeFloat8E5M2FNUZ, Bits: 8, Lanes: 1},
		"F8_E8M0":     {Code: core.CodeFloat8E8M0FNU, Bits: 8, Lanes: 1},
		"F4":          {Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1},
		"F6_E2M3":     {Code: core.CodeFloat6E2M3FN, Bits: 6, Lanes: 1},
		"F6_E3M2":     {Code: core.CodeFloat6E3M2FN, Bits: 6, Lanes: 1},
	}
	assert.Len(t, safetensorsx.DTypes(), len(want))
	for _, s := range safetensorsx.DTypes() {
		dt, err := safetensorsx.FromDType(s)
		require.NoError(t, err)
		assert.Equal(t, want[s], dt, s)
		require.NoError(t, dt.Validate())
		back, err := safetensorsx.ToDType(dt)
		require.NoError(t, err)
		assert.Equal(t, s, back)
	}
	for _, s := range []string{"F7", "f32", "", "C128", "I4", "F8_E4M3FN"} {
		_, err := safetensorsx.FromDType(s)
		require.ErrorIs(t, err, safetensorsx.ErrUnsupportedDType, s)
		assert.ErrorIs(t, err, adapters.ErrUnsupported)
		assert.Contains(t, err.Error(), `"`+s+`"`)
	}
	for _, dt := range []core.DLDataType{core.Complex128, {Code: core.CodeFloat8E4M3, Bits: 8, Lanes: 1},
		{Code: core.CodeInt, Bits: 4, Lanes: 1}, {Code: core.CodeFloat, Bits: 32, Lanes: 4}, {Code: core.CodeFloat8E3M4, Bits: 8, Lanes: 1}} {
		_, err := safetensorsx.ToDType(dt)
		require.ErrorIs(t, err, safetensorsx.ErrUnsupportedDType, dt.String())
		assert.Contains(t, err.Error(), dt.String())
	}
}
