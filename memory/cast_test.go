package memory_test

import (
	"math"
	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

// setReal stores v, a small integer every dtype holds exactly, at idx.
func setReal(t *core.Tensor, v float64, idx ...int64) error {
	switch t.DType() {
	case core.Bool:
		return core.Set(t, v != 0, idx...)
	case core.Int8:
		return core.Set(t, int8(v), idx...)
	case core.Int16:
		return core.Set(t, int16(v), idx...)
	case core.Int32:
		return core.Set(t, int32(v), idx...)
	case core.Int64:
		return core.Set(t, int64(v), idx...)
	case core.Uint8:
		return core.Set(t, uint8(v), idx...)
	case core.Uint16:
		return core.Set(t, uint16(v), idx...)
	case core.Uint32:
		return core.Set(t, uint32(v), idx...)
	case core.Uint64:
		return core.Set(t, uint64(v), idx...)
	case core.Float16:
		return core.Set(t, float16.Fromfloat32(float32(v)), idx...)
	case core.BFloat16:
		return core.Set(t, core.BF16FromFloat32(float32(v)), idx...)
	case core.Float32:
		return core.Set(t, float32(v), idx...)
	case core.Float64:
		return core.Set(t, v, idx...)
	case core.Complex64:
		return core.Set(t, complex64(complex(v, -v)), idx...)
	default:
		return core.Set(t, complex(v, 2*v), idx...)
	}
}

// atAny reads the element at idx as its Go type.
func atAny(t *core.Tensor, idx ...int64) any {
	var v any
	var err error
	switch t.DType() {
	case core.Bool:
		v, err = core.At[bool](t, idx...)
	case core.Int8:
		v, err = core.At[int8](t, idx...)
	case core.Int16:
		v, err = core.At[int16](t, idx...)
	case core.Int32:
		v, err = core.At[int32](t, idx...)
	case core.Int64:
		v, err = core.At[int64](t, idx...)
	case core.Uint8:
		v, err = core.At[uint8](t, idx...)
	case core.Uint16:
		v, err = core.At[uint16](t, idx...)
	case core.Uint32:
		v, err = core.At[uint32](t, idx...)
	case core.Uint64:
		v, err = core.At[uint64](t, idx...)
	case core.Float16:
		v, err = core.At[float16.Float16](t, idx...)
	case core.BFloat16:
		v, err = core.At[core.BF16](t, idx...)
	case core.Float32:
		v, err = core.At[float32](t, idx...)
	case core.Float64:
		v, err = core.At[float64](t, idx...)
	case core.Complex64:
		v, err = core.At[complex64](t, idx...)
	case core.Complex128:
		v, err = core.At[complex128](t, idx...)
	}
	if err != nil {
		panic(err)
	}
	return v
}

// realOf returns the real value of an element read by atAny.
func realOf(v any) float64 {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case uint8:
		return float64(x)
	case uint16:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case float16.Float16:
		return float64(x.Float32())
	case core.BF16:
		return float64(x.Float32())
	case float32:
		return float64(x)
	case float64:
		return x
	case complex64:
		return float64(real(x))
	case complex128:
		return real(x)
	}
	panic("unknown element type")
}

// TestCastEveryPair casts values every dtype holds exactly between every ordered pair of
// dtypes, from a transposed (strided) source.
func TestCastEveryPair(t *testing.T) {
	values := []float64{0, 1, 2, 3, 5, 7, 100, 64, 9, 11, 13, 6}
	for _, from := range allDTypes {
		base := core.MustNew(from, 3, 4)
		want := make([]float64, len(values))
		for k, v := range values {
			if from == core.Bool {
				v = float64(k % 2)
			}
			want[k] = v
			require.NoError(t, setReal(base, v, int64(k/4), int64(k%4)))
		}
		src, err := base.Transpose()
		require.NoError(t, err)
		for _, to := range allDTypes {
			t.Run(from.String()+"→"+to.String(), func(t *testing.T) {
				for _, order := range []memory.Order{memory.COrder, memory.FortranOrder} {
					got, err := memory.CastOrder(src, to, order)
					require.NoError(t, err)
					require.Equal(t, to, got.DType())
					require.Equal(t, []int64{4, 3}, got.Shape())
					assert.NotZero(t, got.Flags()&core.FlagIsCopied)
					for k, w := range want {
						if to == core.Bool && w != 0 {
							w = 1
						}
						v := atAny(got, int64(k%4), int64(k/4))
						assert.Equal(t, w, realOf(v), "element %d", k)
						if to.Code == core.CodeComplex && from == core.Complex64 {
							assert.Equal(t, -w, imagOf(v), "imaginary part of element %d", k)
						}
						if to.Code == core.CodeComplex && from == core.Complex128 {
							assert.Equal(t, 2*w, imagOf(v), "imaginary part of element %d", k)
						}
					}
				}
			})
		}
	}
}

func imagOf(v any) float64 {
	switch x := v.(type) {
	case complex64:
		return float64(imag(x))
	case complex128:
		return imag(x)
	}
	return 0
}

func f16(bits uint16) float16.Float16 { return float16.Frombits(bits) }

func TestCastSemantics(t *testing.T) {
	pow2 := func(e int) float64 { return math.Ldexp(1, e) }
	tests := []struct {
		name string
		src  *core.Tensor
		to   core.DLDataType
		want any
	}{
		// integers wrap
		{"int16 300 → int8", core.Scalar(int16(300)), core.Int8, int8(44)},
		{"int32 -1 → uint8", core.Scalar(int32(-1)), core.Uint8, uint8(255)},
		{"uint64 max → int64", core.Scalar(uint64(math.MaxUint64)), core.Int64, int64(-1)},
		{"int64 -1 → uint32", core.Scalar(int64(-1)), core.Uint32, uint32(math.MaxUint32)},
		{"uint16 65535 → int16", core.Scalar(uint16(65535)), core.Int16, int16(-1)},
		{"int8 -128 → int64", core.Scalar(int8(-128)), core.Int64, int64(-128)},
		// floats truncate toward zero
		{"float32 2.9 → int32", core.Scalar(float32(2.9)), core.Int32, int32(2)},
		{"float64 -2.9 → int8", core.Scalar(-2.9), core.Int8, int8(-2)},
		{"float16 -2.5 → int16", core.Scalar(float16.Fromfloat32(-2.5)), core.Int16, int16(-2)},
		{"bfloat16 3.5 → uint8", core.Scalar(core.BF16FromFloat32(3.5)), core.Uint8, uint8(3)},
		{"float64 1e10 → int64", core.Scalar(1e10 + 0.75), core.Int64, int64(1e10)},
		// complex to real keeps the real part
		{"complex64 → int32", core.Scalar(complex64(2.75 + 9i)), core.Int32, int32(2)},
		{"complex128 → float64", core.Scalar(3 + 4i), core.Float64, 3.0},
		{"complex64 → float32", core.Scalar(complex64(-1.5 + 2i)), core.Float32, float32(-1.5)},
		{"complex64 → complex128", core.Scalar(complex64(-1.5 + 2i)), core.Complex128, complex(-1.5, 2)},
		{"complex128 → float16", core.Scalar(0.5 + 1i), core.Float16, f16(0x3800)},
		// bool is "not zero"
		{"complex 0+1i → bool", core.Scalar(1i), core.Bool, true},
		{"complex 0 → bool", core.Scalar(complex64(0)), core.Bool, false},
		{"float -0 → bool", core.Scalar(math.Copysign(0, -1)), core.Bool, false},
		{"float 0.5 → bool", core.Scalar(float32(0.5)), core.Bool, true},
		{"float NaN → bool", core.Scalar(math.NaN()), core.Bool, true},
		{"int16 256 → bool (no wrap)", core.Scalar(int16(256)), core.Bool, true},
		{"uint64 2^63 → bool", core.Scalar(uint64(1) << 63), core.Bool, true},
		{"bool → float32", core.Scalar(true), core.Float32, float32(1)},
		{"bool → complex64", core.Scalar(true), core.Complex64, complex64(1)},
		{"bool → bfloat16", core.Scalar(true), core.BFloat16, core.BF16(0x3f80)},
		// float16: round to nearest even, overflow to Inf, subnormals
		{"f32 tie down → f16", core.Scalar(float32(1 + pow2(-11))), core.Float16, f16(0x3c00)},
		{"f32 tie up → f16", core.Scalar(float32(1 + 3*pow2(-11))), core.Float16, f16(0x3c02)},
		{"f32 max half → f16", core.Scalar(float32(65504)), core.Float16, f16(0x7bff)},
		{"f32 65519 → f16", core.Scalar(float32(65519)), core.Float16, f16(0x7bff)},
		{"f32 65520 → f16 Inf", core.Scalar(float32(65520)), core.Float16, f16(0x7c00)},
		{"f32 -Inf → f16", core.Scalar(float32(math.Inf(-1))), core.Float16, f16(0xfc00)},
		{"f32 -0 → f16", core.Scalar(float32(math.Copysign(0, -1))), core.Float16, f16(0x8000)},
		{"f32 2^-14 → f16 min normal", core.Scalar(float32(pow2(-14))), core.Float16, f16(0x0400)},
		{"f32 2^-24 → f16 min subnormal", core.Scalar(float32(pow2(-24))), core.Float16, f16(0x0001)},
		{"f32 2^-25 → f16 tie to zero", core.Scalar(float32(pow2(-25))), core.Float16, f16(0x0000)},
		{"f32 3·2^-25 → f16 tie to even", core.Scalar(float32(3 * pow2(-25))), core.Float16, f16(0x0002)},
		{"f64 just above a tie → f16 (no double rounding)", core.Scalar(1 + pow2(-11) + pow2(-40)), core.Float16, f16(0x3c01)},
		{"f64 tie → f16", core.Scalar(1 + pow2(-11)), core.Float16, f16(0x3c00)},
		{"f64 huge → f16", core.Scalar(1e300), core.Float16, f16(0x7c00)},
		{"f64 tiny → f16", core.Scalar(-1e-300), core.Float16, f16(0x8000)},
		{"int64 70000 → f16 Inf", core.Scalar(int64(70000)), core.Float16, f16(0x7c00)},
		{"int32 2049 → f16 tie", core.Scalar(int32(2049)), core.Float16, f16(0x6800)},
		{"int32 2051 → f16 tie up", core.Scalar(int32(2051)), core.Float16, f16(0x6802)},
		{"uint8 255 → f16", core.Scalar(uint8(255)), core.Float16, f16(0x5bf8)},
		// 64-bit integers beyond float64's 53 bits round once, not through float64
		{"int64 just above a tie → bf16", core.Scalar(int64(1)<<60 + 1<<52 + 1), core.BFloat16, core.BF16(0x5d81)},
		{"int64 -(just above a tie) → bf16", core.Scalar(-(int64(1)<<60 + 1<<52 + 1)), core.BFloat16, core.BF16(0xdd81)},
		{"uint64 just above a tie → bf16", core.Scalar(uint64(1)<<63 + 1<<55 + 1), core.BFloat16, core.BF16(0x5f01)},
		{"int64 min → bf16", core.Scalar(int64(math.MinInt64)), core.BFloat16, core.BF16(0xdf00)},
		{"uint64 max → bf16", core.Scalar(uint64(math.MaxUint64)), core.BFloat16, core.BF16(0x5f80)},
		{"int64 just above a tie → complex64", core.Scalar(int64(1)<<60 + 1<<36 + 1), core.Complex64, complex64(complex(pow2(60)+pow2(37), 0))},
		{"uint64 just above a tie → complex64", core.Scalar(uint64(1)<<63 + 1<<39 + 1), core.Complex64, complex64(complex(pow2(63)+pow2(40), 0))},
		{"int64 min → complex64", core.Scalar(int64(math.MinInt64)), core.Complex64, complex64(complex(-pow2(63), 0))},
		// bfloat16
		{"f32 tie down → bf16", core.Scalar(float32(1 + pow2(-8))), core.BFloat16, core.BF16(0x3f80)},
		{"f32 tie up → bf16", core.Scalar(float32(1 + 3*pow2(-8))), core.BFloat16, core.BF16(0x3f82)},
		{"f32 Inf → bf16", core.Scalar(float32(math.Inf(1))), core.BFloat16, core.BF16(0x7f80)},
		{"f32 max → bf16 Inf", core.Scalar(float32(math.MaxFloat32)), core.BFloat16, core.BF16(0x7f80)},
		{"f64 just above a tie → bf16 (no double rounding)", core.Scalar(1 + pow2(-8) + pow2(-40)), core.BFloat16, core.BF16(0x3f81)},
		{"f64 huge → bf16 Inf", core.Scalar(-1e300), core.BFloat16, core.BF16(0xff80)},
		{"f16 → bf16", core.Scalar(f16(0x3c01)), core.BFloat16, core.BF16(0x3f80)},
		{"bf16 → f16", core.Scalar(core.BF16(0x3f81)), core.Float16, f16(0x3c08)},
		{"f16 → f32 exact", core.Scalar(f16(0x0001)), core.Float32, float32(pow2(-24))},
		{"bf16 → f64 exact", core.Scalar(core.BF16(0x3f81)), core.Float64, 1 + pow2(-7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := memory.Cast(tt.src, tt.to)
			require.NoError(t, err)
			assert.Equal(t, tt.want, atAny(got))
		})
	}
}

func TestCastNaN(t *testing.T) {
	nan32 := float32(math.NaN())
	for _, src := range []*core.Tensor{core.Scalar(nan32), core.Scalar(math.NaN()), core.Scalar(complex(math.NaN(), 0)),
		core.Scalar(float16.NaN()), core.Scalar(core.BF16FromFloat32(nan32))} {
		for _, to := range []core.DLDataType{core.Float16, core.BFloat16, core.Float32, core.Float64, core.Complex64} {
			got, err := memory.Cast(src, to)
			require.NoError(t, err)
			assert.True(t, math.IsNaN(realOf(atAny(got))), "%s → %s", src.DType(), to)
		}
	}
}

func TestCastUnsupported(t *testing.T) {
	fp8 := core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}
	x := core.MustNew(core.Float32, 2)
	_, err := memory.Cast(x, fp8)
	require.ErrorIs(t, err, memory.ErrUnsupported)
	assert.Contains(t, err.Error(), "float8_e4m3fn")
	_, err = memory.Cast(core.MustNew(fp8, 2), core.Float32)
	require.ErrorIs(t, err, memory.ErrUnsupported)
	_, err = memory.Cast(x, core.DLDataType{Code: 99, Bits: 8, Lanes: 1})
	require.ErrorIs(t, err, core.ErrDType)
}

// TestFloat16Exact compares the float32 → float16 kernel with x448/float16.Fromfloat32 on a
// strided sample of all float32 bit patterns (every 4099th, plus the neighbourhood of the
// boundaries), NaNs included by their bits.
func TestFloat16Exact(t *testing.T) {
	var bits []uint32
	for u := uint64(0); u <= math.MaxUint32; u += 4099 {
		bits = append(bits, uint32(u))
	}
	for _, b := range []uint32{0x7f7fffff, 0x7f800000, 0x7f800001, 0x7fc00000, 0x477fefff, 0x477ff000,
		0x38800000, 0x387fffff, 0x33000000, 0x33000001, 0x32ffffff, 0x00000001, 0x80000001} {
		for d := uint32(0); d < 64; d++ {
			bits = append(bits, b-32+d, (b-32+d)|0x80000000)
		}
	}
	src := make([]float32, len(bits))
	for i, b := range bits {
		src[i] = math.Float32frombits(b)
	}
	got, err := memory.Cast(core.MustFromSlice(src), core.Float16)
	require.NoError(t, err)
	h, err := core.Elements[float16.Float16](got)
	require.NoError(t, err)
	bad := 0
	for i, f := range src {
		if want := float16.Fromfloat32(f); h[i] != want && bad < 10 {
			bad++
			t.Errorf("float32 bits %#08x: got %#04x, want %#04x", bits[i], h[i].Bits(), want.Bits())
		}
	}
}
