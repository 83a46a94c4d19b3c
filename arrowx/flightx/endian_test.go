package flightx_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/endian"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/core"
)

// TestPlainStreamByteOrder: a plain Arrow stream of a column of every numeric type, written by
// arrow-go's record writer in either byte order (the schema message says which), reads as the
// same values: the stream reader flightx uses swaps a big-endian body into this machine's order.
func TestPlainStreamByteOrder(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16,
		core.Uint32, core.Uint64, core.Float16, core.Float32, core.Float64} {
		for _, order := range []endian.Endianness{endian.LittleEndian, endian.BigEndian} {
			t.Run(fmt.Sprint(dt, "-", order), func(t *testing.T) {
				want := arrowtest.Seq(t, dt, 7, 1)
				rec := arrowtest.Record(t, want, order, -1)
				defer rec.Release()
				c := dial(t, startPlain(t, rec))
				got, _, err := c.Get(context.Background(), "x")
				require.NoError(t, err)
				defer got.Release()
				flat, err := want.Reshape(7)
				require.NoError(t, err)
				defer flat.Release()
				arrowtest.RequireSame(t, flat, got, fmt.Sprint(dt, " ", order))
			})
		}
	}
}
