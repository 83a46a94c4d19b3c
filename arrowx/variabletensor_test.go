package arrowx_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/nodetest"
)

// TestVariableShapeTensorRoundTrip: tensors of every Arrow dtype and several ranks, each of
// its own shape (empty ones too), into an arrow.variable_shape_tensor array, through IPC (the
// registered type comes back), and out element by element over the array's memory.
func TestVariableShapeTensorRoundTrip(t *testing.T) {
	for _, dt := range arrowDTypes {
		for _, shapes := range [][][]int64{
			{{3}, {0}, {5}},
			{{2, 3}, {4, 1}, {1, 1}},
			{{2, 2, 3}, {1, 3, 2}},
			{{1, 2, 1, 2}, {2, 0, 1, 1}},
		} {
			name := fmt.Sprintf("%s%v", dt, shapes)
			var ins []*core.Tensor
			for _, s := range shapes {
				ins = append(ins, seqTensor(t, dt, s...))
			}
			arr, err := arrowx.NewVariableShapeTensorArray(ins, nil, nil)
			require.NoError(t, err, name)
			vt := arr.DataType().(*arrowx.VariableShapeTensorType)
			assert.Equal(t, "arrow.variable_shape_tensor", vt.ExtensionName())
			assert.Equal(t, len(shapes[0]), vt.Ndim())
			_, col := ipcRoundTrip(t, arr)
			back, ok := col.(*arrowx.VariableShapeTensorArray)
			require.True(t, ok, "%s: arrow-go's IPC reader yields %T", name, col)
			for i, in := range ins {
				for _, a := range []*arrowx.VariableShapeTensorArray{arr, back} {
					got, err := a.Tensor(i)
					require.NoError(t, err, name)
					requireSameValues(t, in, got, fmt.Sprintf("%s element %d", name, i))
					if dt != core.Bool && in.Len() > 0 && a == back {
						assert.True(t, got.ReadOnly(), "over the IPC bytes")
					}
					got.Release()
				}
				in.Release()
			}
			col.Release()
			arr.Release()
		}
	}
}

// TestVariableShapeTensorMetadata: names, permutation and uniform shape as the specification
// writes them; a permutation becomes strides.
func TestVariableShapeTensorMetadata(t *testing.T) {
	vt, err := arrowx.NewVariableShapeTensorType(arrow.PrimitiveTypes.Float32, 2, []string{"h", "w"}, []int{1, 0}, []int64{-1, 3})
	require.NoError(t, err)
	assert.JSONEq(t, `{"dim_names":["h","w"],"permutation":[1,0],"uniform_shape":[null,3]}`, vt.Serialize())
	again, err := vt.Deserialize(vt.StorageType(), vt.Serialize())
	require.NoError(t, err)
	assert.True(t, vt.ExtensionEquals(again))
	plain, err := vt.Deserialize(vt.StorageType(), "")
	require.NoError(t, err)
	assert.Nil(t, plain.(*arrowx.VariableShapeTensorType).UniformShape())

	// an element stored [2 3] under permutation [1 0] is read [3 2], transposed, no copy
	x := core.MustFromSlice([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	arr, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{x}, nil, []int64{-1, 3})
	require.NoError(t, err)
	defer arr.Release()
	permuted := array.NewExtensionArrayWithStorage(again.(*arrowx.VariableShapeTensorType), arr.Storage()).(*arrowx.VariableShapeTensorArray)
	defer permuted.Release()
	got, err := permuted.Tensor(0)
	require.NoError(t, err)
	defer got.Release()
	assert.Equal(t, []int64{3, 2}, got.Shape())
	v, err := core.At[float32](got, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(5), v)

	_, err = arrowx.NewVariableShapeTensorArray([]*core.Tensor{core.MustFromSlice([]float32{1, 2}, 1, 2)}, nil, []int64{-1, 3})
	require.ErrorIs(t, err, arrowx.ErrMismatch)
	_, err = arrowx.NewVariableShapeTensorArray([]*core.Tensor{x, core.MustFromSlice([]float64{1}, 1, 1)}, nil, nil)
	require.ErrorIs(t, err, arrowx.ErrMismatch)
}

// TestVariableShapeTensorHostile: metadata that does not fit the storage, and shape values
// that do not fit the data, are refused with ErrMalformed.
func TestVariableShapeTensorHostile(t *testing.T) {
	storage := func(n int32) arrow.DataType {
		return arrow.StructOf(arrow.Field{Name: "data", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
			arrow.Field{Name: "shape", Type: arrow.FixedSizeListOf(n, arrow.PrimitiveTypes.Int32)})
	}
	for _, c := range []struct {
		storage arrow.DataType
		meta    string
		why     string
	}{
		{storage(2), `{"permutation":[0,0]}`, "not a permutation"},
		{storage(2), `{"permutation":[0,1,2]}`, "permutation [0 1 2]"},
		{storage(2), `{"dim_names":["a"]}`, "1 dim_names"},
		{storage(2), `{"uniform_shape":[1]}`, "uniform_shape [1] for 2 dimensions"},
		{storage(2), `{"uniform_shape":[-3,1]}`, "dimension -3"},
		{storage(2), `{"uniform_shape":[1,99999999999]}`, "dimension 99999999999"},
		{storage(2), `{"extra":1}`, "unknown field"},
		{storage(2), `{} {}`, "data after"},
		{storage(2), `[`, "unexpected EOF"},
		{arrow.PrimitiveTypes.Float32, `{}`, "not a Struct"},
		{arrow.StructOf(arrow.Field{Name: "data", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
			arrow.Field{Name: "shape", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64)}), `{}`, "FixedSizeList<int32>"},
	} {
		_, err := (&arrowx.VariableShapeTensorType{}).Deserialize(c.storage, c.meta)
		require.Error(t, err, c.meta)
		assert.ErrorContains(t, err, c.why, c.meta)
		assert.ErrorIs(t, err, arrowx.ErrMalformed, c.meta)
	}

	// shapes that lie about the data: built by hand
	vt, err := arrowx.NewVariableShapeTensorType(arrow.PrimitiveTypes.Float32, 2, nil, nil, []int64{-1, 2})
	require.NoError(t, err)
	for _, c := range []struct {
		offsets []int32
		shape   []int32
		why     string
	}{
		{[]int32{0, 6}, []int32{3, 2}, ""},
		{[]int32{0, 6}, []int32{2, 2}, "4 elements) and 6 values"},
		{[]int32{0, 6}, []int32{-3, -2}, "dimension -3"},
		{[]int32{0, 6}, []int32{2, 3}, "uniform_shape [-1 2] says 2"},
		{[]int32{4, 2}, []int32{1, 2}, "offsets are 4 to 2"},
		{[]int32{0, 600}, []int32{300, 2}, "ends at value 600 of 6"},
	} {
		arr := handMade(t, vt, c.offsets, c.shape)
		got, err := arr.Tensor(0)
		if c.why == "" {
			require.NoError(t, err)
			assert.Equal(t, []int64{3, 2}, got.Shape())
			got.Release()
		} else {
			require.ErrorIs(t, err, arrowx.ErrMalformed, c.why)
			assert.ErrorContains(t, err, c.why)
		}
		_, err = arr.Tensor(1)
		assert.ErrorIs(t, err, arrowx.ErrMalformed, "out of range")
		arr.Release()
	}
}

// handMade is a one-element array of vt over six float32 values with the given offsets and shape.
func handMade(t *testing.T, vt *arrowx.VariableShapeTensorType, offsets, shape []int32) *arrowx.VariableShapeTensorArray {
	t.Helper()
	b := array.NewStructBuilder(memory.DefaultAllocator, vt.StorageType().(*arrow.StructType))
	defer b.Release()
	b.Append(true)
	lb := b.FieldBuilder(0).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{0, 1, 2, 3, 4, 5}, nil)
	sb := b.FieldBuilder(1).(*array.FixedSizeListBuilder)
	sb.Append(true)
	sb.ValueBuilder().(*array.Int32Builder).AppendValues(shape, nil)
	st := b.NewArray()
	defer st.Release()
	d := st.Data().Children()[0]
	copy(arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes()), offsets)
	return array.NewExtensionArrayWithStorage(vt, st).(*arrowx.VariableShapeTensorArray)
}

func FuzzVariableShapeMetadata(f *testing.F) {
	f.Add(int32(2), `{"dim_names":["a","b"],"permutation":[1,0],"uniform_shape":[null,3]}`)
	f.Add(int32(1), ``)
	f.Add(int32(3), `{"uniform_shape":[1,2,3]}`)
	f.Fuzz(func(t *testing.T, n int32, meta string) {
		if n <= 0 || n > 64 {
			return
		}
		st := arrow.StructOf(arrow.Field{Name: "data", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)},
			arrow.Field{Name: "shape", Type: arrow.FixedSizeListOf(n, arrow.PrimitiveTypes.Int32)})
		typ, err := (&arrowx.VariableShapeTensorType{}).Deserialize(st, meta)
		if err != nil {
			require.ErrorIs(t, err, arrowx.ErrMalformed)
			return
		}
		vt := typ.(*arrowx.VariableShapeTensorType)
		again, err := vt.Deserialize(vt.StorageType(), vt.Serialize())
		require.NoError(t, err, "what Serialize writes, Deserialize reads")
		require.True(t, vt.ExtensionEquals(again))
		require.Equal(t, int(n), vt.Ndim())
	})
}

// FuzzVariableShapeElement: element 0 of a hand-made array whose offsets and shape values the
// fuzzer writes is a tensor of those values, or an ErrMalformed; never a panic.
func FuzzVariableShapeElement(f *testing.F) {
	f.Add(int32(0), int32(6), int32(3), int32(2))
	f.Add(int32(0), int32(6), int32(-1), int32(2))
	f.Add(int32(2), int32(6), int32(2), int32(2))
	f.Add(int32(0), int32(1<<30), int32(1<<15), int32(1<<15))
	vt, err := arrowx.NewVariableShapeTensorType(arrow.PrimitiveTypes.Float32, 2, nil, nil, nil)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, o0, o1, s0, s1 int32) {
		arr := handMade(t, vt, []int32{o0, o1}, []int32{s0, s1})
		defer arr.Release()
		if all, err := arrowx.FromArray(arr); err == nil { // the whole array, the same checks
			require.Equal(t, []int64{1, int64(s0), int64(s1)}, all.Shape())
			all.Release()
		}
		got, err := arr.Tensor(0)
		if err != nil {
			require.ErrorIs(t, err, arrowx.ErrMalformed)
			return
		}
		defer got.Release()
		require.Equal(t, []int64{int64(s0), int64(s1)}, got.Shape())
		require.LessOrEqual(t, o1, int32(6))
	})
}

// TestVariableShapeTensorNode: Arrow's JavaScript implementation reads an
// arrow.variable_shape_tensor column arrowx writes (extension name and metadata on the field,
// each element's data and shape), and arrowx reads one it writes.
func TestVariableShapeTensorNode(t *testing.T) {
	node := nodetest.Install(t, "apache-arrow@21.2.0")
	a := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := core.MustFromSlice([]float32{7, 8}, 1, 2)
	arr, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{a, b}, []string{"r", "c"}, nil)
	require.NoError(t, err)
	defer arr.Release()
	file, _ := ipcRoundTrip(t, arr)
	dir := t.TempDir()
	path := filepath.Join(dir, "go.arrow")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	out := node.Run(t, `
const fs = require("fs");
const { tableFromIPC, tableToIPC, Table, Field, List, FixedSizeList, Float64, Int32, Schema, makeData, RecordBatch, Struct } = require("apache-arrow");
const t = tableFromIPC(fs.readFileSync(process.argv[1]));
const f = t.schema.fields[0];
const col = t.getChildAt(0);
const rows = [];
for (let i = 0; i < col.length; i++) { const e = col.get(i); rows.push({ data: Array.from(e.data), shape: Array.from(e.shape) }); }
// write one: two float64 tensors of shapes [2 2] and [3 1], uniform_shape [null, null]
const values = makeData({ type: new Float64(), length: 7, data: Float64Array.from([1, 2, 3, 4, 5, 6, 7]) });
const dataType = new List(new Field("item", new Float64(), true));
const data = makeData({ type: dataType, length: 2, valueOffsets: Int32Array.from([0, 4, 7]), child: values });
const shapeVals = makeData({ type: new Int32(), length: 4, data: Int32Array.from([2, 2, 3, 1]) });
const shapeType = new FixedSizeList(2, new Field("item", new Int32(), false));
const shape = makeData({ type: shapeType, length: 2, child: shapeVals });
const stType = new Struct([new Field("data", dataType, true), new Field("shape", shapeType, false)]);
const st = makeData({ type: stType, length: 2, children: [data, shape] });
const md = new Map([["ARROW:extension:name", "arrow.variable_shape_tensor"], ["ARROW:extension:metadata", '{"uniform_shape":[null,null]}']]);
const schema = new Schema([new Field("v", stType, true, md)]);
const out = new Table(schema, new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 2, children: [st] })));
fs.writeFileSync(process.argv[2], tableToIPC(out, "file"));
console.log(JSON.stringify({ name: f.metadata.get("ARROW:extension:name"), meta: f.metadata.get("ARROW:extension:metadata"), rows }));
`, path, filepath.Join(dir, "node.arrow"))
	var got struct {
		Name, Meta string
		Rows       []struct{ Data, Shape []float64 }
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Equal(t, "arrow.variable_shape_tensor", got.Name)
	assert.JSONEq(t, `{"dim_names":["r","c"]}`, got.Meta)
	require.Len(t, got.Rows, 2)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, got.Rows[0].Data)
	assert.Equal(t, []float64{2, 3}, got.Rows[0].Shape)
	assert.Equal(t, []float64{7, 8}, got.Rows[1].Data)
	assert.Equal(t, []float64{1, 2}, got.Rows[1].Shape)

	nb, err := os.ReadFile(filepath.Join(dir, "node.arrow"))
	require.NoError(t, err)
	r, err := ipc.NewFileReader(bytes.NewReader(nb))
	require.NoError(t, err)
	defer r.Close()
	rec, err := r.RecordBatch(0)
	require.NoError(t, err)
	v, ok := rec.Column(0).(*arrowx.VariableShapeTensorArray)
	require.True(t, ok, "%s", rec.Column(0).DataType())
	assert.Equal(t, []int64{-1, -1}, v.ExtensionType().(*arrowx.VariableShapeTensorType).UniformShape())
	for i, want := range []struct {
		shape []int64
		vals  []float64
	}{{[]int64{2, 2}, []float64{1, 2, 3, 4}}, {[]int64{3, 1}, []float64{5, 6, 7}}} {
		e, err := v.Tensor(i)
		require.NoError(t, err)
		assert.Equal(t, want.shape, e.Shape())
		vals, err := core.ReadOnlyElements[float64](e)
		require.NoError(t, err)
		assert.Equal(t, want.vals, vals)
		e.Release()
	}
}

// TestVariableShapeTensorFromArray: FromArray of an arrow.variable_shape_tensor array whose
// elements share one shape is the [N, shape...] tensor over the data's values; elements of
// different shapes are refused, pointing to Tensor(i).
func TestVariableShapeTensorFromArray(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Float32, core.Int64, core.Bool} {
		a, b, c := seqTensor(t, dt, 2, 3), seqTensor(t, dt, 2, 3), seqTensor(t, dt, 2, 3)
		arr, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{a, b, c}, nil, nil)
		require.NoError(t, err)
		var copied bool
		x, err := arrowx.FromArray(arr, adapters.ReportCopy(&copied))
		require.NoError(t, err, dt.String())
		assert.Equal(t, []int64{3, 2, 3}, x.Shape())
		assert.Equal(t, dt == core.Bool, copied, "%s: shared unless bool", dt)
		for i, want := range []*core.Tensor{a, b, c} {
			e, err := x.Index(0, int64(i))
			require.NoError(t, err)
			requireSameValues(t, want, e, fmt.Sprintf("%s element %d", dt, i))
		}
		if dt != core.Bool {
			e0, err := arr.Tensor(0)
			require.NoError(t, err)
			assert.Equal(t, e0.Data(), x.Data(), "over the array's values")
		}
		x.Release()
		arr.Release()
	}
	mixed, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{seqTensor(t, core.Float32, 2, 3), seqTensor(t, core.Float32, 3, 2)}, nil, nil)
	require.NoError(t, err)
	defer mixed.Release()
	_, err = arrowx.FromArray(mixed)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	assert.ErrorContains(t, err, "element 1 has shape [3 2], element 0 [2 3]")
	assert.ErrorContains(t, err, "Tensor")
}
