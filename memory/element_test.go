package memory_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

func TestAtAndSetAtEveryDtype(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Bool, core.Int8, core.Int16, core.Int32, core.Int64,
		core.Uint8, core.Uint16, core.Uint32, core.Uint64, core.Float16, core.BFloat16, core.Float32,
		core.Float64, core.Complex64, core.Complex128} {
		t.Run(dt.String(), func(t *testing.T) {
			base := core.MustNew(dt, 3, 4)
			x, err := base.Transpose() // a strided view: the element is found through the strides
			require.NoError(t, err)
			require.NoError(t, memory.SetAt(x, 1, 2, 1))
			v, err := memory.At(x, 2, 1)
			require.NoError(t, err)
			assert.Equal(t, complex128(1), v)
			w, err := memory.At(base, 1, 2)
			require.NoError(t, err)
			assert.Equal(t, complex128(1), w, "the write went to the transposed position")
			z, err := memory.At(base, 0, 0)
			require.NoError(t, err)
			assert.Zero(t, z)
		})
	}
}

func TestAtAndSetAtErrors(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3}, 3)
	_, err := memory.At(x, 3)
	assert.ErrorIs(t, err, core.ErrArgument)
	_, err = memory.At(x, 0, 0)
	assert.ErrorIs(t, err, core.ErrArgument)
	ro, err := x.AsReadOnly()
	require.NoError(t, err)
	assert.ErrorIs(t, memory.SetAt(ro, 5, 0), core.ErrReadOnly)
	v, err := memory.At(ro, 2)
	require.NoError(t, err)
	assert.Equal(t, complex128(3), v)
	s := core.Scalar(int64(-4))
	v, err = memory.At(s)
	require.NoError(t, err)
	assert.Equal(t, complex128(-4), v)
}

// SetAt converts a value beyond an integer dtype's range as Copy does: it saturates (and NaN is
// 0), it does not wrap.
func TestSetAtSaturatesIntegers(t *testing.T) {
	x := core.MustNew(core.Int8, 3)
	require.NoError(t, memory.SetAt(x, 300, 0))
	require.NoError(t, memory.SetAt(x, -300.5, 1))
	require.NoError(t, memory.SetAt(x, complex(math.NaN(), 0), 2))
	got, err := core.Elements[int8](x)
	require.NoError(t, err)
	assert.Equal(t, []int8{127, -128, 0}, got)
}
