package memory_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// Every layout is written as its C-order bytes, also when rows are larger than the gather buffer,
// and WriteTo reports the bytes it wrote.
func TestWriteToCOrder(t *testing.T) {
	x := core.MustNew(core.Float64, 600, 300) // a row of the transpose is 4800 bytes; 600·300·8 > GatherBytes
	b, err := x.Bytes()
	require.NoError(t, err)
	for i := range b {
		b[i] = byte(i * 31)
	}
	view := func(v *core.Tensor, err error) *core.Tensor {
		require.NoError(t, err)
		return v
	}
	wide := core.MustNew(core.Uint8, 2, memory.GatherBytes+10) // one row larger than the buffer
	wb, err := wide.Bytes()
	require.NoError(t, err)
	for i := range wb {
		wb[i] = byte(i * 7)
	}
	deep := core.MustNew(core.Uint16, 2, 3, memory.GatherBytes/4) // rows of rows past the buffer
	tests := []struct {
		name string
		v    *core.Tensor
	}{
		{"C order", x},
		{"transposed", view(x.Transpose())},
		{"reversed columns", view(x.Reverse(1))},
		{"every third byte of rows past the buffer", view(wide.Slice(1, 0, core.End, 3))},
		{"C-order rows of a view past the buffer", view(deep.Reverse(1))},
		{"broadcast", view(core.MustFromSlice([]int32{1, 2, 3}, 1, 3).BroadcastTo(5, 3))},
		{"empty", core.MustNew(core.Float32, 0, 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := memory.Contiguous(tt.v)
			require.NoError(t, err)
			wantBytes, err := want.ReadOnlyBytes()
			require.NoError(t, err)
			var got bytes.Buffer
			n, err := memory.WriteTo(&got, tt.v)
			require.NoError(t, err)
			assert.Equal(t, int64(len(wantBytes)), n)
			require.Equal(t, len(wantBytes), got.Len())
			require.True(t, bytes.Equal(wantBytes, got.Bytes()), "the bytes differ from the C-order copy")
			size, err := memory.CBytes(tt.v)
			require.NoError(t, err)
			assert.Equal(t, n, size)
		})
	}
}

// failAfter is a writer that fails once it has taken n bytes.
type failAfter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(b []byte) (int, error) {
	if len(b) > f.n {
		k := f.n
		f.n = 0
		return k, errDiskFull
	}
	f.n -= len(b)
	return len(b), nil
}

func TestWriteToErrors(t *testing.T) {
	released := core.MustNew(core.Float32, 2)
	released.Release()
	_, err := memory.WriteTo(&bytes.Buffer{}, released)
	require.ErrorIs(t, err, core.ErrReleased)

	huge, err := core.MustFromSlice([]float64{1}, 1, 1).BroadcastTo(1<<31, 1<<31)
	require.NoError(t, err)
	var none bytes.Buffer
	_, err = memory.WriteTo(&none, huge)
	require.ErrorIs(t, err, core.ErrOverflow)
	assert.Zero(t, none.Len(), "nothing is written before the refusal")
	_, err = memory.CBytes(huge)
	require.ErrorIs(t, err, core.ErrOverflow)
	assert.Regexp(t, `^memory: a float64 tensor of shape \[2147483648 2147483648\] takes more than 2\^63 bytes`, err.Error())
	assert.NoError(t, errs.Check(err.Error(), core.ErrOverflow))

	// the writer's error comes back as it is, with the bytes it took
	x := core.MustNew(core.Float32, 512, 1024) // 2 MiB: two gathers of its transpose
	tr, err := x.Transpose()
	require.NoError(t, err)
	n, err := memory.WriteTo(&failAfter{n: 100}, tr)
	require.ErrorIs(t, err, errDiskFull)
	assert.Equal(t, int64(100), n)
}

func TestSwapBytes(t *testing.T) {
	b := binary.BigEndian.AppendUint32(nil, 0x01020304)
	b = binary.BigEndian.AppendUint32(b, 0x05060708)
	memory.SwapBytes(b, core.Complex64) // two float32 parts, each swapped on its own
	require.Equal(t, []byte{4, 3, 2, 1, 8, 7, 6, 5}, b)
	memory.SwapBytes(b, core.Float64)
	require.Equal(t, []byte{5, 6, 7, 8, 1, 2, 3, 4}, b)
	memory.SwapBytes(b, core.Int16)
	require.Equal(t, []byte{6, 5, 8, 7, 2, 1, 4, 3}, b)
	one := []byte{9}
	memory.SwapBytes(one, core.Uint8)
	require.Equal(t, []byte{9}, one)
	memory.SwapBytes(nil, core.Float32) // nothing to do, no fault
}

// WriteTo writes any view in C order, as a file format stores it: here the transpose of a 2×3
// matrix, without materialising it first.
func ExampleWriteTo() {
	x := core.MustFromSlice([]uint8{1, 2, 3, 4, 5, 6}, 2, 3)
	tr, err := x.Transpose()
	if err != nil {
		panic(err)
	}
	var out bytes.Buffer
	n, err := memory.WriteTo(&out, tr)
	if err != nil {
		panic(err)
	}
	fmt.Println(n, out.Bytes())
	// Output: 6 [1 4 2 5 3 6]
}
