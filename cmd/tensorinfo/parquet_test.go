package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
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

// writeParquet writes, with parquetx.WriteFile, a float32 embedding [6, 4], a float64 batch
// [6, 2, 3] in a permuted order, and int64 ids [6] with a NaN-free count.
func writeParquet(t testing.TB, path string) (emb []float32, cube []float64) {
	t.Helper()
	emb = make([]float32, 24)
	for i := range emb {
		emb[i] = float32(i) - 7.5
	}
	emb[5] = float32(math.NaN())
	cube = make([]float64, 36)
	for i := range cube {
		cube[i] = math.Sin(float64(i))
	}
	c := core.MustFromSlice(cube, 6, 2, 3)
	tr, err := c.Permute(0, 2, 1)
	require.NoError(t, err)
	require.NoError(t, parquetx.WriteFile(path, []parquetx.Column{
		{Name: "emb", Tensor: core.MustFromSlice(emb, 6, 4)},
		{Name: "cube", Tensor: tr},
		{Name: "id", Tensor: core.MustFromSlice([]int64{10, 11, 12, 13, 14, 15})},
	}))
	return emb, cube
}

func TestParquet(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.parquet")
	emb, cube := writeParquet(t, path)

	code, out, errs := tensorinfo(path)
	require.Equal(t, 0, code, errs)
	for _, want := range []string{
		path + " (parquet, 3 arrays; 6 rows in 1 row group)\n",
		"NAME  DTYPE                               SHAPE      BYTE ORDER     LAYOUT              ELEMENTS  BYTES\n",
		"emb   float32 (arrow.fixed_shape_tensor)  (6, 4)     little-endian  C (row-major)       24        96\n",
		"cube  float64 (arrow.fixed_shape_tensor)  (6, 3, 2)  little-endian  permuted (0, 2, 1)  36        288\n",
		"id    int64 (int64)                       (6,)       little-endian  C (row-major)       6         48\n",
	} {
		assert.Contains(t, out, want)
	}

	f32 := func(xs []float32) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = float64(x)
		}
		return out
	}
	code, out, errs = tensorinfo("-json", "-stats", "-repr", path)
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "parquet", got[0].Format)
	assert.Equal(t, "6 rows in 1 row group", got[0].Summary)
	require.Len(t, got[0].Arrays, 3)
	for i, want := range [][]float64{f32(emb), cube, {10, 11, 12, 13, 14, 15}} {
		a := got[0].Arrays[i]
		lo, hi, mean, nan := plainStats64(want)
		require.NotNil(t, a.Stats, a.Name)
		assert.Equal(t, lo, a.Stats.Min.v, a.Name)
		assert.Equal(t, hi, a.Stats.Max.v, a.Name)
		assert.InDelta(t, mean, a.Stats.Mean.v, 1e-12, a.Name)
		assert.Equal(t, nan, a.Stats.NaN, a.Name)
		assert.True(t, strings.HasPrefix(a.Repr, "array("), "%s: %s", a.Name, a.Repr)
	}
	assert.Equal(t, []int64{6, 3, 2}, got[0].Arrays[1].Shape)

	// without its extension: by its magic
	noext := filepath.Join(dir, "data")
	require.NoError(t, os.Link(path, noext))
	code, out, errs = tensorinfo("-name", "id", "-repr", noext)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, noext+" (parquet, 1 array; 6 rows in 1 row group)")
	assert.Contains(t, out, "\"id\" =\narray([10, 11, 12, 13, 14, 15])\n")
}

func plainStats64(xs []float64) (lo, hi, mean float64, nan int64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	var sum float64
	var n int64
	for _, v := range xs {
		if math.IsNaN(v) {
			nan++
			continue
		}
		lo, hi, sum, n = math.Min(lo, v), math.Max(hi, v), sum+v, n+1
	}
	return lo, hi, sum / float64(n), nan
}

// A column in several row groups is summarised one row group at a time: a column larger than
// the copy limit, whose row groups are not, still gets its summary (and -repr says why it
// shows none).
func TestParquetRowGroups(t *testing.T) {
	x := make([]float32, 30)
	for i := range x {
		x[i] = float32(i*i%17) - 3
	}
	ext, err := arrowx.ToFixedShapeTensor(core.MustFromSlice(x, 10, 3))
	require.NoError(t, err)
	defer ext.Release()
	et := ext.DataType().(*arrowx.FixedShapeTensorType)
	storage := ext.(array.ExtensionArray).Storage()
	md := arrow.NewMetadata([]string{"ARROW:extension:name", "ARROW:extension:metadata"}, []string{et.ExtensionName(), et.Serialize()})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: storage.DataType(), Metadata: md},
		{Name: "label", Type: arrow.BinaryTypes.String},
	}, nil)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for range 10 {
		sb.Append("a")
	}
	labels := sb.NewArray()
	defer labels.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{storage, labels}, 10)
	defer rec.Release()
	path := writeRecordParquet(t, schema, rec, "groups.parquet")

	defer func(old int64) { copyLimit = old }(copyLimit)
	copyLimit = 100 // the column is 120 bytes, a row group at most 48
	code, out, errs := tensorinfo("-json", "-stats", "-repr", path)
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "10 rows in 3 row groups", got[0].Summary)
	require.Len(t, got[0].Arrays, 1, "the string column is not a tensor column")
	a := got[0].Arrays[0]
	lo, hi, mean, _ := plainStats(x)
	require.NotNil(t, a.Stats)
	assert.Equal(t, lo, a.Stats.Min.v)
	assert.Equal(t, hi, a.Stats.Max.v)
	assert.InDelta(t, mean, a.Stats.Mean.v, 1e-12)
	assert.Equal(t, "(not shown: the column decodes to 120 bytes, more than this tool reads into memory (100))", a.Repr)

	copyLimit = 40 // a row group of 48 bytes is beyond it too: no summary, and an error
	code, _, errs = tensorinfo("-stats", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `array "x": row group 0 of the column has 4 rows of 12 bytes, more than this tool reads into memory (40)`)
}

func TestParquetHostile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "data.parquet")
	writeParquet(t, good)
	b, err := os.ReadFile(good)
	require.NoError(t, err)
	footer := bytes.Clone(b)
	for i := len(footer) - 200; i < len(footer)-8; i++ { // the footer's Thrift, garbled
		footer[i] ^= 0x5a
	}
	for _, c := range []struct {
		file string
		data []byte
	}{
		{"cut.parquet", b[:len(b)/2]},
		{"head.parquet", b[:4]},
		{"magic.parquet", []byte("PAR1 and nothing of a file PAR1")},
		{"footer.parquet", footer},
		{"empty.parquet", nil},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			require.NoError(t, os.WriteFile(path, c.data, 0o644))
			code, out, errs := tensorinfo("-stats", "-repr", path, good)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, "tensorinfo: "+path+": parquetx: ")
			assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
			assert.Contains(t, out, good+" (parquet, 3 arrays", "the other file is still shown")
		})
	}
}

// A column whose footer promises more bytes than int64 holds is refused before anything is
// decoded (checkedBytes), whatever the row count or list lengths a hostile footer gives.
func TestCheckedBytes(t *testing.T) {
	for _, c := range []struct {
		shape []int64
		size  int
		want  int64
		ok    bool
	}{
		{[]int64{6, 4}, 4, 96, true},
		{[]int64{0, 1 << 40}, 8, 0, true},
		{[]int64{1 << 40, 1 << 20}, 8, 0, false},
		{[]int64{math.MaxInt64, 2}, 1, 0, false},
		{[]int64{-1}, 4, 0, false},
	} {
		n, ok := checkedBytes(c.shape, c.size)
		assert.Equal(t, c.ok, ok, "%v", c.shape)
		if ok {
			assert.Equal(t, c.want, n, "%v", c.shape)
		}
	}
}

// An arrow.variable_shape_tensor column is listed as one: its dtype and type, its rows and the
// dimensions they share ("?" where they differ), each row's layout, and no element or byte
// count (the footer does not tell them); -stats summarises every row's values, -repr says why
// it shows none.
func TestParquetVariableShape(t *testing.T) {
	rows := [][]float32{{1, 2, 3, 4, 5, 6}, {-2.5, 7}, {}}
	shapes := [][]int64{{2, 3}, {1, 2}, {0, 4}}
	var ts []*core.Tensor
	var all []float32
	for i, r := range rows {
		ts = append(ts, core.MustFromSlice(append([]float32{}, r...), shapes[i]...))
		all = append(all, r...)
	}
	path := filepath.Join(t.TempDir(), "boxes.parquet")
	require.NoError(t, parquetx.WriteFile(path, []parquetx.Column{{Name: "id", Tensor: core.MustFromSlice([]int64{1, 2, 3})}},
		parquetx.VariableShapeColumn("boxes", ts...)))

	code, out, errs := tensorinfo(path)
	require.Equal(t, 0, code, errs)
	for _, want := range []string{
		path + " (parquet, 2 arrays; 3 rows in 1 row group)\n",
		"NAME   DTYPE                                  SHAPE      BYTE ORDER     LAYOUT                  ELEMENTS  BYTES\n",
		"id     int64 (int64)                          (3,)       little-endian  C (row-major)           3         24\n",
		"boxes  float32 (arrow.variable_shape_tensor)  (3, ?, ?)  little-endian  per row, C (row-major)  -         -\n",
	} {
		assert.Contains(t, out, want)
	}

	code, out, errs = tensorinfo("-json", "-stats", "-repr", "-name", "boxes", path)
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 1)
	require.Len(t, got[0].Arrays, 1)
	a := got[0].Arrays[0]
	assert.Equal(t, "float32", a.DType)
	assert.Equal(t, "arrow.variable_shape_tensor", a.Descr)
	assert.True(t, a.VariableShape)
	assert.Equal(t, []int64{3, -1, -1}, a.Shape)
	assert.Nil(t, a.Elements)
	assert.Nil(t, a.Bytes)
	assert.Contains(t, out, `"elements": null`)
	lo, hi, mean, nan := plainStats(all)
	require.NotNil(t, a.Stats)
	assert.Equal(t, lo, a.Stats.Min.v)
	assert.Equal(t, hi, a.Stats.Max.v)
	assert.InDelta(t, mean, a.Stats.Mean.v, 1e-12)
	assert.Equal(t, nan, a.Stats.NaN)
	assert.Contains(t, a.Repr, "(not shown: an arrow.variable_shape_tensor column holds a tensor of its own shape per row")

	// the other columns keep their counts
	code, out, errs = tensorinfo("-json", "-name", "id", path)
	require.Equal(t, 0, code, errs)
	got = nil
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotNil(t, got[0].Arrays[0].Elements)
	assert.Equal(t, int64(3), *got[0].Arrays[0].Elements)
	assert.Equal(t, int64(24), *got[0].Arrays[0].Bytes)
	assert.False(t, got[0].Arrays[0].VariableShape)
	assert.NotContains(t, out, "variable_shape")
}

// The dimensions a variable-shape column's uniform_shape gives are shown, and a permutation is
// each row's layout.
func TestVariableEntry(t *testing.T) {
	for _, c := range []struct {
		info   parquetx.ColumnInfo
		shape  []int64
		layout string
	}{
		{parquetx.ColumnInfo{Name: "v", DType: core.Int8, Shape: []int64{5}, VariableShape: true, Ndim: 2}, []int64{5, -1, -1}, "per row, C (row-major)"},
		{parquetx.ColumnInfo{Name: "v", DType: core.Int8, Shape: []int64{5}, VariableShape: true, Ndim: 2, UniformShape: []int64{-1, 3}}, []int64{5, -1, 3}, "per row, C (row-major)"},
		{parquetx.ColumnInfo{Name: "v", DType: core.Int8, Shape: []int64{5}, VariableShape: true, Ndim: 3, Permutation: []int{2, 0, 1}}, []int64{5, -1, -1, -1}, "per row, permuted (1, 2, 0)"},
	} {
		e := variableEntry(c.info)
		assert.True(t, e.variable)
		assert.Equal(t, c.shape, e.shape)
		assert.Equal(t, c.layout, e.layout())
	}
}

// TestParquetMaxInflated: -max-inflated caps what one Parquet column may decode
// (parquetx.MaxDecoded): a column past it fails the file with the cap's error.
func TestParquetMaxInflated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.parquet")
	writeParquet(t, path)
	code, out, errs := tensorinfo("-stats", "-max-inflated", "300", path)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, errs, `array "cube": parquetx: column "cube": the file claims 6 rows of at least 96 bytes, which arrow-go's reader reserves 1024 bytes for, more than parquetx.MaxDecoded's 300`)
	code, _, errs = tensorinfo("-stats", "-max-inflated", "1024", path)
	assert.Equal(t, 0, code, errs)
}

// writeRecordParquet writes rec as a Parquet file of row groups of 4 rows, with its Arrow schema, and
// returns its path.
func writeRecordParquet(t *testing.T, schema *arrow.Schema, rec arrow.RecordBatch, name string) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(4)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}
