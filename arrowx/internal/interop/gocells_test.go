package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// tensorColumn is the name of the one column of every tensor cell's file.
const tensorColumn = "tensor"

// fixedArray is the cell's arrow.fixed_shape_tensor array: fixedRows tensors of fixedShape,
// with dim_names and permutation, made with arrowx's type (NewFixedShapeTensorType for nullable
// children, Deserialize of the storage for non-nullable ones).
func fixedArray(c cell) (arrow.Array, error) {
	vt := arrowType(c.DType)
	size := prod(fixedShape)
	storage := arrow.FixedSizeListOfField(int32(size), arrow.Field{Name: "item", Type: vt, Nullable: c.Nullable})
	var ft arrow.ExtensionType
	var err error
	if c.Nullable {
		ft, err = arrowx.NewFixedShapeTensorType(vt, fixedShape, fixedDimNames, fixedPermutation)
	} else {
		meta, _ := json.Marshal(fixedMeta())
		ft, err = (&arrowx.FixedShapeTensorType{}).Deserialize(storage, string(meta))
	}
	if err != nil {
		return nil, err
	}
	values := valuesData(c.DType, 0, fixedRows*int(size))
	defer values.Release()
	d := array.NewData(ft, fixedRows, []*amemory.Buffer{nil}, []arrow.ArrayData{values}, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// variableArray is the cell's arrow.variable_shape_tensor array: one tensor of each of
// variableShapes, with dim_names and uniform_shape.
func variableArray(c cell) (arrow.Array, error) {
	vt := arrowType(c.DType)
	var typ arrow.ExtensionType
	var err error
	if c.Nullable {
		typ, err = arrowx.NewVariableShapeTensorType(vt, len(variableUniform), variableDimNames, nil, variableUniform)
	} else {
		proto, err := arrowx.NewVariableShapeTensorType(vt, len(variableUniform), nil, nil, nil)
		if err != nil {
			return nil, err
		}
		fields := slices.Clone(proto.StorageType().(*arrow.StructType).Fields())
		fields[0].Type = arrow.ListOfNonNullable(vt)
		fields[1].Type = arrow.FixedSizeListOfNonNullable(int32(len(variableUniform)), arrow.PrimitiveTypes.Int32)
		meta, _ := json.Marshal(variableMeta())
		typ, err = (&arrowx.VariableShapeTensorType{}).Deserialize(arrow.StructOf(fields...), string(meta))
		if err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	st := typ.StorageType().(*arrow.StructType)
	offsets := []int32{0}
	var shapes []int32
	for _, s := range variableShapes {
		offsets = append(offsets, offsets[len(offsets)-1]+int32(prod(s)))
		for _, d := range s {
			shapes = append(shapes, int32(d))
		}
	}
	n := len(variableShapes)
	values := valuesData(c.DType, 0, int(offsets[n]))
	defer values.Release()
	dataIdx, _ := st.FieldIdx("data")
	shapeIdx, _ := st.FieldIdx("shape")
	list := array.NewData(st.Field(dataIdx).Type, n, []*amemory.Buffer{nil, amemory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))},
		[]arrow.ArrayData{values}, 0, 0)
	defer list.Release()
	sv := array.NewData(arrow.PrimitiveTypes.Int32, len(shapes), []*amemory.Buffer{nil, amemory.NewBufferBytes(arrow.Int32Traits.CastToBytes(shapes))}, nil, 0, 0)
	defer sv.Release()
	shape := array.NewData(st.Field(shapeIdx).Type, n, []*amemory.Buffer{nil}, []arrow.ArrayData{sv}, 0, 0)
	defer shape.Release()
	children := make([]arrow.ArrayData, 2)
	children[dataIdx], children[shapeIdx] = list, shape
	d := array.NewData(typ, n, []*amemory.Buffer{nil}, children, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// goWrite writes the cell's file as dlpack-go does: the array of arrowx's type through arrow-go's
// IPC writers, or parquetx (WriteRecord for the tensor columns, Write for a matrix's columns).
func goWrite(c cell) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	if c.Kind == "matrix" {
		return goWriteMatrix(c)
	}
	var arr arrow.Array
	if c.Kind == "fixed_shape" {
		arr, err = fixedArray(c)
	} else {
		arr, err = variableArray(c)
	}
	if err != nil {
		return err
	}
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: tensorColumn, Type: arr.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	f, err := os.Create(c.Path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	switch c.Format {
	case "parquet":
		return parquetx.WriteRecord(f, rec)
	case "ipc_file":
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
		if err != nil {
			return err
		}
		if err := w.Write(rec); err != nil {
			return err
		}
		return w.Close()
	default:
		w := ipc.NewWriter(f, ipc.WithSchema(schema))
		if err := w.Write(rec); err != nil {
			return err
		}
		return w.Close()
	}
}

// goWriteMatrix writes matrixCols columns c0, c1, ... of matrixRows rows with parquetx.Write:
// column j of the [rows, cols] matrix of the cell's values.
func goWriteMatrix(c cell) error {
	m, err := newTensor(c.DType, 0, matrixRows, matrixCols)
	if err != nil {
		return err
	}
	defer m.Release()
	var cols []parquetx.Column
	for j := range matrixCols {
		col, err := m.Index(1, int64(j))
		if err != nil {
			return err
		}
		defer col.Release()
		cols = append(cols, parquetx.Column{Name: fmt.Sprintf("c%d", j), Tensor: col})
	}
	return parquetx.WriteFile(c.Path, cols)
}

// goRead reads the cell's file as dlpack-go does and compares everything with the cell's
// tensors: the type and its metadata, the storage's child nullability, the values.
func goRead(t *testing.T, c cell) {
	switch {
	case c.Kind == "matrix":
		f, err := os.Open(c.Path)
		require.NoError(t, err)
		defer f.Close()
		cols := make([]string, matrixCols)
		for j := range cols {
			cols[j] = fmt.Sprintf("c%d", j)
		}
		got, err := parquetx.ReadMatrix(f, cols)
		require.NoError(t, err)
		defer got.Release()
		want := tensorOf(t, c.DType, 0, matrixRows, matrixCols)
		defer want.Release()
		arrowtest.RequireSame(t, want, got, c.Name)
	case c.Format == "parquet":
		goReadParquet(t, c)
	default:
		goReadIPC(t, c)
	}
}

func goReadIPC(t *testing.T, c cell) {
	f, err := os.Open(c.Path)
	require.NoError(t, err)
	defer f.Close()
	var recs []arrow.RecordBatch
	if c.Format == "ipc_file" {
		r, err := ipc.NewFileReader(f)
		require.NoError(t, err)
		defer r.Close()
		for i := range r.NumRecords() {
			rec, err := r.RecordBatch(i)
			require.NoError(t, err)
			rec.Retain()
			recs = append(recs, rec)
		}
	} else {
		r, err := ipc.NewReader(f)
		require.NoError(t, err)
		defer r.Release()
		for r.Next() {
			rec := r.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		require.NoError(t, r.Err())
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	require.Len(t, recs, 1, "record batches")
	require.EqualValues(t, 1, recs[0].NumCols())
	arr := recs[0].Column(0)
	checkType(t, c, arr.DataType())
	if c.Kind == "fixed_shape" {
		got, err := arrowx.FromArray(arr)
		require.NoError(t, err)
		defer got.Release()
		checkFixed(t, c, got)
		return
	}
	va, ok := arr.(*arrowx.VariableShapeTensorArray)
	require.True(t, ok, "%T", arr)
	var ts []*core.Tensor
	for i := range va.Len() {
		x, err := va.Tensor(i)
		require.NoError(t, err)
		ts = append(ts, x)
	}
	checkVariable(t, c, ts)
}

func goReadParquet(t *testing.T, c cell) {
	f, err := os.Open(c.Path)
	require.NoError(t, err)
	defer f.Close()
	info, err := parquetx.Describe(f)
	require.NoError(t, err)
	var col *parquetx.ColumnInfo
	for i := range info.Columns {
		if info.Columns[i].Name == tensorColumn {
			col = &info.Columns[i]
		}
	}
	require.NotNil(t, col, "parquetx.Describe lists no tensor column %q: %+v", tensorColumn, info)
	checkType(t, c, col.Type)
	if c.Kind == "fixed_shape" {
		got, err := parquetx.Read(f, tensorColumn)
		require.NoError(t, err)
		defer got.Release()
		checkFixed(t, c, got)
		return
	}
	ts, err := parquetx.ReadTensors(f, tensorColumn)
	require.NoError(t, err)
	checkVariable(t, c, ts)
}

// checkType checks the extension type read: its metadata and its element type, and the
// nullability of its storage's list children.
func checkType(t *testing.T, c cell, dt arrow.DataType) {
	t.Helper()
	switch c.Kind {
	case "fixed_shape":
		ft, ok := dt.(*arrowx.FixedShapeTensorType)
		require.True(t, ok, "read as %s, not arrow.fixed_shape_tensor", dt)
		same, got, want := sameJSON(ft.Serialize(), fixedMeta())
		require.True(t, same, "metadata %s, want %s", got, want)
		require.True(t, arrow.TypeEqual(ft.ValueType(), arrowType(c.DType)), "value type %s, want %s", ft.ValueType(), arrowType(c.DType))
		fsl := ft.StorageType().(*arrow.FixedSizeListType)
		require.Equal(t, c.Nullable, fsl.ElemField().Nullable, "the storage's child nullability (%s)", fsl)
	case "variable_shape":
		vt, ok := dt.(*arrowx.VariableShapeTensorType)
		require.True(t, ok, "read as %s, not arrow.variable_shape_tensor", dt)
		same, got, want := sameJSON(vt.Serialize(), variableMeta())
		require.True(t, same, "metadata %s, want %s", got, want)
		require.True(t, arrow.TypeEqual(vt.ValueType(), arrowType(c.DType)), "value type %s, want %s", vt.ValueType(), arrowType(c.DType))
		st := vt.StorageType().(*arrow.StructType)
		df, ok := st.FieldByName("data")
		require.True(t, ok, "no data field in %s", st)
		sf, ok := st.FieldByName("shape")
		require.True(t, ok, "no shape field in %s", st)
		require.Equal(t, c.Nullable, df.Type.(arrow.ListLikeType).ElemField().Nullable, "the data list's child nullability (%s)", st)
		require.Equal(t, c.Nullable, sf.Type.(arrow.ListLikeType).ElemField().Nullable, "the shape list's child nullability (%s)", st)
	}
}

// checkFixed compares a fixed_shape cell's tensor, [rows, logical shape...], with the values.
func checkFixed(t *testing.T, c cell, got *core.Tensor) {
	t.Helper()
	phys := tensorOf(t, c.DType, 0, append([]int64{int64(fixedRows)}, fixedShape...)...)
	defer phys.Release()
	axes := []int{0}
	for _, p := range fixedPermutation {
		axes = append(axes, p+1)
	}
	want, err := phys.Permute(axes...)
	require.NoError(t, err)
	defer want.Release()
	arrowtest.RequireSame(t, want, got, c.Name)
}

// checkVariable compares a variable_shape cell's tensors with the values, and releases them.
func checkVariable(t *testing.T, c cell, got []*core.Tensor) {
	t.Helper()
	defer func() {
		for _, x := range got {
			x.Release()
		}
	}()
	require.Len(t, got, len(variableShapes))
	k := 0
	for i, s := range variableShapes {
		want := tensorOf(t, c.DType, k, s...)
		arrowtest.RequireSame(t, want, got[i], fmt.Sprintf("%s tensor %d", c.Name, i))
		want.Release()
		k += int(prod(s))
	}
}
