package adapters_test

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

var ruleDTypes = []core.DLDataType{
	core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16, core.Uint32,
	core.Uint64, core.Float16, core.BFloat16, core.Float32, core.Float64, core.Complex64, core.Complex128,
}

// probes returns values of dt that witness every way a cast can change a value: the extremes,
// fractions, the first integers a float cannot hold, the smallest subnormals, infinities and
// imaginary parts.
func probes(t *testing.T, dt core.DLDataType) *core.Tensor {
	t.Helper()
	ints := func(v ...int64) []int64 { return append([]int64{0, 1, -1, 2, 3}, v...) }
	floats := []float64{0, 1, -2.5, 0.5, math.Inf(1), math.Inf(-1), 1 + 0x1p-7, 1 + 0x1p-10, 0x1p100, 0x1p-24,
		1 + 0x1p-23, 0x1p-133, 1 + 0x1p-52, 1e300, 5e-324, 65504, 0x1p-149, 1e38, 1e-40}
	var ts *core.Tensor
	var err error
	switch dt {
	case core.Bool:
		ts, err = core.FromSlice([]bool{false, true})
	case core.Int8:
		ts, err = core.FromSlice(conv[int8](ints(math.MinInt8, math.MaxInt8)))
	case core.Int16:
		ts, err = core.FromSlice(conv[int16](ints(math.MinInt16, math.MaxInt16, 1<<11+1)))
	case core.Int32:
		ts, err = core.FromSlice(conv[int32](ints(math.MinInt32, math.MaxInt32, 1<<24+1)))
	case core.Int64:
		ts, err = core.FromSlice(ints(math.MinInt64, math.MaxInt64, 1<<53+1, 1<<24+1))
	case core.Uint8:
		ts, err = core.FromSlice([]uint8{0, 1, 2, math.MaxUint8})
	case core.Uint16:
		ts, err = core.FromSlice([]uint16{0, 1, 2, math.MaxUint16, 1<<11 + 1})
	case core.Uint32:
		ts, err = core.FromSlice([]uint32{0, 1, 2, math.MaxUint32, 1<<24 + 1})
	case core.Uint64:
		ts, err = core.FromSlice([]uint64{0, 1, 2, math.MaxUint64, 1<<53 + 1})
	case core.Float16:
		var v []float16.Float16
		for _, f := range floats {
			if h := float16.Fromfloat32(float32(f)); float64(h.Float32()) == f {
				v = append(v, h)
			}
		}
		ts, err = core.FromSlice(v)
	case core.BFloat16:
		var v []core.BF16
		for _, f := range floats {
			if h := core.BF16FromFloat32(float32(f)); float64(h.Float32()) == f {
				v = append(v, h)
			}
		}
		ts, err = core.FromSlice(v)
	case core.Float32:
		var v []float32
		for _, f := range floats {
			if float64(float32(f)) == f {
				v = append(v, float32(f))
			}
		}
		ts, err = core.FromSlice(v)
	case core.Float64:
		ts, err = core.FromSlice(floats)
	case core.Complex64:
		ts, err = core.FromSlice([]complex64{1, 2i, complex(0.5, -3), complex(1+0x1p-23, 0x1p-149), complex(1e38, 0)})
	case core.Complex128:
		ts, err = core.FromSlice([]complex128{1, 2i, complex(0.5, -3), complex(1+0x1p-52, 5e-324)})
	default:
		t.Fatalf("no probes for %s", dt)
	}
	require.NoError(t, err)
	return ts
}

func conv[D int8 | int16 | int32](v []int64) []D {
	out := make([]D, len(v))
	for i, x := range v {
		out[i] = D(x)
	}
	return out
}

// exact reads element i of a 1-D tensor as exact real and imaginary parts.
func exact(t *testing.T, ts *core.Tensor, i int64) (re, im *big.Float) {
	t.Helper()
	re, im = new(big.Float).SetPrec(2000), new(big.Float).SetPrec(2000)
	var err error
	switch ts.DType() {
	case core.Bool:
		var v bool
		v, err = core.At[bool](ts, i)
		if v {
			re.SetInt64(1)
		}
	case core.Int8, core.Int16, core.Int32, core.Int64:
		var v int64
		v, err = readInt(ts, i)
		re.SetInt64(v)
	case core.Uint8, core.Uint16, core.Uint32, core.Uint64:
		var v uint64
		v, err = readUint(ts, i)
		re.SetUint64(v)
	case core.Float16:
		var v float16.Float16
		v, err = core.At[float16.Float16](ts, i)
		re.SetFloat64(float64(v.Float32()))
	case core.BFloat16:
		var v core.BF16
		v, err = core.At[core.BF16](ts, i)
		re.SetFloat64(float64(v.Float32()))
	case core.Float32:
		var v float32
		v, err = core.At[float32](ts, i)
		re.SetFloat64(float64(v))
	case core.Float64:
		var v float64
		v, err = core.At[float64](ts, i)
		re.SetFloat64(v)
	case core.Complex64:
		var v complex64
		v, err = core.At[complex64](ts, i)
		re.SetFloat64(float64(real(v)))
		im.SetFloat64(float64(imag(v)))
	case core.Complex128:
		var v complex128
		v, err = core.At[complex128](ts, i)
		re.SetFloat64(real(v))
		im.SetFloat64(imag(v))
	}
	require.NoError(t, err)
	return re, im
}

func readInt(ts *core.Tensor, i int64) (int64, error) {
	switch ts.DType() {
	case core.Int8:
		v, err := core.At[int8](ts, i)
		return int64(v), err
	case core.Int16:
		v, err := core.At[int16](ts, i)
		return int64(v), err
	case core.Int32:
		v, err := core.At[int32](ts, i)
		return int64(v), err
	}
	return core.At[int64](ts, i)
}

func readUint(ts *core.Tensor, i int64) (uint64, error) {
	switch ts.DType() {
	case core.Uint8:
		v, err := core.At[uint8](ts, i)
		return uint64(v), err
	case core.Uint16:
		v, err := core.At[uint16](ts, i)
		return uint64(v), err
	case core.Uint32:
		v, err := core.At[uint32](ts, i)
		return uint64(v), err
	}
	return core.At[uint64](ts, i)
}

// TestPreservesIsExact proves the table by its meaning: for every ordered pair of dtypes, the
// cast keeps every probe value exactly if and only if Preserves says it does, so the table
// neither lets a value-changing cast through nor refuses one that keeps every value.
func TestPreservesIsExact(t *testing.T) {
	for _, from := range ruleDTypes {
		src := probes(t, from)
		for _, to := range ruleDTypes {
			if from == to {
				continue
			}
			out, err := memory.Cast(src, to)
			require.NoError(t, err, "%s → %s", from, to)
			kept := true
			for i := range src.Dim(0) {
				r1, i1 := exact(t, src, i)
				r2, i2 := exact(t, out, i)
				if r1.Cmp(r2) != 0 || i1.Cmp(i2) != 0 {
					kept = false
					break
				}
			}
			assert.Equal(t, kept, adapters.Preserves(from, to),
				"%s → %s: the probes say the cast keeps every value: %v", from, to, kept)
			out.Release()
		}
		src.Release()
	}
}

// TestPreservesTable is the table of the issue, written out: casts that happen by default, and
// some that need AllowCast.
func TestPreservesTable(t *testing.T) {
	safe := [][2]core.DLDataType{
		{core.Float16, core.Float64}, {core.BFloat16, core.Float64}, {core.Float32, core.Float64},
		{core.Float16, core.Float32}, {core.BFloat16, core.Float32}, {core.Int8, core.Float64},
		{core.Int32, core.Float64}, {core.Uint32, core.Float64}, {core.Int16, core.Float32},
		{core.Int8, core.Int64}, {core.Uint8, core.Int16}, {core.Uint32, core.Int64},
		{core.Uint16, core.Uint64}, {core.Float32, core.Complex64}, {core.Float32, core.Complex128},
		{core.Float64, core.Complex128}, {core.Complex64, core.Complex128}, {core.Bool, core.Float32},
		{core.Bool, core.Uint8}, {core.Bool, core.Complex64}, {core.Int8, core.Float16},
	}
	lossy := [][2]core.DLDataType{
		{core.Float64, core.Float32}, {core.Complex128, core.Float64}, {core.Complex64, core.Float32},
		{core.Float32, core.Int32}, {core.Int64, core.Float64}, {core.Uint64, core.Float64},
		{core.Int64, core.Float32}, {core.Int32, core.Float32}, {core.Int32, core.Uint32},
		{core.Uint32, core.Int32}, {core.Int8, core.Uint64}, {core.Float32, core.Bool},
		{core.Int8, core.Bool}, {core.Float16, core.BFloat16}, {core.BFloat16, core.Float16},
		{core.Complex128, core.Complex64}, {core.Int16, core.Float16}, {core.Int64, core.Int32},
	}
	for _, p := range safe {
		assert.True(t, adapters.Preserves(p[0], p[1]), "%s → %s", p[0], p[1])
		assert.NoError(t, adapters.Apply().CheckCast(p[0], p[1], ""))
	}
	for _, p := range lossy {
		assert.False(t, adapters.Preserves(p[0], p[1]), "%s → %s", p[0], p[1])
		err := adapters.Apply().CheckCast(p[0], p[1], "the target")
		require.ErrorIs(t, err, adapters.ErrCast, "%s → %s", p[0], p[1])
		assert.Contains(t, err.Error(), p[0].String())
		assert.Contains(t, err.Error(), p[1].String())
		assert.Contains(t, err.Error(), "adapters.AllowCast()")
		assert.NoError(t, adapters.Apply(adapters.AllowCast()).CheckCast(p[0], p[1], ""))
	}
	assert.False(t, adapters.Preserves(core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 4}, core.Float64),
		"vector dtypes are not in the table")
}

func TestCastErrorMessage(t *testing.T) {
	sentinel := errors.New("mine: dtype")
	err := adapters.Apply().CheckCast(core.Complex128, core.Float64, "*mat.Dense")
	var ce *adapters.CastError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "tensor is complex128, *mat.Dense holds float64: casting would drop the imaginary part "+
		"(pass adapters.AllowCast() to cast)", err.Error())
	ce.Also = sentinel
	assert.ErrorIs(t, err, sentinel)
	assert.ErrorIs(t, err, adapters.ErrCast)
	assert.Contains(t, adapters.Apply().CheckCast(core.Int64, core.Float64, "").Error(), "round integers above 2^53")
	assert.Contains(t, adapters.Apply().CheckCast(core.Float64, core.Float32, "").Error(), "the target holds float32")
}

func TestCheckCastOutsideTheTable(t *testing.T) {
	i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	for _, o := range []adapters.Options{adapters.Apply(), adapters.Apply(adapters.AllowCast())} {
		err := o.CheckCast(i4, core.Int8, "")
		require.ErrorIs(t, err, adapters.ErrUnsupported)
		assert.EqualError(t, err, "no cast between int4 and int8")
		assert.NotErrorIs(t, err, adapters.ErrCast)
	}
	assert.NoError(t, adapters.Apply().CheckCast(i4, i4, ""))
}
