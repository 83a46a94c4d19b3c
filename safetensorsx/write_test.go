package safetensorsx_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// capture records every Write: the slice it was given (to compare addresses) and a copy of its
// bytes (writers may reuse their buffers).
type capture struct{ calls, copies [][]byte }

func (c *capture) Write(p []byte) (int, error) {
	c.calls, c.copies = append(c.calls, p), append(c.copies, bytes.Clone(p))
	return len(p), nil
}

// TestWriteZeroCopy: a contiguous tensor's memory is handed to the writer as is.
func TestWriteZeroCopy(t *testing.T) {
	x := core.MustFromSlice(make([]float64, 1000), 10, 100)
	var w capture
	require.NoError(t, safetensorsx.Write(&w, map[string]*core.Tensor{"x": x}, nil))
	require.Len(t, w.calls, 2)
	assert.Equal(t, x.Data(), unsafe.Pointer(unsafe.SliceData(w.calls[1])), "the data is written from the tensor's own memory")
	assert.Zero(t, len(w.calls[0])%safetensorsx.Alignment, "the data starts aligned")
}

// TestWriteStreamsLargeStrided: tensors of other layouts, larger than the scratch buffer, are
// written in C order in pieces no larger than 1 MiB.
func TestWriteStreamsLargeStrided(t *testing.T) {
	x := core.MustNew(core.Float64, 3, 300, 1000) // 7.2 MB
	xb, err := x.Bytes()
	require.NoError(t, err)
	for i := range xb {
		xb[i] = byte(i * 7)
	}
	one := core.MustFromSlice([]float32{2.5})
	bc, err := one.BroadcastTo(600, 700)
	require.NoError(t, err)
	for i, mk := range []func() (*core.Tensor, error){
		func() (*core.Tensor, error) { return x.Permute(1, 0, 2) },
		func() (*core.Tensor, error) { return x.Permute(2, 1, 0) },
		func() (*core.Tensor, error) { return x.Reverse(2) },
		func() (*core.Tensor, error) { return x.Slice(1, 0, 300, 7) },
		func() (*core.Tensor, error) { return bc, nil },
	} {
		v, err := mk()
		require.NoError(t, err)
		require.False(t, v.IsContiguous())
		var w capture
		require.NoError(t, safetensorsx.Write(&w, map[string]*core.Tensor{"v": v}, nil))
		var all []byte
		for k, c := range w.copies {
			if k > 0 {
				assert.LessOrEqual(t, len(c), 1<<20, "layout %d, write %d", i, k)
			}
			all = append(all, c...)
		}
		back, err := safetensorsx.Read(bytes.NewReader(all))
		require.NoError(t, err)
		assert.Equal(t, v.Shape(), back["v"].Shape())
		assert.True(t, bytes.Equal(cBytes(t, v), cBytes(t, back["v"])), "layout %d", i)
	}
}

// TestReadStreamLarge: a stream that cannot tell its size reads large tensors exactly, and a
// lying header costs no more than the bytes present before it fails.
func TestReadStreamLarge(t *testing.T) {
	x := core.MustNew(core.Uint8, 3<<20)
	xb, err := x.Bytes()
	require.NoError(t, err)
	for i := range xb {
		xb[i] = byte(i * 13)
	}
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, map[string]*core.Tensor{"x": x, "s": core.Scalar(int16(-3))}, nil))
	m, err := safetensorsx.Read(onlyReader{bytes.NewReader(buf.Bytes())})
	require.NoError(t, err)
	assert.True(t, bytes.Equal(xb, cBytes(t, m["x"])))
	v, err := core.At[int16](m["s"])
	require.NoError(t, err)
	assert.Equal(t, int16(-3), v)

	// a header that promises 1 TiB followed by 1 MiB of data
	h := `{"x":{"dtype":"U8","shape":[1099511627776],"data_offsets":[0,1099511627776]}}`
	lie := append(binary.LittleEndian.AppendUint64(nil, uint64(len(h))), h...)
	lie = append(lie, make([]byte, 1<<20)...)
	_, err = safetensorsx.Read(onlyReader{bytes.NewReader(lie)})
	require.ErrorIs(t, err, safetensorsx.ErrTruncated)
}

// TestHeaderOf: the header Write would write, without writing.
func TestHeaderOf(t *testing.T) {
	h, err := safetensorsx.HeaderOf(map[string]*core.Tensor{
		"b":  core.MustFromSlice([]int8{1, 2, 3}),
		"a":  core.MustFromSlice([]int8{1}),
		"c":  core.MustFromSlice([]complex64{1}),
		"d":  core.MustFromSlice([]float64{1}),
		"f4": core.MustNew(core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}, 2, 2),
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"d", "c", "a", "b", "f4"}, h.Names(), "F64 > C64 > I8 > F4 in the reference's enum, then names")
	ti, ok := h.Lookup("f4")
	require.True(t, ok)
	assert.Equal(t, int64(20), ti.Begin)
	assert.Equal(t, int64(22), ti.End, "four float4 elements are two bytes")
	assert.Equal(t, int64(22), h.DataLen)
}
