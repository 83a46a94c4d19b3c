package parquetx_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// Columns gives, from the footer alone, the dtype and shape of the tensor Read gives for every
// tensor column, and leaves out the columns Read does not read.
func TestColumns(t *testing.T) {
	cube := seq(t, core.Float32, 6, 2, 3)
	tr, err := cube.Permute(0, 2, 1)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, parquetx.Write(&buf, []parquetx.Column{
		{"emb", seq(t, core.Float16, 6, 4)}, {"cube", tr}, {"id", seq(t, core.Int64, 6)}, {"ok", seq(t, core.Bool, 6)},
	}))
	cols, err := parquetx.Columns(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		dtype core.DLDataType
		shape []int64
		perm  []int
	}{
		{"emb", core.Float16, []int64{6, 4}, nil},
		{"cube", core.Float32, []int64{6, 3, 2}, []int{1, 0}},
		{"id", core.Int64, []int64{6}, nil},
		{"ok", core.Bool, []int64{6}, nil},
	} {
		i := indexOf(cols, c.name)
		require.GreaterOrEqual(t, i, 0, c.name)
		got := cols[i]
		assert.Equal(t, c.dtype, got.DType, c.name)
		assert.Equal(t, c.shape, got.Shape, c.name)
		assert.Equal(t, c.perm, got.Permutation, c.name)
		x, err := parquetx.Read(bytes.NewReader(buf.Bytes()), c.name)
		require.NoError(t, err, c.name)
		assert.Equal(t, x.DType(), got.DType, "%s: as Read gives it", c.name)
		assert.Equal(t, x.Shape(), got.Shape, "%s: as Read gives it", c.name)
		x.Release()
	}
	assert.Len(t, cols, 4)

	// a file of FixedSizeList<FixedSizeList<int32>> and a string column: the list is a tensor
	// column, the strings are not
	inner := arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "m", Type: arrow.FixedSizeListOf(3, inner)},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	lb := b.Field(0).(*array.FixedSizeListBuilder)
	ib := lb.ValueBuilder().(*array.FixedSizeListBuilder)
	vb := ib.ValueBuilder().(*array.Int32Builder)
	for r := range 5 {
		lb.Append(true)
		for j := range 3 {
			ib.Append(true)
			vb.AppendValues([]int32{int32(r), int32(j)}, nil)
		}
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprint(r))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var nested bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &nested, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	cols, err = parquetx.Columns(bytes.NewReader(nested.Bytes()))
	require.NoError(t, err)
	require.Len(t, cols, 1)
	assert.Equal(t, "m", cols[0].Name)
	assert.Equal(t, core.Int32, cols[0].DType)
	assert.Equal(t, []int64{5, 3, 2}, cols[0].Shape, "rows of every row group")
	assert.IsType(t, &arrow.FixedSizeListType{}, cols[0].Type)
	_, isTensor := cols[0].Type.(*arrowx.FixedShapeTensorType)
	assert.False(t, isTensor)

	// not Parquet, or cut short: an error, no panic
	for _, bad := range [][]byte{nil, []byte("PAR1 not really PAR1"), buf.Bytes()[:buf.Len()/2], buf.Bytes()[buf.Len()/2:]} {
		_, err := parquetx.Columns(bytes.NewReader(bad))
		assert.Error(t, err, "%q", bad[:min(len(bad), 16)])
	}
}

// Columns leaves the file it reads open, for the caller to read on and close.
func TestColumnsLeavesFileOpen(t *testing.T) {
	name := filepath.Join(t.TempDir(), "t.parquet")
	require.NoError(t, parquetx.WriteFile(name, []parquetx.Column{{"x", seq(t, core.Float32, 3, 2)}}))
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	cols, err := parquetx.Columns(f)
	require.NoError(t, err)
	require.Len(t, cols, 1)
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err, "the file is still open")
	cols, err = parquetx.Columns(f)
	require.NoError(t, err)
	assert.Len(t, cols, 1)
}

func indexOf(cols []parquetx.ColumnInfo, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Columns lists the tensor columns of a file without decoding them.
func ExampleColumns() {
	var buf bytes.Buffer
	emb := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	ids := core.MustFromSlice([]int64{7, 8, 9}, 3)
	if err := parquetx.Write(&buf, []parquetx.Column{{"emb", emb}, {"id", ids}}); err != nil {
		panic(err)
	}
	cols, err := parquetx.Columns(bytes.NewReader(buf.Bytes()))
	if err != nil {
		panic(err)
	}
	for _, c := range cols {
		fmt.Println(c.Name, c.DType, c.Shape)
	}
	// Output:
	// emb float32 [3 2]
	// id int64 [3]
}
