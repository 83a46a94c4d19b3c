package arrowx_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
)

// extField is a field of storage type typ that names an extension type in its metadata, as
// Arrow's IPC format and every implementation's writer store one (the keys in the order
// arrow-go's IPC writer sorts them into).
func extField(name string, typ arrow.DataType, ext, meta string) arrow.Field {
	md := arrow.NewMetadata([]string{"ARROW:extension:metadata", "ARROW:extension:name"}, []string{meta, ext})
	return arrow.Field{Name: name, Type: typ, Nullable: true, Metadata: md}
}

// ipcStream writes one record batch of the columns as an Arrow IPC stream.
func ipcStream(t *testing.T, fields []arrow.Field, cols []arrow.Array) []byte {
	t.Helper()
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, cols, int64(cols[0].Len()))
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// readStream reads the one record batch of an IPC stream (retained: the caller releases it).
func readStream(t *testing.T, b []byte) arrow.RecordBatch {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	defer r.Release()
	require.True(t, r.Next(), "%v", r.Err())
	rec := r.RecordBatch()
	rec.Retain()
	return rec
}

// TestFixedShapeTensorAnyChildField: a fixed_shape_tensor whose FixedSizeList child is named
// anything and is nullable or not (arrow-go and pyarrow write a nullable "item", arrow-rs a
// non-nullable one) is read, keeps its stored child field, reads its values, and is written
// back byte for byte as it came.
func TestFixedShapeTensorAnyChildField(t *testing.T) {
	for _, child := range []arrow.Field{
		{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: false},
		{Name: "element", Type: arrow.PrimitiveTypes.Float32, Nullable: false},
		{Name: "", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	} {
		t.Run(fmt.Sprintf("%s-nullable=%v", child.Name, child.Nullable), func(t *testing.T) {
			typ := arrow.FixedSizeListOfField(6, child)
			ext, err := (&arrowx.FixedShapeTensorType{}).Deserialize(typ, `{"shape":[2,3],"dim_names":["r","c"]}`)
			require.NoError(t, err)
			ft := ext.(*arrowx.FixedShapeTensorType)
			assert.Equal(t, child, ft.StorageType().(*arrow.FixedSizeListType).ElemField(), "the stored child field is kept")
			assert.Equal(t, arrow.PrimitiveTypes.Float32, ft.ValueType())
			assert.Contains(t, ft.String(), "value_type=float32, shape=[2 3]")

			b := array.NewFixedSizeListBuilderWithField(memory.DefaultAllocator, 6, child)
			defer b.Release()
			b.AppendValues([]bool{true, true})
			b.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, nil)
			storage := b.NewArray()
			defer storage.Release()
			first := ipcStream(t, []arrow.Field{extField("t", typ, arrowx.FixedShapeTensorName, ft.Serialize())}, []arrow.Array{storage})
			rec := readStream(t, first)
			defer rec.Release()
			require.IsType(t, &arrowx.FixedShapeTensorType{}, rec.Column(0).DataType())
			x, err := arrowx.FromArray(rec.Column(0))
			require.NoError(t, err)
			defer x.Release()
			assert.Equal(t, []int64{2, 2, 3}, x.Shape())
			vals, err := core.ReadOnlyElements[float32](x)
			require.NoError(t, err)
			assert.Equal(t, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, vals)
			again := ipcStream(t, rec.Schema().Fields(), rec.Columns())
			assert.Equal(t, first, again, "written back byte for byte")
		})
	}
}

// TestVariableShapeTensorFieldsInAnyOrder: a variable_shape_tensor whose storage struct has
// its fields in the other order ("shape" then "data", which the specification allows: they are
// named) is read as well as the usual one: directly, and through arrow-go's IPC reader, where
// it used to panic (ValueType assumed the first field was the data).
func TestVariableShapeTensorFieldsInAnyOrder(t *testing.T) {
	for _, nullable := range []bool{true, false} {
		t.Run(fmt.Sprint("nullable=", nullable), func(t *testing.T) {
			data := arrow.Field{Name: "data", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Int16, Nullable: nullable}), Nullable: nullable}
			shape := arrow.Field{Name: "shape", Type: arrow.FixedSizeListOfField(2, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Int32, Nullable: nullable}), Nullable: nullable}
			st := arrow.StructOf(shape, data)
			ext, err := (&arrowx.VariableShapeTensorType{}).Deserialize(st, `{"dim_names":["h","w"]}`)
			require.NoError(t, err)
			vt := ext.(*arrowx.VariableShapeTensorType)
			assert.Equal(t, arrow.PrimitiveTypes.Int16, vt.ValueType())
			assert.Contains(t, vt.String(), "value_type=int16, ndim=2")
			assert.True(t, arrow.TypeEqual(st, vt.StorageType()), "the stored struct is kept")

			// two elements: [2,3] and [1,2]
			b := array.NewStructBuilder(memory.DefaultAllocator, st)
			defer b.Release()
			sb := b.FieldBuilder(0).(*array.FixedSizeListBuilder)
			lb := b.FieldBuilder(1).(*array.ListBuilder)
			for _, e := range []struct{ shape []int32 }{{[]int32{2, 3}}, {[]int32{1, 2}}} {
				b.Append(true)
				sb.Append(true)
				sb.ValueBuilder().(*array.Int32Builder).AppendValues(e.shape, nil)
				lb.Append(true)
				n := int(e.shape[0] * e.shape[1])
				for k := range n {
					lb.ValueBuilder().(*array.Int16Builder).Append(int16(10*n + k))
				}
			}
			storage := b.NewArray()
			defer storage.Release()
			first := ipcStream(t, []arrow.Field{extField("v", st, arrowx.VariableShapeTensorName, vt.Serialize())}, []arrow.Array{storage})
			rec := readStream(t, first)
			defer rec.Release()
			arr, ok := rec.Column(0).(*arrowx.VariableShapeTensorArray)
			require.True(t, ok, "%T", rec.Column(0))
			assert.NotEmpty(t, arr.String())
			for i, want := range [][]int16{{60, 61, 62, 63, 64, 65}, {20, 21}} {
				x, err := arr.Tensor(i)
				require.NoError(t, err)
				got, err := core.ReadOnlyElements[int16](x)
				require.NoError(t, err)
				assert.Equal(t, want, got)
				x.Release()
			}
			_, err = arrowx.FromArray(arr)
			assert.ErrorContains(t, err, "element 1 has shape [1 2], element 0 [2 3]")
			again := ipcStream(t, rec.Schema().Fields(), rec.Columns())
			assert.Equal(t, first, again, "written back byte for byte")
		})
	}
}

// TestTensorStorageRefusedSaysWhy: storage the specification does not allow is refused with
// ErrMalformed, naming what is wrong with it.
func TestTensorStorageRefusedSaysWhy(t *testing.T) {
	f32 := arrow.PrimitiveTypes.Float32
	list := arrow.ListOf(f32)
	shape2 := arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32)
	for _, c := range []struct {
		ext     arrow.ExtensionType
		storage arrow.DataType
		meta    string
		why     string
	}{
		{&arrowx.FixedShapeTensorType{}, arrow.FixedSizeListOfNonNullable(5, f32), `{"shape":[2,3]}`, "stored as FixedSizeList<5>, not <6> (the product of the shape)"},
		{&arrowx.FixedShapeTensorType{}, list, `{"shape":[2,3]}`, "not a FixedSizeList"},
		{&arrowx.VariableShapeTensorType{}, arrow.StructOf(arrow.Field{Name: "values", Type: list}, arrow.Field{Name: "shape", Type: shape2}), ``,
			`fields ["values" "shape"], not of "data" and "shape"`},
		{&arrowx.VariableShapeTensorType{}, arrow.StructOf(arrow.Field{Name: "data", Type: list}, arrow.Field{Name: "data", Type: list}), ``,
			`fields ["data" "data"]`},
		{&arrowx.VariableShapeTensorType{}, arrow.StructOf(arrow.Field{Name: "data", Type: list}, arrow.Field{Name: "shape", Type: shape2},
			arrow.Field{Name: "permutation", Type: shape2}), ``, `fields ["data" "shape" "permutation"]`},
		{&arrowx.VariableShapeTensorType{}, arrow.StructOf(arrow.Field{Name: "shape", Type: shape2}, arrow.Field{Name: "data", Type: arrow.LargeListOf(f32)}), ``,
			"data field is large_list<item: float32, nullable>, not a List"},
		{&arrowx.VariableShapeTensorType{}, arrow.StructOf(arrow.Field{Name: "shape", Type: list}, arrow.Field{Name: "data", Type: list}), ``,
			"shape field is list<item: float32, nullable>, not a FixedSizeList<int32>"},
	} {
		_, err := c.ext.Deserialize(c.storage, c.meta)
		require.Error(t, err, "%s", c.storage)
		assert.ErrorIs(t, err, arrowx.ErrMalformed)
		assert.ErrorContains(t, err, c.why)
	}
}

// TestZeroTensorTypesDoNotPanic: the zero values of the extension types (no storage) answer
// ValueType and String without a panic.
func TestZeroTensorTypesDoNotPanic(t *testing.T) {
	assert.Nil(t, (&arrowx.FixedShapeTensorType{}).ValueType())
	assert.NotEmpty(t, (&arrowx.FixedShapeTensorType{}).String())
	assert.Nil(t, (&arrowx.VariableShapeTensorType{}).ValueType())
	assert.NotEmpty(t, (&arrowx.VariableShapeTensorType{}).String())
}
