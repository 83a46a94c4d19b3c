package tensorio_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/tensorio"
	"github.com/dlpack-go/dlpack/memory"
)

// Every layout is written as its C-order bytes, also when rows are larger than the buffer.
func TestWriteCOrder(t *testing.T) {
	x := core.MustNew(core.Float64, 600, 300) // a row of the transpose is 4800 bytes; 600·300·8 > ChunkSize
	b, err := x.Bytes()
	require.NoError(t, err)
	for i := range b {
		b[i] = byte(i * 31)
	}
	tr, err := x.Transpose()
	require.NoError(t, err)
	rev, err := x.Reverse(1)
	require.NoError(t, err)
	wide := core.MustNew(core.Uint8, 2, tensorio.ChunkSize+10) // one row larger than the buffer
	step, err := wide.Slice(1, 0, core.End, 3)
	require.NoError(t, err)
	for _, v := range []*core.Tensor{x, tr, rev, step} {
		want, err := memory.Contiguous(v)
		require.NoError(t, err)
		wb, err := want.ReadOnlyBytes()
		require.NoError(t, err)
		var got bytes.Buffer
		require.NoError(t, tensorio.NewWriter(&got).Write(v))
		require.Equal(t, wb, got.Bytes(), "%v", v)
	}
	released := core.MustNew(core.Float32, 2)
	released.Release()
	require.ErrorIs(t, tensorio.NewWriter(&bytes.Buffer{}).Write(released), core.ErrReleased)
}

func TestSwapBytes(t *testing.T) {
	b := binary.BigEndian.AppendUint32(nil, 0x01020304)
	b = binary.BigEndian.AppendUint32(b, 0x05060708)
	tensorio.SwapBytes(b, core.Complex64) // two float32 parts, each swapped on its own
	require.Equal(t, []byte{4, 3, 2, 1, 8, 7, 6, 5}, b)
	tensorio.SwapBytes(b, core.Float64)
	require.Equal(t, []byte{5, 6, 7, 8, 1, 2, 3, 4}, b)
	one := []byte{9}
	tensorio.SwapBytes(one, core.Uint8)
	require.Equal(t, []byte{9}, one)
}
