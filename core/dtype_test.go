package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
)

func TestDTypeNamesAndValidate(t *testing.T) {
	cases := []struct {
		dt      core.DLDataType
		name    string
		size    int
		subByte bool
	}{
		{core.DLDataType{Code: core.CodeInt, Bits: 8, Lanes: 1}, "int8", 1, false},
		{core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}, "int4", 0, true},
		{core.DLDataType{Code: core.CodeInt, Bits: 1, Lanes: 1}, "int1", 0, true},
		{core.DLDataType{Code: core.CodeUInt, Bits: 64, Lanes: 1}, "uint64", 8, false},
		{core.DLDataType{Code: core.CodeFloat, Bits: 16, Lanes: 1}, "float16", 2, false},
		{core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 4}, "float32x4", 16, false},
		{core.DLDataType{Code: core.CodeOpaqueHandle, Bits: 64, Lanes: 1}, "handle64", 8, false},
		{core.DLDataType{Code: core.CodeBfloat, Bits: 16, Lanes: 1}, "bfloat16", 2, false},
		{core.DLDataType{Code: core.CodeComplex, Bits: 64, Lanes: 1}, "complex64", 8, false},
		{core.DLDataType{Code: core.CodeBool, Bits: 8, Lanes: 1}, "bool", 1, false},
		{core.DLDataType{Code: core.CodeFloat8E3M4, Bits: 8, Lanes: 1}, "float8_e3m4", 1, false},
		{core.DLDataType{Code: core.CodeFloat8E4M3, Bits: 8, Lanes: 1}, "float8_e4m3", 1, false},
		{core.DLDataType{Code: core.CodeFloat8E4M3B11FNUZ, Bits: 8, Lanes: 1}, "float8_e4m3b11fnuz", 1, false},
		{core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, "float8_e4m3fn", 1, false},
		{core.DLDataType{Code: core.CodeFloat8E4M3FNUZ, Bits: 8, Lanes: 1}, "float8_e4m3fnuz", 1, false},
		{core.DLDataType{Code: core.CodeFloat8E5M2, Bits: 8, Lanes: 1}, "float8_e5m2", 1, false},
		{core.DLDataType{Code: core.CodeFloat8E5M2FNUZ, Bits: 8, Lanes: 1}, "float8_e5m2fnuz", 1, false},
		{core.DLDataType{Code: core.CodeFloat8E8M0FNU, Bits: 8, Lanes: 1}, "float8_e8m0fnu", 1, false},
		{core.DLDataType{Code: core.CodeFloat6E2M3FN, Bits: 6, Lanes: 1}, "float6_e2m3fn", 0, true},
		{core.DLDataType{Code: core.CodeFloat6E3M2FN, Bits: 6, Lanes: 1}, "float6_e3m2fn", 0, true},
		{core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}, "float4_e2m1fn", 0, true},
		{core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 2}, "float4_e2m1fnx2", 1, false},
		{core.DLDataType{Code: core.CodeBcomplex, Bits: 32, Lanes: 1}, "bcomplex32", 4, false},
		{core.DLDataType{Code: core.CodeBcomplex, Bits: 32, Lanes: 2}, "bcomplex32x2", 8, false},
	}
	seen := map[core.DataTypeCode]bool{}
	for _, c := range cases {
		assert.Equal(t, c.name, c.dt.String())
		assert.NoError(t, c.dt.Validate(), c.name)
		assert.Equal(t, c.size, c.dt.Size(), c.name)
		assert.Equal(t, c.subByte, c.dt.SubByte(), c.name)
		seen[c.dt.Code] = true
	}
	for _, code := range core.DataTypeCodes() {
		assert.True(t, seen[code], "a valid dtype of code %s is tested", code)
		assert.True(t, code.Known())
		assert.NotContains(t, code.String(), "code(")
	}
	assert.Len(t, core.DataTypeCodes(), 19)
	assert.Equal(t, core.DLDataType{Code: 18, Bits: 32, Lanes: 1}, core.BComplex32, "kDLBcomplex = 18")

	bad := []struct {
		dt  core.DLDataType
		msg string
	}{
		{core.DLDataType{Code: 19, Bits: 8, Lanes: 1}, "dtype.code = 19"},
		{core.DLDataType{Code: core.CodeBcomplex, Bits: 64, Lanes: 1}, "dtype.bits = 64 is not valid for bcomplex"},
		{core.DLDataType{Code: core.CodeBcomplex, Bits: 16, Lanes: 1}, "dtype.bits = 16"},
		{core.DLDataType{Code: 255, Bits: 8, Lanes: 1}, "dtype.code = 255"},
		{core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 0}, "dtype.lanes = 0"},
		{core.DLDataType{Code: core.CodeFloat, Bits: 8, Lanes: 1}, "dtype.bits = 8"},
		{core.DLDataType{Code: core.CodeInt, Bits: 0, Lanes: 1}, "dtype.bits = 0"},
		{core.DLDataType{Code: core.CodeBool, Bits: 1, Lanes: 1}, "dtype.bits = 1"},
		{core.DLDataType{Code: core.CodeBfloat, Bits: 32, Lanes: 1}, "dtype.bits = 32"},
		{core.DLDataType{Code: core.CodeComplex, Bits: 16, Lanes: 1}, "dtype.bits = 16"},
		{core.DLDataType{Code: core.CodeFloat8E5M2, Bits: 16, Lanes: 1}, "dtype.bits = 16"},
		{core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 8, Lanes: 1}, "dtype.bits = 8"},
		{core.DLDataType{Code: core.CodeFloat6E2M3FN, Bits: 8, Lanes: 1}, "dtype.bits = 8"},
	}
	for _, b := range bad {
		err := b.dt.Validate()
		assert.ErrorIs(t, err, core.ErrDType, "%+v", b.dt)
		assert.ErrorContains(t, err, b.msg)
	}
	assert.Equal(t, "code(42)", core.DataTypeCode(42).String())
	assert.False(t, core.DataTypeCode(42).Known())
}

func TestDTypeOf(t *testing.T) {
	assert.Equal(t, core.Bool, core.DTypeOf[bool]())
	assert.Equal(t, core.Int64, core.DTypeOf[int]())
	assert.Equal(t, core.Uint64, core.DTypeOf[uint]())
	assert.Equal(t, core.Float16, core.DTypeOf[float16.Float16]())
	assert.Equal(t, core.BFloat16, core.DTypeOf[core.BF16]())
	assert.Equal(t, core.Complex128, core.DTypeOf[complex128]())
	assert.Equal(t, core.Uint8, core.DTypeOf[uint8]())
}

func TestDeviceTypeNames(t *testing.T) {
	want := map[core.DeviceType]string{
		core.CPU: "cpu", core.CUDA: "cuda", core.CUDAHost: "cuda_host", core.OpenCL: "opencl",
		core.Vulkan: "vulkan", core.Metal: "metal", core.VPI: "vpi", core.ROCM: "rocm",
		core.ROCMHost: "rocm_host", core.ExtDev: "ext_dev", core.CUDAManaged: "cuda_managed",
		core.OneAPI: "oneapi", core.WebGPU: "webgpu", core.Hexagon: "hexagon", core.MAIA: "maia",
		core.Trn: "trn", core.TPU: "tpu", core.TPUHost: "tpu_host", core.Ascend: "ascend",
	}
	require.Len(t, core.DeviceTypes(), 19)
	for _, d := range core.DeviceTypes() {
		assert.Equal(t, want[d], d.String(), "%d", int32(d))
		assert.True(t, d.Known())
	}
	assert.Len(t, want, 19)
	for _, d := range []core.DeviceType{0, 5, 6, 22, -1} {
		assert.False(t, d.Known())
		assert.Contains(t, d.String(), "device(")
	}
	assert.Equal(t, "cuda:3", core.DLDevice{DeviceType: core.CUDA, DeviceID: 3}.String())
	for _, d := range []core.DeviceType{core.CPU, core.CUDAHost, core.ROCMHost, core.CUDAManaged, core.TPUHost} {
		assert.True(t, d.HostAccessible(), "%s", d)
	}
	for _, d := range []core.DeviceType{core.CUDA, core.OpenCL, core.ROCM, core.Vulkan, core.TPU, core.Ascend} {
		assert.False(t, d.HostAccessible(), "%s", d)
	}
}

func TestBF16(t *testing.T) {
	cases := []struct {
		in   uint32
		want core.BF16
	}{
		{0x3F800000, 0x3F80}, // 1
		{0x3F808000, 0x3F80}, // halfway, even below: stays
		{0x3F818000, 0x3F82}, // halfway, odd below: rounds up to even
		{0x3F808001, 0x3F81}, // just above halfway
		{0x3F807FFF, 0x3F80}, // just below halfway
		{0x80000000, 0x8000}, // -0
		{0x7F800000, 0x7F80}, // +Inf
		{0xFF800000, 0xFF80}, // -Inf
		{0x7F7FFFFF, 0x7F80}, // max float32 rounds to +Inf
		{0x00000001, 0x0000}, // tiny denormal rounds to 0
	}
	for _, c := range cases {
		got := core.BF16FromFloat32(math.Float32frombits(c.in))
		assert.Equal(t, c.want, got, "%#08x", c.in)
	}
	for _, nan := range []uint32{0x7F800001, 0x7FC00000, 0xFF800001, 0x7FFFFFFF, 0x7F80FFFF} {
		b := core.BF16FromFloat32(math.Float32frombits(nan))
		f := b.Float32()
		assert.True(t, math.IsNaN(float64(f)), "%#08x stays NaN, got %#04x", nan, uint16(b))
		assert.Equal(t, nan>>31, uint32(b)>>15, "sign kept")
	}
	for _, v := range []float32{0, 1, -2, 0.5, 3.140625, 65536, -1e-3} {
		b := core.BF16FromFloat32(v)
		assert.Equal(t, b, core.BF16FromFloat32(b.Float32()), "round trip is stable for %g", v)
	}
	assert.Equal(t, float32(3.140625), core.BF16FromFloat32(3.140625).Float32(), "exact values are exact")
	assert.Equal(t, "1.5", core.BF16FromFloat32(1.5).String())
}
