package memory_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

var allDTypes = []core.DLDataType{
	core.Bool, core.Int8, core.Int16, core.Int32, core.Int64,
	core.Uint8, core.Uint16, core.Uint32, core.Uint64,
	core.Float16, core.BFloat16, core.Float32, core.Float64, core.Complex64, core.Complex128,
}

// randomTensor allocates a C-order tensor filled with random bytes (bools get 0 or 1), so that
// every element is almost surely distinct.
func randomTensor(t testing.TB, r *rand.Rand, dt core.DLDataType, shape ...int64) *core.Tensor {
	x, err := core.New(dt, shape...)
	require.NoError(t, err)
	b, err := x.Bytes()
	require.NoError(t, err)
	for i := range b {
		b[i] = byte(r.Uint32())
		if dt == core.Bool {
			b[i] &= 1
		}
	}
	return x
}

// atBytes reads the element at idx with core.At and returns its bytes: a bit-exact, NaN-safe
// reference for any dtype.
func atBytes(t *core.Tensor, idx []int64) ([]byte, error) {
	switch t.DType() {
	case core.Bool:
		return atBytesOf[bool](t, idx)
	case core.Int8:
		return atBytesOf[int8](t, idx)
	case core.Int16:
		return atBytesOf[int16](t, idx)
	case core.Int32:
		return atBytesOf[int32](t, idx)
	case core.Int64:
		return atBytesOf[int64](t, idx)
	case core.Uint8:
		return atBytesOf[uint8](t, idx)
	case core.Uint16:
		return atBytesOf[uint16](t, idx)
	case core.Uint32:
		return atBytesOf[uint32](t, idx)
	case core.Uint64:
		return atBytesOf[uint64](t, idx)
	case core.Float16:
		return atBytesOf[float16.Float16](t, idx)
	case core.BFloat16:
		return atBytesOf[core.BF16](t, idx)
	case core.Float32:
		return atBytesOf[float32](t, idx)
	case core.Float64:
		return atBytesOf[float64](t, idx)
	case core.Complex64:
		return atBytesOf[complex64](t, idx)
	case core.Complex128:
		return atBytesOf[complex128](t, idx)
	}
	return nil, fmt.Errorf("no Go type for %s", t.DType())
}

func atBytesOf[T core.Element](t *core.Tensor, idx []int64) ([]byte, error) {
	v, err := core.At[T](t, idx...)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))), nil
}

// requireSameElements compares got with want index by index through core.At.
func requireSameElements(t testing.TB, want, got *core.Tensor, msg ...any) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), msg...)
	require.Equal(t, want.DType(), got.DType(), msg...)
	for idx := range core.Indices(want.Shape()) {
		w, err := atBytes(want, idx)
		require.NoError(t, err)
		g, err := atBytes(got, idx)
		require.NoError(t, err)
		if !bytes.Equal(w, g) {
			require.Failf(t, "element differs", "at %v: want % x, got % x %v", idx, w, g, fmt.Sprint(msg...))
		}
	}
}
