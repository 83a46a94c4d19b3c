package parquetx_test

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// TestReadNulls: a column with nulls (as pqarrow, pyarrow and others write them) is refused
// without a fill value, the error naming arrowx.FillNulls, and read with one.
func TestReadNulls(t *testing.T) {
	fb := array.NewFloat32Builder(memory.DefaultAllocator)
	defer fb.Release()
	fb.AppendValues([]float32{1, 2, 0, 4}, []bool{true, true, false, true})
	f32 := fb.NewArray()
	defer f32.Release()
	ub := array.NewUint8Builder(memory.DefaultAllocator)
	defer ub.Release()
	ub.AppendValues([]uint8{9, 0, 7, 6}, []bool{true, false, true, true})
	u8 := ub.NewArray()
	defer u8.Release()
	file := pqarrowFile(t, 100, f32, u8)
	for _, c := range []struct {
		col  string
		want []float64
	}{{"c0", []float64{1, 2, -1, 4}}, {"c1", []float64{9, 255, 7, 6}}} {
		_, err := parquetx.Read(bytes.NewReader(file), c.col)
		require.ErrorIs(t, err, arrowx.ErrNulls, c.col)
		assert.ErrorContains(t, err, "give arrowx.FillNulls")
		fill := -1.0
		if c.col == "c1" {
			fill = 255
		}
		x, err := parquetx.Read(bytes.NewReader(file), c.col, arrowx.FillNulls(fill))
		require.NoError(t, err, c.col)
		got := castF64(t, x)
		vals, err := core.ReadOnlyElements[float64](got)
		require.NoError(t, err)
		assert.Equal(t, c.want, vals, c.col)
		x.Release()
	}
}

// TestReadIsWritableEveryDType: the tensor Read gives is writable for every dtype (arrow-go's
// decoded buffers are immutable for some, uint8 among them, and not for others), and a write
// through it lands in it.
func TestReadIsWritableEveryDType(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16, core.Uint32,
		core.Uint64, core.Float16, core.Float32, core.Float64, core.Bool} {
		for _, shape := range [][]int64{{6}, {6, 4}} {
			var buf bytes.Buffer
			x := seq(t, dt, shape...)
			require.NoError(t, parquetx.Write(&buf, []parquetx.Column{{Name: "x", Tensor: x}}))
			got, err := parquetx.Read(bytes.NewReader(buf.Bytes()), "x")
			require.NoError(t, err, "%s %v", dt, shape)
			assert.False(t, got.ReadOnly(), "%s %v", dt, shape)
			b, err := got.Bytes()
			require.NoError(t, err, "%s %v: writable access", dt, shape)
			b[0] ^= 1
			again, err := got.ReadOnlyBytes()
			require.NoError(t, err)
			assert.Equal(t, b[0], again[0], "the write landed")
			b[0] ^= 1
			same(t, x, got, "the values read, the write undone")
			got.Release()
			x.Release()
		}
	}
}
