package arrowx_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/endian"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// numericDTypes are the dtypes of Arrow's fixed-width numeric primitives.
var numericDTypes = []core.DLDataType{core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16,
	core.Uint32, core.Uint64, core.Float16, core.Float32, core.Float64}

// TestFromRecordByteOrder: a record of every numeric type in both byte orders (the big-endian
// one assembled by hand, its schema saying so and its buffers in that order) converts to the
// same values; the other byte order is a copy, reported, and refused under ZeroCopyOnly naming
// the byte order, with nulls filled after the swap; this machine's is still a view.
func TestFromRecordByteOrder(t *testing.T) {
	for _, dt := range numericDTypes {
		for _, order := range []endian.Endianness{endian.LittleEndian, endian.BigEndian} {
			t.Run(fmt.Sprint(dt, "-", order), func(t *testing.T) {
				want := arrowtest.Seq(t, dt, 5, 3) // [rows, columns]
				rec := arrowtest.Record(t, want, order, -1)
				defer rec.Release()
				native := order == endian.NativeEndian
				var copied bool
				got, err := arrowx.FromRecord(rec, adapters.ReportCopy(&copied))
				require.NoError(t, err)
				arrowtest.RequireSame(t, want, got, "values")
				got.Release()
				assert.Equal(t, !native && dt.Size() > 1, copied)
				_, err = arrowx.FromRecord(rec, adapters.ZeroCopyOnly())
				if native || dt.Size() == 1 {
					assert.NoError(t, err, "in this machine's byte order the columns are shared")
				} else {
					require.ErrorIs(t, err, adapters.ErrCopyRequired)
					assert.ErrorContains(t, err, "the record is big-endian, this machine little-endian")
				}

				// a null in row 2: filled after the swap
				withNull := arrowtest.Record(t, want, order, 2)
				defer withNull.Release()
				_, err = arrowx.FromRecord(withNull)
				require.ErrorIs(t, err, arrowx.ErrNulls)
				filled, err := arrowx.FromRecord(withNull, arrowx.FillNulls(7))
				require.NoError(t, err)
				defer filled.Release()
				for r := range int64(5) {
					for c := range int64(3) {
						w, err := core.At[float64](castTo64(t, want), r, c)
						require.NoError(t, err)
						if r == 2 {
							w = 7
						}
						g, err := core.At[float64](castTo64(t, filled), r, c)
						require.NoError(t, err)
						assert.Equal(t, w, g, "[%d %d]", r, c)
					}
				}
			})
		}
	}
}

// TestSwapIsPerValue: the bytes of each value are reversed, not those of the buffer.
func TestSwapIsPerValue(t *testing.T) {
	b := make([]byte, 8)
	binary.BigEndian.PutUint32(b, 0x01020304)
	binary.BigEndian.PutUint32(b[4:], 0x05060708)
	vals := amemory.NewBufferBytes(b)
	d := array.NewData(arrow.PrimitiveTypes.Uint32, 2, []*amemory.Buffer{nil, vals}, nil, 0, 0)
	defer d.Release()
	col := array.MakeFromData(d)
	defer col.Release()
	rec := array.NewRecordBatch(arrow.NewSchemaWithEndian([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Uint32}}, nil, endian.BigEndian),
		[]arrow.Array{col}, 2)
	defer rec.Release()
	x, err := arrowx.FromRecord(rec)
	require.NoError(t, err)
	defer x.Release()
	got, err := core.ReadOnlyElements[uint32](x)
	require.NoError(t, err)
	assert.Equal(t, []uint32{0x01020304, 0x05060708}, got)
}

// castTo64 is x as float64 values, released with the test.
func castTo64(t *testing.T, x *core.Tensor) *core.Tensor {
	t.Helper()
	y, err := memory.Cast(x, core.Float64)
	require.NoError(t, err)
	t.Cleanup(y.Release)
	return y
}
