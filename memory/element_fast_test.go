package memory_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// At and SetAt read and write an element without going through Copy; they must agree with
// Copy's conversions bit for bit, for every dtype and the awkward values (NaN, ±Inf, beyond an
// integer's range, fractions, negative zero, a non-zero imaginary part).
func TestAtAndSetAtAgreeWithCopy(t *testing.T) {
	values := []complex128{0, 1, -1, 0.5, -0.5, 2.5, -7.9, 127.5, 128, -129, 255.9, 256, 65535.5,
		1e10, -1e10, 1 << 53, 9.3e18, -9.3e18, 1.9e19, 3.4e38, 1e300, -1e-300, 65520, 65519, 1.00048828125,
		complex(math.Copysign(0, -1), 0), complex(math.NaN(), 0), complex(math.Inf(1), 0),
		complex(math.Inf(-1), 0), complex(3, 4), complex(0, 1)}
	for _, dt := range []core.DLDataType{core.Bool, core.Int8, core.Int16, core.Int32, core.Int64,
		core.Uint8, core.Uint16, core.Uint32, core.Uint64, core.Float16, core.BFloat16, core.Float32,
		core.Float64, core.Complex64, core.Complex128} {
		t.Run(dt.String(), func(t *testing.T) {
			for _, v := range values {
				got := core.MustNew(dt, 2)
				require.NoError(t, memory.SetAt(got, v, 1))
				want := core.MustNew(dt)
				require.NoError(t, memory.Copy(want, core.Scalar(v)))
				gb, err := got.Bytes()
				require.NoError(t, err)
				wb, err := want.Bytes()
				require.NoError(t, err)
				assert.Equal(t, wb, gb[dt.Size():], "SetAt(%v) stores what Copy stores", v)

				r, err := memory.At(got, 1)
				require.NoError(t, err)
				back := core.Scalar(complex128(0))
				require.NoError(t, memory.Copy(back, want))
				w, err := core.At[complex128](back)
				require.NoError(t, err)
				if w != w { // NaN
					assert.True(t, r != r, "At of NaN")
					continue
				}
				assert.Equal(t, w, r, "At reads what Copy reads, after SetAt(%v)", v)
				assert.Equal(t, math.Signbit(real(w)), math.Signbit(real(r)))
			}
		})
	}
}

// At and SetAt allocate nothing (BENCHMARKS.md has their speed beside core.At's).
func TestAtAndSetAtAllocateNothing(t *testing.T) {
	f64 := core.MustFromSlice(make([]float64, 12), 3, 4)
	x, err := f64.Transpose()
	require.NoError(t, err)
	f16 := core.MustNew(core.Float16, 3, 4)
	i8 := core.MustNew(core.Int8, 3, 4)
	for name, tt := range map[string]*core.Tensor{"float64 view": x, "float16": f16, "int8": i8} {
		allocs := testing.AllocsPerRun(100, func() {
			if err := memory.SetAt(tt, 2.5, 2, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := memory.At(tt, 2, 1); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "%s: allocations per At and SetAt", name)
	}
}

// A nil tensor is an error, not a panic.
func TestAtAndSetAtNil(t *testing.T) {
	_, err := memory.At(nil, 0)
	assert.ErrorIs(t, err, core.ErrArgument)
	assert.ErrorIs(t, memory.SetAt(nil, 1, 0), core.ErrArgument)
}
