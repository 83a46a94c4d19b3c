package parquetx_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// pqarrowFile writes the arrays as columns named c0, c1, ... with arrow-go's pqarrow directly
// (no parquetx), in row groups of groupRows rows.
func pqarrowFile(t *testing.T, groupRows int64, arrays ...arrow.Array) []byte {
	t.Helper()
	fields := make([]arrow.Field, len(arrays))
	for j, a := range arrays {
		fields[j] = arrow.Field{Name: fmt.Sprintf("c%d", j), Type: a.DataType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, arrays, int64(arrays[0].Len()))
	defer rec.Release()
	return writeRecord(t, rec, groupRows)
}

func TestReadMatrixOfPqarrowFile(t *testing.T) {
	mem := memory.DefaultAllocator
	var arrays []arrow.Array
	want := make([]float64, 10*3)
	for j := range 3 {
		b := array.NewFloat64Builder(mem)
		for i := range 10 {
			v := float64(100*j + i)
			b.Append(v)
			want[i*3+j] = v
		}
		arrays = append(arrays, b.NewArray())
		b.Release()
	}
	file := pqarrowFile(t, 4, arrays...) // row groups of 4, 4, 2 rows
	var copied bool
	m, err := parquetx.ReadMatrix(bytes.NewReader(file), []string{"c0", "c1", "c2"}, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer m.Release()
	assert.True(t, copied)
	assert.Equal(t, []int64{10, 3}, m.Shape())
	assert.True(t, m.IsContiguous(), "C order")
	same(t, core.MustFromSlice(want, 10, 3), m, "matrix")

	// a subset, reordered, of one row group
	g, err := parquetx.ReadMatrix(bytes.NewReader(file), []string{"c2", "c0"}, parquetx.RowGroups(1))
	require.NoError(t, err)
	same(t, core.MustFromSlice([]float64{204, 4, 205, 5, 206, 6, 207, 7}, 4, 2), g, "row group 1, c2 and c0")

	_, err = parquetx.ReadMatrix(bytes.NewReader(file), []string{"c0"}, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	_, err = parquetx.ReadMatrix(bytes.NewReader(file), []string{"c0", "nope"})
	require.ErrorIs(t, err, parquetx.ErrColumn)
	_, err = parquetx.ReadMatrix(bytes.NewReader(file), nil)
	require.ErrorIs(t, err, core.ErrArgument)
}

func TestReadMatrixOfWrite(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Int16, core.Float32, core.Bool} {
		a, b := seq(t, dt, 7), seq(t, dt, 7)
		var buf bytes.Buffer
		require.NoError(t, parquetx.Write(&buf, []parquetx.Column{{"a", a}, {"b", b}, {"m", seq(t, dt, 7, 2)}}))
		m, err := parquetx.ReadMatrix(bytes.NewReader(buf.Bytes()), []string{"b", "a", "b"})
		require.NoError(t, err, dt.String())
		assert.Equal(t, []int64{7, 3}, m.Shape())
		for j, x := range []*core.Tensor{b, a, b} {
			col, err := m.Index(1, int64(j))
			require.NoError(t, err)
			same(t, x, col, fmt.Sprintf("%s column %d", dt, j))
		}
		_, err = parquetx.ReadMatrix(bytes.NewReader(buf.Bytes()), []string{"a", "m"})
		require.ErrorIs(t, err, parquetx.ErrColumn, "a fixed_shape_tensor column is no matrix column")
	}
	var buf bytes.Buffer
	require.NoError(t, parquetx.Write(&buf, []parquetx.Column{{"a", seq(t, core.Int16, 3)}, {"b", seq(t, core.Int32, 3)}}))
	_, err := parquetx.ReadMatrix(bytes.NewReader(buf.Bytes()), []string{"a", "b"})
	require.ErrorIs(t, err, arrowx.ErrMismatch)
	assert.ErrorContains(t, err, `column "b" is int32, column "a" int16`)
}

// TestBool8Column: a column of Arrow's canonical arrow.bool8, written by pqarrow, reads as a
// bool tensor over the decoded bytes (no copy), alone or in a matrix.
func TestBool8Column(t *testing.T) {
	b := extensions.NewBool8Builder(memory.DefaultAllocator)
	b.AppendValues([]bool{true, false, false, true, true}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	file := pqarrowFile(t, 100, arr)
	cols, err := parquetx.Columns(bytes.NewReader(file))
	require.NoError(t, err)
	require.Len(t, cols, 1)
	assert.Equal(t, core.Bool, cols[0].DType)
	var copied bool
	x, err := parquetx.Read(bytes.NewReader(file), "c0", adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer x.Release()
	assert.False(t, copied)
	vals, err := x.ReadOnlyBools()
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false, true, true}, vals)
	m, err := parquetx.ReadMatrix(bytes.NewReader(file), []string{"c0", "c0"})
	require.NoError(t, err)
	assert.Equal(t, []int64{5, 2}, m.Shape())
}

func TestDescribe(t *testing.T) {
	file := writeGroups(t, seq(t, core.Float32, 10, 3), 4)
	info, err := parquetx.Describe(bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 4, 2}, info.RowGroups)
	require.Len(t, info.Columns, 1)
	assert.Equal(t, []int64{10, 3}, info.Columns[0].Shape)
	_, err = parquetx.Describe(bytes.NewReader([]byte("PAR1 not a file PAR1")))
	require.Error(t, err)
}

// TestOnlyHolder: Write holds each tensor, the only holder of memory unmapped on release, and
// Read's tensor holds the decoded buffer, while collections run throughout.
func TestOnlyHolder(t *testing.T) {
	base := seq(t, core.Float32, 256, 16, 8)
	tr, err := base.Permute(0, 2, 1)
	require.NoError(t, err)
	rev, err := base.Reverse(1)
	require.NoError(t, err)
	foreignmem.Collect(t)
	for name, x := range map[string]*core.Tensor{"C": base, "permuted": tr, "reversed": rev} {
		for range 5 {
			m, err := foreignmem.Twin(x)
			require.NoError(t, err)
			var buf bytes.Buffer
			err = parquetx.Write(&buf, []parquetx.Column{{Name: "x", Tensor: m.Tensor}})
			m = foreignmem.Mapped{}
			require.NoError(t, err, name)
			got, err := parquetx.Read(bytes.NewReader(buf.Bytes()), "x")
			require.NoError(t, err)
			buf = bytes.Buffer{}
			runtime.GC()
			same(t, x, got, name)
			got.Release()
		}
	}
}

// ReadMatrix reads feature columns as one [rows, columns] matrix, as a model takes them.
func ExampleReadMatrix() {
	var buf bytes.Buffer
	age := core.MustFromSlice([]float32{31, 45, 27})
	income := core.MustFromSlice([]float32{52, 71, 38})
	if err := parquetx.Write(&buf, []parquetx.Column{{"age", age}, {"income", income}}); err != nil {
		panic(err)
	}
	m, err := parquetx.ReadMatrix(bytes.NewReader(buf.Bytes()), []string{"age", "income"})
	if err != nil {
		panic(err)
	}
	defer m.Release()
	vals, _ := m.ReadOnlyFloat32s()
	fmt.Println(m.Shape(), vals)
	// Output:
	// [3 2] [31 52 45 71 27 38]
}

// Describe reads the footer once: the tensor columns and the rows of each row group.
func ExampleDescribe() {
	var buf bytes.Buffer
	if err := parquetx.Write(&buf, []parquetx.Column{{"emb", core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)}}); err != nil {
		panic(err)
	}
	info, err := parquetx.Describe(bytes.NewReader(buf.Bytes()))
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Columns[0].Name, info.Columns[0].Shape, info.RowGroups)
	// Output:
	// emb [2 2] [2]
}

// TestVariableShapeColumn: tensors of their own shapes, written as an
// arrow.variable_shape_tensor column, read back one per row; a column of one shape reads as
// one tensor too.
func TestVariableShapeColumn(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Float32, core.Uint8, core.Bool} {
		in := []*core.Tensor{seq(t, dt, 2, 3), seq(t, dt, 4, 1), seq(t, dt, 1, 5)}
		var buf bytes.Buffer
		require.NoError(t, parquetx.Write(&buf, []parquetx.Column{{"id", seq(t, core.Int32, 3)}}, parquetx.VariableShapeColumn("v", in...)), dt.String())
		got, err := parquetx.ReadTensors(bytes.NewReader(buf.Bytes()), "v")
		require.NoError(t, err, dt.String())
		require.Len(t, got, 3)
		for i := range in {
			same(t, in[i], got[i], fmt.Sprintf("%s row %d", dt, i))
			got[i].Release()
		}
		_, err = parquetx.Read(bytes.NewReader(buf.Bytes()), "v")
		require.ErrorIs(t, err, adapters.ErrUnsupported, "shapes differ: no one tensor")
		ids, err := parquetx.ReadTensors(bytes.NewReader(buf.Bytes()), "id")
		require.NoError(t, err)
		require.Len(t, ids, 3)
		assert.Equal(t, 0, ids[0].Ndim())
	}
	one := []*core.Tensor{seq(t, core.Int16, 2, 2), seq(t, core.Int16, 2, 2)}
	var buf bytes.Buffer
	require.NoError(t, parquetx.Write(&buf, nil, parquetx.VariableShapeColumn("v", one...), parquetx.VariableShapeColumn("w", one...)))
	x, err := parquetx.Read(bytes.NewReader(buf.Bytes()), "w")
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 2, 2}, x.Shape())
	err = parquetx.Write(&buf, nil, parquetx.VariableShapeColumn("v", one...), parquetx.VariableShapeColumn("w", one[0]))
	require.ErrorIs(t, err, core.ErrShape, "v has two rows, w one")
}

// VariableShapeColumn writes tensors of their own shapes as one arrow.variable_shape_tensor
// column; ReadTensors gives them back, one per row.
func ExampleVariableShapeColumn() {
	var buf bytes.Buffer
	a := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := core.MustFromSlice([]float32{7, 8}, 1, 2)
	if err := parquetx.Write(&buf, nil, parquetx.VariableShapeColumn("boxes", a, b)); err != nil {
		panic(err)
	}
	rows, err := parquetx.ReadTensors(bytes.NewReader(buf.Bytes()), "boxes")
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		v, _ := r.ReadOnlyFloat32s()
		fmt.Println(r.Shape(), v)
		r.Release()
	}
	// Output:
	// [2 3] [1 2 3 4 5 6]
	// [1 2] [7 8]
}

// TestReadMatrixReleasesAtOnce: a matrix large enough for mapped memory gives its block back at
// its Release, with no collection in between (no view ReadMatrix made is left holding it).
func TestReadMatrixReleasesAtOnce(t *testing.T) {
	const rows = 1 << 19 // two float64 columns: 8 MiB
	cols := make([]parquetx.Column, 2)
	for j := range cols {
		x := core.MustNew(core.Float64, rows)
		v, err := core.Elements[float64](x)
		require.NoError(t, err)
		for i := range v {
			v[i] = float64(i*2 + j)
		}
		cols[j] = parquetx.Column{Name: fmt.Sprintf("c%d", j), Tensor: x}
	}
	var buf bytes.Buffer
	require.NoError(t, parquetx.Write(&buf, cols))
	base := leakcheck.Settle()
	m, err := parquetx.ReadMatrix(bytes.NewReader(buf.Bytes()), []string{"c0", "c1"})
	require.NoError(t, err)
	require.True(t, m.Foreign(), "a matrix of this size is over mapped memory")
	got, err := core.At[float64](m, rows-1, 1)
	require.NoError(t, err)
	assert.Equal(t, float64((rows-1)*2+1), got)
	m.Release()
	assert.Equal(t, base, core.LiveForeign(), "the block is given back at Release")
}
