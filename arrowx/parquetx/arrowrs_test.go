package parquetx_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/nodetest"
	"github.com/dlpack-go/dlpack/memory"
)

// arrowRsWriter builds, with Arrow's JavaScript implementation, a table of
// arrow.fixed_shape_tensor columns of every integer and float type (three [2, 3] tensors each,
// the extension's name and metadata on the field, a non-nullable list child as arrow-rs makes
// them) and an arrow.variable_shape_tensor column whose storage has "shape" before "data", all
// children non-nullable; and writes it as Parquet with parquet-wasm, which is arrow-rs (the
// Arrow of polars and DataFusion) compiled to WebAssembly.
const arrowRsWriter = `
const fs = require("fs");
const A = require("apache-arrow");
const pw = require("parquet-wasm/node");
const kinds = {
  int8: [new A.Int8(), Int8Array, k => k - 9], int16: [new A.Int16(), Int16Array, k => k - 9],
  int32: [new A.Int32(), Int32Array, k => k - 9], int64: [new A.Int64(), BigInt64Array, k => BigInt(k - 9)],
  uint8: [new A.Uint8(), Uint8Array, k => k * 13], uint16: [new A.Uint16(), Uint16Array, k => k * 13],
  uint32: [new A.Uint32(), Uint32Array, k => k * 13], uint64: [new A.Uint64(), BigUint64Array, k => BigInt(k * 13)],
  float32: [new A.Float32(), Float32Array, k => k * 0.5 - 3], float64: [new A.Float64(), Float64Array, k => k * 0.5 - 3],
};
const fields = [], columns = [];
for (const [name, [type, Arr, f]] of Object.entries(kinds)) {
  const child = A.makeData({ type, length: 18, data: Arr.from([...Array(18).keys()].map(f)) });
  const list = new A.FixedSizeList(6, new A.Field("item", type, false));
  const meta = name === "float64" ? '{"shape":[2,3],"dim_names":["r","c"],"permutation":[1,0]}' : '{"shape":[2,3],"dim_names":["r","c"]}';
  fields.push(new A.Field(name, list, false, new Map([["ARROW:extension:name", "arrow.fixed_shape_tensor"], ["ARROW:extension:metadata", meta]])));
  columns.push(A.makeData({ type: list, length: 3, child }));
}
// variable shapes [1,2], [2,3], [0,3] of int32: shape first, then data
const shapeT = new A.FixedSizeList(2, new A.Field("item", new A.Int32(), false));
const dataT = new A.List(new A.Field("element", new A.Int32(), false));
const shapes = A.makeData({ type: shapeT, length: 3, child: A.makeData({ type: new A.Int32(), length: 6, data: Int32Array.from([1, 2, 2, 3, 0, 3]) }) });
const data = A.makeData({ type: dataT, length: 3, valueOffsets: Int32Array.from([0, 2, 8, 8]),
  child: A.makeData({ type: new A.Int32(), length: 8, data: Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7]) }) });
const structT = new A.Struct([new A.Field("shape", shapeT, false), new A.Field("data", dataT, false)]);
fields.push(new A.Field("var", structT, false, new Map([["ARROW:extension:name", "arrow.variable_shape_tensor"],
  ["ARROW:extension:metadata", '{"dim_names":["h","w"],"uniform_shape":[null,null]}']])));
columns.push(A.makeData({ type: structT, length: 3, children: [shapes, data] }));
const schema = new A.Schema(fields);
const table = new A.Table(schema, new A.RecordBatch(schema, A.makeData({ type: new A.Struct(fields), length: 3, children: columns })));
const file = pw.writeParquet(pw.Table.fromIPCStream(A.tableToIPC(table, "stream")));
fs.writeFileSync(process.argv[1], file);
// what arrow-rs reads back of its own file: the fields' nullability and metadata
const back = A.tableFromIPC(pw.readParquet(file).intoIPCStream());
console.log(JSON.stringify(back.schema.fields.map(f => ({ name: f.name, nullable: f.nullable, ext: f.metadata.get("ARROW:extension:name") }))));
`

// TestReadArrowRsFile: a Parquet file written by arrow-rs (through parquet-wasm), whose tensor
// columns have non-nullable list children, reads with parquetx: every dtype's values, shape,
// permutation and metadata exactly as written, and the stored child fields kept. arrow-go's
// reader used to refuse it ("mismatch storage type 'fixed_size_list<item: float32>[6]'"),
// since the type's Deserialize rebuilt the storage with a nullable child.
func TestReadArrowRsFile(t *testing.T) {
	node := nodetest.Install(t, "apache-arrow@21.2.0", "parquet-wasm@0.8.0")
	path := filepath.Join(t.TempDir(), "arrow-rs.parquet")
	out := node.Run(t, arrowRsWriter, path)
	var rsFields []struct {
		Name     string
		Nullable bool
		Ext      string
	}
	require.NoError(t, json.Unmarshal(out, &rsFields), "%s", out)
	require.Len(t, rsFields, 11)
	for _, f := range rsFields { // arrow-rs kept what it was given
		assert.False(t, f.Nullable, f.Name)
		assert.NotEmpty(t, f.Ext, f.Name)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)

	cols, err := parquetx.Columns(bytes.NewReader(b))
	require.NoError(t, err)
	byName := map[string]parquetx.ColumnInfo{}
	for _, c := range cols {
		byName[c.Name] = c
	}
	for _, c := range []struct {
		name string
		dt   core.DLDataType
		f    func(k int) float64
	}{
		{"int8", core.Int8, func(k int) float64 { return float64(k - 9) }},
		{"int16", core.Int16, func(k int) float64 { return float64(k - 9) }},
		{"int32", core.Int32, func(k int) float64 { return float64(k - 9) }},
		{"int64", core.Int64, func(k int) float64 { return float64(k - 9) }},
		{"uint8", core.Uint8, func(k int) float64 { return float64(k * 13) }},
		{"uint16", core.Uint16, func(k int) float64 { return float64(k * 13) }},
		{"uint32", core.Uint32, func(k int) float64 { return float64(k * 13) }},
		{"uint64", core.Uint64, func(k int) float64 { return float64(k * 13) }},
		{"float32", core.Float32, func(k int) float64 { return float64(k)*0.5 - 3 }},
		{"float64", core.Float64, func(k int) float64 { return float64(k)*0.5 - 3 }},
	} {
		permuted := c.name == "float64"
		info, ok := byName[c.name]
		require.True(t, ok, "column %s listed", c.name)
		ft, ok := info.Type.(*arrowx.FixedShapeTensorType)
		require.True(t, ok, "%s: %s", c.name, info.Type)
		child := ft.StorageType().(*arrow.FixedSizeListType).ElemField()
		assert.False(t, child.Nullable, "%s: the stored non-nullable child is kept", c.name)
		assert.Equal(t, "item", child.Name, c.name)
		assert.Equal(t, []int64{2, 3}, ft.Shape(), c.name)
		assert.Equal(t, []string{"r", "c"}, ft.DimNames(), c.name)
		wantMeta := `{"shape":[2,3],"dim_names":["r","c"]}`
		if permuted {
			assert.Equal(t, []int{1, 0}, ft.Permutation())
			wantMeta = `{"shape":[2,3],"dim_names":["r","c"],"permutation":[1,0]}`
		}
		assert.JSONEq(t, wantMeta, ft.Serialize(), c.name)

		x, err := parquetx.Read(bytes.NewReader(b), c.name)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.dt, x.DType(), c.name)
		f64 := castF64(t, x)
		for i := range int64(3) {
			for r := range int64(2) {
				for q := range int64(3) {
					idx := []int64{i, r, q}
					if permuted { // logical [i, q, r] is physical [i, r, q]
						idx = []int64{i, q, r}
					}
					got, err := core.At[float64](f64, idx...)
					require.NoError(t, err)
					assert.Equal(t, c.f(int(i*6+r*3+q)), got, "%s %v", c.name, idx)
				}
			}
		}
		if permuted {
			assert.Equal(t, []int64{3, 3, 2}, x.Shape())
		} else {
			assert.Equal(t, []int64{3, 2, 3}, x.Shape())
		}
		x.Release()
	}

	// the variable-shape column, fields in the other order
	info := byName["var"]
	vt, ok := info.Type.(*arrowx.VariableShapeTensorType)
	require.True(t, ok, "%s", info.Type)
	assert.Equal(t, "shape", vt.StorageType().(*arrow.StructType).Field(0).Name)
	assert.Equal(t, []string{"h", "w"}, vt.DimNames())
	assert.Equal(t, []int64{-1, -1}, vt.UniformShape())
	ts, err := parquetx.ReadTensors(bytes.NewReader(b), "var")
	require.NoError(t, err)
	wantShapes := [][]int64{{1, 2}, {2, 3}, {0, 3}}
	wantVals := [][]int32{{0, 1}, {2, 3, 4, 5, 6, 7}, {}}
	require.Len(t, ts, 3)
	for i, x := range ts {
		assert.Equal(t, wantShapes[i], x.Shape())
		got, err := core.ReadOnlyElements[int32](x)
		require.NoError(t, err)
		assert.Equal(t, wantVals[i], append([]int32{}, got...))
		x.Release()
	}
}

// castF64 is x as float64 values (a copy), released with the test.
func castF64(t *testing.T, x *core.Tensor) *core.Tensor {
	t.Helper()
	y, err := memory.Cast(x, core.Float64)
	require.NoError(t, err)
	t.Cleanup(y.Release)
	return y
}
