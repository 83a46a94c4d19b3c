package parquetx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// TestWriteRecordBool8Tensors: a fixed_shape_tensor of arrow.bool8 values (an extension type
// inside the extension type's storage, which arrow-go's Parquet reader does not restore by
// itself) is written with its metadata and read back as a bool tensor, the type as stored.
func TestWriteRecordBool8Tensors(t *testing.T) {
	for _, nullable := range []bool{true, false} {
		storage := arrow.FixedSizeListOfField(6, arrow.Field{Name: "item", Type: extensions.NewBool8Type(), Nullable: nullable})
		typ, err := (&arrowx.FixedShapeTensorType{}).Deserialize(storage, `{"shape":[2,3],"dim_names":["r","c"]}`)
		require.NoError(t, err)
		vals := []byte{1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0}
		child := array.NewData(extensions.NewBool8Type(), len(vals), []*amemory.Buffer{nil, amemory.NewBufferBytes(vals)}, nil, 0, 0)
		d := array.NewData(typ, 2, []*amemory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
		arr := array.MakeFromData(d)
		d.Release()
		child.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "mask", Type: typ, Nullable: true}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{arr}, 2)
		arr.Release()

		path := filepath.Join(t.TempDir(), "mask.parquet")
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, parquetx.WriteRecord(f, rec))
		require.NoError(t, f.Close(), "WriteRecord leaves the writer open")
		rec.Release()

		b, err := os.ReadFile(path)
		require.NoError(t, err)
		info, err := parquetx.Describe(bytes.NewReader(b))
		require.NoError(t, err)
		require.Len(t, info.Columns, 1)
		require.True(t, arrow.TypeEqual(typ, info.Columns[0].Type), "%s, want %s", info.Columns[0].Type, typ)
		got, err := parquetx.Read(bytes.NewReader(b), "mask")
		require.NoError(t, err)
		require.Equal(t, core.Bool, got.DType())
		require.Equal(t, []int64{2, 2, 3}, got.Shape())
		gb, err := got.ReadOnlyBytes()
		require.NoError(t, err)
		require.Equal(t, vals, gb)
		got.Release()
	}
}

// Arrow data you already have, extension types and all, goes to Parquet as it is.
func ExampleWriteRecord() {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2, 2, 3)
	arr, err := arrowx.ToFixedShapeTensor(x)
	if err != nil {
		panic(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: arr.DataType()}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	arr.Release()
	defer rec.Release()
	var buf bytes.Buffer
	if err := parquetx.WriteRecord(&buf, rec); err != nil {
		panic(err)
	}
	t, err := parquetx.Read(bytes.NewReader(buf.Bytes()), "emb")
	if err != nil {
		panic(err)
	}
	defer t.Release()
	v, _ := core.At[float32](t, 1, 0, 2)
	fmt.Println(t.Shape(), v)
	// Output: [2 2 3] 9
}
