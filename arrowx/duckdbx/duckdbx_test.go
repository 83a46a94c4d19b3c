//go:build duckdb_arrow

package duckdbx_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx/duckdbx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// duckTypes are DuckDB's names of the dtypes both sides know.
var duckTypes = []struct {
	dt   core.DLDataType
	name string
}{
	{core.Int8, "TINYINT"}, {core.Int16, "SMALLINT"}, {core.Int32, "INTEGER"}, {core.Int64, "BIGINT"},
	{core.Uint8, "UTINYINT"}, {core.Uint16, "USMALLINT"}, {core.Uint32, "UINTEGER"}, {core.Uint64, "UBIGINT"},
	{core.Float32, "FLOAT"}, {core.Float64, "DOUBLE"},
}

// seq is a tensor of dt and shape holding 0, 1, 2, ... (negative halves for signed types and
// fractions for floats, so that a misread sign or width shows).
func seq(t *testing.T, dt core.DLDataType, shape ...int64) *core.Tensor {
	t.Helper()
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	f := make([]float64, n)
	for i := range f {
		f[i] = float64(i)
		switch dt {
		case core.Float32, core.Float64:
			f[i] = float64(i)*0.25 - 3
		case core.Int8, core.Int16, core.Int32, core.Int64:
			f[i] = float64(i) - float64(n/2)
		}
	}
	src := core.MustFromSlice(f, shape...)
	out, err := memory.Cast(src, dt)
	require.NoError(t, err)
	return out
}

// values lists a tensor's elements as Go values of its dtype, as DuckDB's driver scans them.
func values(t *testing.T, x *core.Tensor) []any {
	t.Helper()
	var out []any
	add := func(vs any) {
		switch v := vs.(type) {
		case []int8:
			for _, e := range v {
				out = append(out, e)
			}
		case []int16:
			for _, e := range v {
				out = append(out, e)
			}
		case []int32:
			for _, e := range v {
				out = append(out, e)
			}
		case []int64:
			for _, e := range v {
				out = append(out, e)
			}
		case []uint8:
			for _, e := range v {
				out = append(out, e)
			}
		case []uint16:
			for _, e := range v {
				out = append(out, e)
			}
		case []uint32:
			for _, e := range v {
				out = append(out, e)
			}
		case []uint64:
			for _, e := range v {
				out = append(out, e)
			}
		case []float32:
			for _, e := range v {
				out = append(out, e)
			}
		case []float64:
			for _, e := range v {
				out = append(out, e)
			}
		}
	}
	c, err := memory.Contiguous(x)
	require.NoError(t, err)
	defer c.Release()
	switch x.DType() {
	case core.Int8:
		add(must(core.ReadOnlyElements[int8](c)))
	case core.Int16:
		add(must(core.ReadOnlyElements[int16](c)))
	case core.Int32:
		add(must(core.ReadOnlyElements[int32](c)))
	case core.Int64:
		add(must(core.ReadOnlyElements[int64](c)))
	case core.Uint8:
		add(must(core.ReadOnlyElements[uint8](c)))
	case core.Uint16:
		add(must(core.ReadOnlyElements[uint16](c)))
	case core.Uint32:
		add(must(core.ReadOnlyElements[uint32](c)))
	case core.Uint64:
		add(must(core.ReadOnlyElements[uint64](c)))
	case core.Float32:
		add(must(core.ReadOnlyElements[float32](c)))
	case core.Float64:
		add(must(core.ReadOnlyElements[float64](c)))
	default:
		t.Fatalf("no values for %s", x.DType())
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestDuckDBReadsParquetx: DuckDB reads the Parquet files parquetx writes, every dtype both
// know: a [rows, 2, 3] tensor column is a LIST of 6 values a row (an ARRAY when cast), a 1-D
// tensor a plain column, with exactly the tensor's values in C order.
func TestDuckDBReadsParquetx(t *testing.T) {
	_, conn := open(t)
	ctx := context.Background()
	dir := t.TempDir()
	const rows = 5
	for _, ty := range duckTypes {
		t.Run(ty.name, func(t *testing.T) {
			emb, col := seq(t, ty.dt, rows, 2, 3), seq(t, ty.dt, rows)
			path := filepath.Join(dir, ty.name+".parquet")
			require.NoError(t, parquetx.WriteFile(path, []parquetx.Column{
				{Name: "id", Tensor: core.MustFromSlice([]int64{0, 1, 2, 3, 4})},
				{Name: "emb", Tensor: emb}, {Name: "col", Tensor: col}}))
			r, err := conn.QueryContext(ctx, fmt.Sprintf(
				`SELECT typeof(emb), emb, emb::%s[6], typeof(col), col FROM '%s' ORDER BY id`, ty.name, path))
			require.NoError(t, err)
			defer r.Close()
			want, wantCol := values(t, emb), values(t, col)
			i := 0
			for ; r.Next(); i++ {
				var embType, colType string
				var list, arr []any
				var v any
				require.NoError(t, r.Scan(&embType, &list, &arr, &colType, &v))
				assert.Equal(t, ty.name+"[]", embType)
				assert.Equal(t, ty.name, colType)
				assert.Equal(t, want[i*6:i*6+6], list, "row %d", i)
				assert.Equal(t, want[i*6:i*6+6], arr, "row %d", i)
				assert.Equal(t, wantCol[i], v, "row %d", i)
			}
			require.NoError(t, r.Err())
			assert.Equal(t, rows, i)
		})
	}
}

// TestParquetxReadsDuckDB: parquetx reads the Parquet files DuckDB writes (COPY ... TO): an
// ARRAY column as [rows, n], a plain column as [rows], and plain columns as a matrix
// (ReadMatrix), with exactly the values DuckDB made.
func TestParquetxReadsDuckDB(t *testing.T) {
	_, conn := open(t)
	ctx := context.Background()
	dir := t.TempDir()
	const rows = 7
	for _, ty := range duckTypes {
		t.Run(ty.name, func(t *testing.T) {
			path := filepath.Join(dir, ty.name+".parquet")
			// element k is val(k), in DuckDB's SQL and in Go
			sqlVal, val := "(%[1]s - 10)", func(k int) float64 { return float64(k) - 10 }
			switch ty.dt {
			case core.Float32, core.Float64:
				sqlVal, val = "(%[1]s * 0.25 - 3)", func(k int) float64 { return float64(k)*0.25 - 3 }
			case core.Uint8, core.Uint16, core.Uint32, core.Uint64:
				sqlVal, val = "%[1]s", func(k int) float64 { return float64(k) }
			}
			_, err := conn.ExecContext(ctx, fmt.Sprintf(`COPY (
				SELECT r AS id, [%[1]s FOR k IN range(r*3, r*3+3)]::%[2]s[3] AS arr, %[3]s::%[2]s AS a, %[4]s::%[2]s AS b
				FROM range(%[5]d) t(r) ORDER BY r) TO '%[6]s' (FORMAT parquet)`,
				fmt.Sprintf(sqlVal, "k"), ty.name, fmt.Sprintf(sqlVal, "r"), fmt.Sprintf(sqlVal, "(r + 1)"), rows, path))
			require.NoError(t, err)

			arr, err := parquetx.ReadFile(path, "arr")
			require.NoError(t, err)
			defer arr.Release()
			assert.Equal(t, []int64{rows, 3}, arr.Shape())
			assert.Equal(t, values(t, made(t, ty.dt, rows*3, val, rows, 3)), values(t, arr))

			a, err := parquetx.ReadFile(path, "a")
			require.NoError(t, err)
			defer a.Release()
			assert.Equal(t, values(t, made(t, ty.dt, rows, val, rows)), values(t, a))

			m, err := parquetx.ReadMatrix(mustOpen(t, path), []string{"a", "b"})
			require.NoError(t, err)
			defer m.Release()
			assert.Equal(t, values(t, made(t, ty.dt, rows*2, func(k int) float64 { return val(k/2 + k%2) }, rows, 2)), values(t, m))
		})
	}
}

// made is a tensor of dt and shape holding val(0), val(1), ... in C order.
func made(t *testing.T, dt core.DLDataType, n int, val func(int) float64, shape ...int64) *core.Tensor {
	t.Helper()
	f := make([]float64, n)
	for k := range f {
		f[k] = val(k)
	}
	out, err := memory.Cast(core.MustFromSlice(f, shape...), dt)
	require.NoError(t, err)
	return out
}

// writeVectors writes vectors.parquet with parquetx: id (int64) and embedding ([rows, 4]
// float32, element k = k/8), and returns its path and the embedding.
func writeVectors(t *testing.T, rows int) (string, *core.Tensor) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vectors.parquet")
	ids := make([]int64, rows)
	for i := range ids {
		ids[i] = int64(i)
	}
	emb := made(t, core.Float32, rows*4, func(k int) float64 { return float64(k) / 8 }, int64(rows), 4)
	require.NoError(t, parquetx.WriteFile(path, []parquetx.Column{
		{Name: "id", Tensor: core.MustFromSlice(ids)}, {Name: "embedding", Tensor: emb}}))
	return path, emb
}

// rowsOf is the rows of emb ([rows, 4] float32) whose index passes keep, flattened.
func rowsOf(t *testing.T, emb *core.Tensor, keep func(int) bool) []float32 {
	t.Helper()
	all := must(core.ReadOnlyElements[float32](emb))
	var out []float32
	for r := 0; r < int(emb.Shape()[0]); r++ {
		if keep(r) {
			out = append(out, all[r*4:r*4+4]...)
		}
	}
	return out
}

// TestQueryZeroCopy: the Arrow result of a filtered query over a parquetx file becomes a
// [rows, 4] tensor over the very values buffer of DuckDB's Arrow batch (pointer identity), with
// the right rows, and outlives the connection.
func TestQueryZeroCopy(t *testing.T) {
	db, conn := open(t)
	ctx := context.Background()
	path, emb := writeVectors(t, 100)
	q := fmt.Sprintf(`SELECT embedding::FLOAT[4] FROM '%s' WHERE id %% 3 = ? ORDER BY id`, path)

	var batches int
	require.NoError(t, duckdbx.Each(ctx, conn, q, []any{1}, func(x *core.Tensor, col arrow.Array) error {
		defer x.Release()
		batches++
		fsl, ok := col.(*array.FixedSizeList)
		require.True(t, ok, "DuckDB's ARRAY comes as a FixedSizeList, not %s", col.DataType())
		vals := fsl.ListValues().(*array.Float32).Float32Values()
		assert.Equal(t, unsafe.Pointer(&vals[0]), unsafe.Add(x.Data(), x.ByteOffset()), "the tensor is over the batch's values buffer")
		assert.Equal(t, []int64{33, 4}, x.Shape())
		assert.Zero(t, x.Flags()&core.FlagIsCopied)
		return nil
	}))
	assert.Equal(t, 1, batches)

	var copied bool
	x, err := duckdbx.Query(ctx, conn, q, []any{0}, adapters.ReportCopy(&copied), adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer x.Release()
	assert.False(t, copied)
	assert.Equal(t, []int64{34, 4}, x.Shape())
	conn.Close()
	db.Close()
	assert.Equal(t, rowsOf(t, emb, func(r int) bool { return r%3 == 0 }), must(core.ReadOnlyElements[float32](x)))
}

// TestQueryBatches: a result of more rows than DuckDB's vector size (2048) comes in batches,
// each a tensor without a copy (Each); Query copies them into one tensor (flagged, reported,
// refused under ZeroCopyOnly). An empty result is a tensor of 0 rows.
func TestQueryBatches(t *testing.T) {
	_, conn := open(t)
	ctx := context.Background()
	const rows = 5000
	path, emb := writeVectors(t, rows)
	q := fmt.Sprintf(`SELECT embedding::FLOAT[4] FROM '%s' ORDER BY id`, path)

	var sizes []int64
	require.NoError(t, duckdbx.Each(ctx, conn, q, nil, func(x *core.Tensor, col arrow.Array) error {
		defer x.Release()
		sizes = append(sizes, x.Shape()[0])
		return nil
	}))
	assert.Greater(t, len(sizes), 1)
	var sum int64
	for _, s := range sizes {
		sum += s
	}
	assert.Equal(t, int64(rows), sum)

	var copied bool
	x, err := duckdbx.Query(ctx, conn, q, nil, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer x.Release()
	assert.True(t, copied)
	assert.NotZero(t, x.Flags()&core.FlagIsCopied)
	assert.Equal(t, []int64{rows, 4}, x.Shape())
	assert.Equal(t, rowsOf(t, emb, func(int) bool { return true }), must(core.ReadOnlyElements[float32](x)))

	_, err = duckdbx.Query(ctx, conn, q, nil, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)

	empty, err := duckdbx.Query(ctx, conn, fmt.Sprintf(`SELECT embedding::FLOAT[4] FROM '%s' WHERE id < 0`, path), nil)
	require.NoError(t, err)
	defer empty.Release()
	assert.Equal(t, []int64{0, 4}, empty.Shape())
}
