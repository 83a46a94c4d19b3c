package arrowx_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/nodetest"
)

var arrowDTypes = []core.DLDataType{
	core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16, core.Uint32,
	core.Uint64, core.Float16, core.Float32, core.Float64,
}

// seqTensor is arrowtest.Seq: 0, 1, 2, ... (bools alternate).
var seqTensor = arrowtest.Seq

var requireSameValues = arrowtest.RequireSame

// TestFixedShapeTensorRoundTrip: every Arrow dtype and rank, to arrow.fixed_shape_tensor and
// back, sharing memory except for bool.
func TestFixedShapeTensorRoundTrip(t *testing.T) {
	for _, dt := range arrowDTypes {
		for _, shape := range [][]int64{{5}, {4, 3}, {3, 2, 4}, {2, 2, 3, 2}, {0, 3}} {
			name := fmt.Sprintf("%s%v", dt, shape)
			in := seqTensor(t, dt, shape...)
			var copied bool
			arr, err := arrowx.ToFixedShapeTensor(in, adapters.ReportCopy(&copied))
			require.NoError(t, err, name)
			ft, ok := arr.DataType().(*arrowx.FixedShapeTensorType)
			require.True(t, ok, "%s: %T", name, arr.DataType())
			assert.Equal(t, "arrow.fixed_shape_tensor", ft.ExtensionName())
			assert.Equal(t, shape[1:], ft.Shape(), name)
			assert.Equal(t, int(shape[0]), arr.Len())
			assert.Equal(t, dt == core.Bool, copied, name)
			back, err := arrowx.FromArray(arr)
			require.NoError(t, err, name)
			requireSameValues(t, in, back, name)
			if dt != core.Bool && in.Len() > 0 {
				assert.Equal(t, in.Data(), back.Data(), "%s: zero-copy both ways", name)
			}
			back.Release()
			arr.Release()
			in.Release()
		}
	}
}

// TestFixedShapeTensorPermutation: a batch of transposed matrices is shared, its type's shape
// the physical one and its permutation the way back.
func TestFixedShapeTensorPermutation(t *testing.T) {
	base := seqTensor(t, core.Float32, 4, 3, 5)
	tr, err := base.Permute(0, 2, 1) // [4 5 3], each matrix transposed
	require.NoError(t, err)
	var copied bool
	arr, err := arrowx.ToFixedShapeTensor(tr, adapters.ReportCopy(&copied), adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer arr.Release()
	assert.False(t, copied)
	ft := arr.DataType().(*arrowx.FixedShapeTensorType)
	assert.Equal(t, []int64{3, 5}, ft.Shape())
	assert.Equal(t, []int{1, 0}, ft.Permutation())
	assert.Equal(t, []int64{5, 3}, ft.LogicalShape())
	assert.JSONEq(t, `{"shape":[3,5],"permutation":[1,0]}`, ft.Serialize())
	back, err := arrowx.FromArray(arr, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer back.Release()
	requireSameValues(t, tr, back, "permuted")
	assert.Equal(t, tr.Strides(), back.Strides(), "a permutation becomes strides, not a copy")
	assert.Equal(t, base.Data(), back.Data())

	// a reversed batch is no order of C: copied, or refused under ZeroCopyOnly
	rev, err := base.Reverse(2)
	require.NoError(t, err)
	_, err = arrowx.ToFixedShapeTensor(rev, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	arr2, err := arrowx.ToFixedShapeTensor(rev, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer arr2.Release()
	assert.True(t, copied)
	back2, err := arrowx.FromArray(arr2)
	require.NoError(t, err)
	requireSameValues(t, rev, back2, "reversed")
}

// ipcRoundTrip writes arr as the one column of a record batch in Arrow's IPC file format and
// reads it back.
func ipcRoundTrip(t *testing.T, arr arrow.Array) ([]byte, arrow.Array) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "t", Type: arr.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	r, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	defer r.Close()
	got, err := r.RecordBatch(0)
	require.NoError(t, err)
	col := got.Column(0)
	col.Retain()
	return buf.Bytes(), col
}

func TestFixedShapeTensorIPC(t *testing.T) {
	in := seqTensor(t, core.Int16, 3, 2, 4)
	arr, err := arrowx.ToFixedShapeTensor(in)
	require.NoError(t, err)
	defer arr.Release()
	file, col := ipcRoundTrip(t, arr)
	defer col.Release()
	assert.Contains(t, string(file), "ARROW:extension:name")
	assert.Contains(t, string(file), `{"shape":[2,4]}`)
	ft, ok := col.DataType().(*arrowx.FixedShapeTensorType)
	require.True(t, ok, "arrow-go's IPC reader yields the registered type, not %s", col.DataType())
	assert.Equal(t, []int64{2, 4}, ft.Shape())
	back, err := arrowx.FromArray(col)
	require.NoError(t, err)
	requireSameValues(t, in, back, "IPC")
	assert.True(t, back.ReadOnly(), "over IPC bytes")
}

func TestFixedShapeTensorNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ft, err := arrowx.NewFixedShapeTensorType(arrow.PrimitiveTypes.Float64, []int64{2}, []string{"x"}, nil)
	require.NoError(t, err)
	b := array.NewExtensionBuilder(mem, ft)
	defer b.Release()
	lb := b.StorageBuilder().(*array.FixedSizeListBuilder)
	vb := lb.ValueBuilder().(*array.Float64Builder)
	lb.Append(true)
	vb.AppendValues([]float64{1, 2}, nil)
	lb.AppendNull() // appends the list's two (null) values too
	arr := b.NewArray()
	defer arr.Release()
	_, err = arrowx.FromArray(arr)
	require.ErrorIs(t, err, arrowx.ErrNulls)
	filled, err := arrowx.FromArray(arr, arrowx.FillNulls(-1))
	require.NoError(t, err)
	defer filled.Release()
	got, err := filled.Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, -1, -1}, got)
	assert.Equal(t, []string{"x"}, ft.DimNames())
}

// TestFixedShapeTensorHostileMetadata: metadata that does not describe its storage is refused
// with ErrMalformed, directly and through arrow-go's IPC reader.
func TestFixedShapeTensorHostileMetadata(t *testing.T) {
	fsl := func(n int32) arrow.DataType { return arrow.FixedSizeListOf(n, arrow.PrimitiveTypes.Float32) }
	for _, tc := range []struct {
		storage arrow.DataType
		meta    string
		why     string
	}{
		{fsl(6), `{"shape":[2,4]}`, "stored as FixedSizeList<6>, not <8>"},
		{fsl(6), `{"shape":[-2,-3]}`, "dimension -2"},
		{fsl(6), `{"shape":[2,3],"permutation":[0,0]}`, "not a permutation"},
		{fsl(6), `{"shape":[2,3],"permutation":[0,1,2]}`, "permutation [0 1 2]"},
		{fsl(6), `{"shape":[2,3],"dim_names":["a"]}`, "1 dim_names"},
		{fsl(6), `{"shape":[2,3],"extra":1}`, "unknown field"},
		{fsl(6), `{"dim_names":[]}`, "has no shape"},
		{fsl(6), `not json`, "invalid character"},
		{fsl(6), `{"shape":[2,3]} {}`, "data after"},
		{fsl(1), `{"shape":[65536,65536]}`, "more than 2^31-1"},
		{arrow.PrimitiveTypes.Float32, `{"shape":[1]}`, "not a FixedSizeList"},
		{arrow.FixedSizeListOf(1, arrow.BinaryTypes.String), `{"shape":[1]}`, "utf8"},
	} {
		_, err := (&arrowx.FixedShapeTensorType{}).Deserialize(tc.storage, tc.meta)
		require.Error(t, err, tc.meta)
		assert.ErrorContains(t, err, tc.why, tc.meta)
		if tc.why != "utf8" {
			assert.ErrorIs(t, err, arrowx.ErrMalformed, tc.meta)
		}
	}
	// through IPC: a field that claims the type with a wrong shape
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 6, arrow.PrimitiveTypes.Float32)
	defer b.Release()
	b.Append(true)
	b.ValueBuilder().(*array.Float32Builder).AppendValues(make([]float32, 6), nil)
	storage := b.NewArray()
	defer storage.Release()
	md := arrow.NewMetadata([]string{"ARROW:extension:name", "ARROW:extension:metadata"},
		[]string{"arrow.fixed_shape_tensor", `{"shape":[7]}`})
	schema := arrow.NewSchema([]arrow.Field{{Name: "t", Type: storage.DataType(), Metadata: md}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{storage}, 1)
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	r, err := ipc.NewReader(bytes.NewReader(buf.Bytes()))
	if err == nil {
		defer r.Release()
		for r.Next() {
			_, isExt := r.RecordBatch().Column(0).DataType().(*arrowx.FixedShapeTensorType)
			assert.False(t, isExt, "a type whose metadata lies is not made")
		}
		err = r.Err()
	}
	if err != nil {
		assert.ErrorContains(t, err, "not <7>")
	}
}

// TestFixedShapeTensorNode: Arrow's JavaScript implementation reads what arrowx writes (the
// extension name and metadata on the field, the FixedSizeList storage, the values), and
// arrowx reads what it writes.
func TestFixedShapeTensorNode(t *testing.T) {
	node := nodetest.Install(t, "apache-arrow@21.2.0")
	base := seqTensor(t, core.Float32, 3, 2, 4)
	tr, err := base.Permute(0, 2, 1)
	require.NoError(t, err)
	arr, err := arrowx.ToFixedShapeTensor(tr)
	require.NoError(t, err)
	defer arr.Release()
	file, _ := ipcRoundTrip(t, arr)
	dir := t.TempDir()
	path := filepath.Join(dir, "go.arrow")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	out := node.Run(t, `
const fs = require("fs");
const { tableFromIPC, tableToIPC, makeVector, Table, Field, FixedSizeList, Float64, Schema, vectorFromArray, makeData, RecordBatch, Struct } = require("apache-arrow");
const t = tableFromIPC(fs.readFileSync(process.argv[1]));
const f = t.schema.fields[0];
const col = t.getChildAt(0);
const rows = [];
for (let i = 0; i < col.length; i++) rows.push(Array.from(col.get(i)));
// write one: a column of two [2, 2] float64 tensors, with the canonical metadata
const child = makeData({ type: new Float64(), length: 8, data: Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8]) });
const type = new FixedSizeList(4, new Field("item", new Float64(), false));
const data = makeData({ type, length: 2, child });
const md = new Map([["ARROW:extension:name", "arrow.fixed_shape_tensor"], ["ARROW:extension:metadata", '{"shape":[2,2],"dim_names":["r","c"]}']]);
const schema = new Schema([new Field("w", type, true, md)]);
const out = new Table(schema, new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 2, children: [data] })));
fs.writeFileSync(process.argv[2], tableToIPC(out, "file"));
console.log(JSON.stringify({ name: f.metadata.get("ARROW:extension:name"), meta: f.metadata.get("ARROW:extension:metadata"), type: String(f.type), rows }));
`, path, filepath.Join(dir, "node.arrow"))
	var got struct {
		Name, Meta, Type string
		Rows             [][]float64
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Equal(t, "arrow.fixed_shape_tensor", got.Name)
	assert.JSONEq(t, `{"shape":[2,4],"permutation":[1,0]}`, got.Meta)
	assert.Equal(t, "FixedSizeList[8]<Float32>", got.Type)
	require.Len(t, got.Rows, 3)
	for i, row := range got.Rows {
		for k, v := range row { // physical order: each [2 4] matrix of base, row-major
			want, err := core.At[float32](base, int64(i), int64(k/4), int64(k%4))
			require.NoError(t, err)
			assert.Equal(t, float64(want), v, "tensor %d element %d", i, k)
		}
	}

	// what Node wrote
	b, err := os.ReadFile(filepath.Join(dir, "node.arrow"))
	require.NoError(t, err)
	r, err := ipc.NewFileReader(bytes.NewReader(b))
	require.NoError(t, err)
	defer r.Close()
	rec, err := r.RecordBatch(0)
	require.NoError(t, err)
	ft, ok := rec.Column(0).DataType().(*arrowx.FixedShapeTensorType)
	require.True(t, ok, "%s", rec.Column(0).DataType())
	assert.Equal(t, []string{"r", "c"}, ft.DimNames())
	w, err := arrowx.FromArray(rec.Column(0))
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 2, 2}, w.Shape())
	vals, err := core.ReadOnlyElements[float64](w)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6, 7, 8}, vals)
}

func FuzzFixedShapeMetadata(f *testing.F) {
	f.Add(int32(6), `{"shape":[2,3]}`)
	f.Add(int32(6), `{"shape":[3,2],"permutation":[1,0],"dim_names":["a","b"]}`)
	f.Add(int32(1), `{"shape":[]}`)
	f.Fuzz(func(t *testing.T, n int32, meta string) {
		if n <= 0 || n > 1<<20 {
			return
		}
		typ, err := (&arrowx.FixedShapeTensorType{}).Deserialize(arrow.FixedSizeListOf(n, arrow.PrimitiveTypes.Int8), meta)
		if err != nil {
			return
		}
		ft := typ.(*arrowx.FixedShapeTensorType)
		again, err := ft.Deserialize(ft.StorageType(), ft.Serialize())
		require.NoError(t, err, "what Serialize writes, Deserialize reads")
		require.True(t, ft.ExtensionEquals(again))
		size := int64(1)
		for _, d := range ft.LogicalShape() {
			size *= d
		}
		require.Equal(t, int64(n), size)
	})
}

// TestFixedShapeTensorSizeOneInnerDims: a batch permuted around an inner dimension of size 1
// is C order of a permutation of its inner dimensions, and is shared (innerOrder used to call
// the size-1 dimension equal to every other, leaving the rest unsorted, and copied it).
func TestFixedShapeTensorSizeOneInnerDims(t *testing.T) {
	base := seqTensor(t, core.Float32, 2, 4, 1, 3)
	defer base.Release()
	for _, axes := range [][]int{{0, 3, 2, 1}, {0, 2, 3, 1}, {0, 3, 1, 2}} {
		x, err := base.Permute(axes...)
		require.NoError(t, err)
		var copied bool
		arr, err := arrowx.ToFixedShapeTensor(x, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
		require.NoError(t, err, "%v: strides %v", axes, x.Strides())
		assert.False(t, copied)
		back, err := arrowx.FromArray(arr, adapters.ZeroCopyOnly())
		require.NoError(t, err)
		requireSameValues(t, x, back, fmt.Sprint(axes))
		assert.Equal(t, base.Data(), back.Data(), "%v: shared", axes)
		back.Release()
		arr.Release()
		x.Release()
	}
}

// TestFixedShapeTensorCopiesOnce: a batch in no order of C, under AlwaysCopy, is copied once
// (it used to be copied into C order and then copied again by ToArray).
func TestFixedShapeTensorCopiesOnce(t *testing.T) {
	base := seqTensor(t, core.Float32, 64, 64, 64) // 1 MiB: Go memory (below the mapped size)
	defer base.Release()
	rev, err := base.Reverse(2)
	require.NoError(t, err)
	defer rev.Release()
	for _, opt := range []adapters.Option{adapters.AlwaysCopy(), adapters.WithCopy(adapters.CopyIfNeeded)} {
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		var copied bool
		arr, err := arrowx.ToFixedShapeTensor(rev, opt, adapters.ReportCopy(&copied))
		runtime.ReadMemStats(&ms1)
		require.NoError(t, err)
		assert.True(t, copied)
		got := ms1.TotalAlloc - ms0.TotalAlloc
		assert.Less(t, got, uint64(rev.NumBytes())*3/2, "allocated %d bytes for a %d-byte tensor: copied twice", got, rev.NumBytes())
		back, err := arrowx.FromArray(arr)
		require.NoError(t, err)
		requireSameValues(t, rev, back, "reversed")
		back.Release()
		arr.Release()
	}
}

// TestFixedShapeTensorOnlyHolder: ToFixedShapeTensor holds its operand, the only holder of memory
// unmapped on release, while collections run throughout, in every layout (shared, permuted,
// copied); the arrays read the right elements afterwards.
func TestFixedShapeTensorOnlyHolder(t *testing.T) {
	base := seqTensor(t, core.Float32, 64, 32, 48)
	defer base.Release()
	tr, err := base.Permute(0, 2, 1)
	require.NoError(t, err)
	rev, err := base.Reverse(2)
	require.NoError(t, err)
	foreignmem.Collect(t)
	for name, x := range map[string]*core.Tensor{"C": base, "permuted": tr, "reversed": rev} {
		for range 10 {
			m, err := foreignmem.Twin(x)
			require.NoError(t, err)
			arr, err := arrowx.ToFixedShapeTensor(m.Tensor) // nothing else holds m.Tensor
			m = foreignmem.Mapped{}
			require.NoError(t, err, name)
			runtime.GC()
			back, err := arrowx.FromArray(arr)
			require.NoError(t, err)
			requireSameValues(t, x, back, name)
			back.Release()
			arr.Release()
		}
	}
}

// TestBool8: Arrow's canonical arrow.bool8 (a byte per bool) is a bool tensor over the array's
// memory when every byte is 0 or 1, and a copy (any other byte true) otherwise.
func TestBool8(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := extensions.NewBool8Builder(mem)
	b.AppendValues([]bool{true, false, true, true}, nil)
	arr := b.NewArray()
	b.Release()
	var copied bool
	x, err := arrowx.FromArray(arr, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.False(t, copied)
	assert.Equal(t, core.Bool, x.DType())
	vals, err := x.ReadOnlyBools()
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true, true}, vals)
	storage := arr.(array.ExtensionArray).Storage().Data().Buffers()[1].Bytes()
	assert.Equal(t, unsafe.Pointer(&storage[0]), x.Data(), "shared")
	x.Release()

	// a byte of 2 is true, but no bool tensor may hold it: copied
	storage[1] = 2
	_, err = arrowx.FromArray(arr, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	y, err := arrowx.FromArray(arr, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	yb, _ := y.ReadOnlyBytes()
	assert.Equal(t, []byte{1, 1, 1, 1}, yb)
	y.Release()
	arr.Release()

	dt, err := arrowx.FromDType(extensions.NewBool8Type())
	require.NoError(t, err)
	assert.Equal(t, core.Bool, dt)
}
