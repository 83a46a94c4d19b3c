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
	cols, err = parquetx.Columns(bytes.NewReader(writeRecord(t, rec, 2)))
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

// extensionFile writes arr, an extension array, as the one column "v" of a Parquet file, its
// storage with the extension's name and metadata on the field, as Arrow's IPC (and Write) does.
func extensionFile(t *testing.T, arr arrow.Array) []byte {
	t.Helper()
	et := arr.DataType().(arrow.ExtensionType)
	storage := arr.(array.ExtensionArray).Storage()
	md := arrow.NewMetadata([]string{"ARROW:extension:name", "ARROW:extension:metadata"}, []string{et.ExtensionName(), et.Serialize()})
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: storage.DataType(), Metadata: md}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{storage}, int64(storage.Len()))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// Describe lists an arrow.variable_shape_tensor column as one: its dtype, its tensors' number
// of dimensions, the row count alone as Shape, its uniform_shape (in the order of the tensors
// ReadTensors gives) and dim_names; the other columns keep their description.
func TestDescribeVariableShape(t *testing.T) {
	rows := []*core.Tensor{seq(t, core.Float64, 2, 3), seq(t, core.Float64, 2, 1), seq(t, core.Float64, 2, 0)}
	var written bytes.Buffer
	require.NoError(t, parquetx.Write(&written, []parquetx.Column{{"id", seq(t, core.Int64, 3)}, {"emb", seq(t, core.Float32, 3, 4)}},
		parquetx.VariableShapeColumn("boxes", rows...), parquetx.VariableShapeColumn("flags", seq(t, core.Bool, 1), seq(t, core.Bool, 5), seq(t, core.Bool, 2))))

	named, err := arrowx.NewVariableShapeTensorArray(rows, []string{"c", "n"}, []int64{2, -1})
	require.NoError(t, err)
	defer named.Release()
	// the same storage, typed with a permutation: the tensors are [n, 2]
	pt, err := arrowx.NewVariableShapeTensorType(arrow.PrimitiveTypes.Float64, 2, nil, []int{1, 0}, []int64{2, -1})
	require.NoError(t, err)
	permuted := array.NewExtensionArrayWithStorage(pt, named.Storage())
	defer permuted.Release()

	type want struct {
		name    string
		dtype   core.DLDataType
		shape   []int64
		ndim    int
		varies  bool
		uniform []int64
		names   []string
		perm    []int
	}
	for _, c := range []struct {
		file string
		data []byte
		cols []want
	}{
		{"Write", written.Bytes(), []want{
			{"id", core.Int64, []int64{3}, 0, false, nil, nil, nil},
			{"emb", core.Float32, []int64{3, 4}, 1, false, nil, nil, nil},
			{"boxes", core.Float64, []int64{3}, 2, true, nil, nil, nil},
			{"flags", core.Bool, []int64{3}, 1, true, nil, nil, nil},
		}},
		{"dim_names and uniform_shape", extensionFile(t, named), []want{
			{"v", core.Float64, []int64{3}, 2, true, []int64{2, -1}, []string{"c", "n"}, nil},
		}},
		{"permutation", extensionFile(t, permuted), []want{
			{"v", core.Float64, []int64{3}, 2, true, []int64{-1, 2}, nil, []int{1, 0}},
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			info, err := parquetx.Describe(bytes.NewReader(c.data))
			require.NoError(t, err)
			assert.Equal(t, []int64{3}, info.RowGroups)
			require.Len(t, info.Columns, len(c.cols))
			for i, w := range c.cols {
				got := info.Columns[i]
				assert.Equal(t, w.name, got.Name)
				assert.Equal(t, w.dtype, got.DType, w.name)
				assert.Equal(t, w.shape, got.Shape, w.name)
				assert.Equal(t, w.ndim, got.Ndim, w.name)
				assert.Equal(t, w.varies, got.VariableShape, w.name)
				assert.Equal(t, w.uniform, got.UniformShape, w.name)
				assert.Equal(t, w.names, got.DimNames, w.name)
				assert.Equal(t, w.perm, got.Permutation, w.name)
				if !w.varies {
					continue
				}
				assert.IsType(t, &arrowx.VariableShapeTensorType{}, got.Type, w.name)
				// what the tensors ReadTensors gives agree with
				ts, err := parquetx.ReadTensors(bytes.NewReader(c.data), w.name)
				require.NoError(t, err, w.name)
				require.Len(t, ts, int(got.Shape[0]), w.name)
				for r, x := range ts {
					assert.Equal(t, got.DType, x.DType(), "%s row %d", w.name, r)
					require.Equal(t, got.Ndim, x.Ndim(), "%s row %d", w.name, r)
					for k, d := range got.UniformShape {
						if d >= 0 {
							assert.Equal(t, d, x.Dim(k), "%s row %d dimension %d", w.name, r, k)
						}
					}
					x.Release()
				}
			}
			cols, err := parquetx.Columns(bytes.NewReader(c.data))
			require.NoError(t, err)
			assert.Equal(t, info.Columns, cols)
		})
	}
}
