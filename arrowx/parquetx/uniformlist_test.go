package parquetx_test

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// listFile writes rows as a Parquet list<float32> column "v" (large: large_list), without the
// Arrow schema, as DuckDB writes an ARRAY column; a nil row is a null.
func listFile(t *testing.T, rows [][]float32, large bool) *bytes.Reader {
	t.Helper()
	var dt arrow.DataType = arrow.ListOf(arrow.PrimitiveTypes.Float32)
	if large {
		dt = arrow.LargeListOf(arrow.PrimitiveTypes.Float32)
	}
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	lb := b.(array.ListLikeBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	for _, r := range rows {
		if r == nil {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		vb.AppendValues(r, nil)
	}
	arr := b.NewArray()
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: dt, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(len(rows)))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return bytes.NewReader(buf.Bytes())
}

// TestUniformList: a list column whose rows all hold n values reads as [rows, n]; rows of
// different lengths, or null rows, are refused with ErrColumn, naming what differs.
func TestUniformList(t *testing.T) {
	for _, large := range []bool{false, true} {
		got, err := parquetx.Read(listFile(t, [][]float32{{1, 2, 3}, {4, 5, 6}}, large), "v")
		require.NoError(t, err)
		assert.Equal(t, []int64{2, 3}, got.Shape())
		vals, err := core.ReadOnlyElements[float32](got)
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, vals)
		got.Release()

		_, err = parquetx.Read(listFile(t, [][]float32{{1, 2}, {3, 4, 5}}, large), "v")
		require.ErrorIs(t, err, parquetx.ErrColumn)
		assert.Contains(t, err.Error(), "row 0 has 2 values, row 1 3")
		_, err = parquetx.Read(listFile(t, [][]float32{{1, 2}, nil}, large), "v")
		require.ErrorIs(t, err, parquetx.ErrColumn)
		assert.Contains(t, err.Error(), "1 null rows of 2")
	}
}
