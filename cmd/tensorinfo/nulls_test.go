package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParquetStatsWithNulls: -stats of Parquet columns with nulls (in two row groups, a NaN
// among the values, a uint8 column and a float64 one) reports the null count and the min, max,
// mean and NaN count of the other values, instead of failing the file.
func TestParquetStatsWithNulls(t *testing.T) {
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	defer fb.Release()
	fb.AppendValues([]float64{1, 0, math.NaN(), 5, 0, -3}, []bool{true, false, true, true, false, true})
	f64 := fb.NewArray()
	defer f64.Release()
	ub := array.NewUint8Builder(memory.DefaultAllocator)
	defer ub.Release()
	ub.AppendValues([]uint8{0, 1, 0, 200, 9, 0}, []bool{false, true, true, true, true, false})
	u8 := ub.NewArray()
	defer u8.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "f", Type: f64.DataType(), Nullable: true},
		{Name: "u", Type: u8.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{f64, u8}, 6)
	defer rec.Release()
	path := writeRecordParquet(t, schema, rec, "nulls.parquet")

	code, out, errs := tensorinfo("-json", "-stats", path)
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got[0].Arrays, 2)
	f, u := got[0].Arrays[0].Stats, got[0].Arrays[1].Stats
	require.NotNil(t, f)
	require.NotNil(t, u)
	assert.Equal(t, int64(2), f.Nulls)
	assert.Equal(t, int64(1), f.NaN)
	assert.Equal(t, -3.0, f.Min.v)
	assert.Equal(t, 5.0, f.Max.v)
	assert.Equal(t, 1.0, f.Mean.v) // (1 + 5 - 3) / 3
	assert.Equal(t, int64(2), u.Nulls)
	assert.Equal(t, int64(0), u.NaN)
	assert.Equal(t, 0.0, u.Min.v)
	assert.Equal(t, 200.0, u.Max.v)
	assert.Equal(t, 52.5, u.Mean.v) // (1 + 0 + 200 + 9) / 4

	code, out, errs = tensorinfo("-stats", path)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "1 (2 null)")
}
