package flightx

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// TestChunkOfMisaligned: values that a sender put one byte off an element boundary are copied
// into an aligned tensor of their own, with the same elements; aligned ones are a view of the
// buffer, as before.
func TestChunkOfMisaligned(t *testing.T) {
	want := []float32{1.5, -2, 3.25, 4}
	raw := make([]byte, 1+4*len(want)+7)
	for _, shift := range []int{1, 0} {
		vals := raw[shift : shift+4*len(want)]
		copy(vals, unsafe.Slice((*byte)(unsafe.Pointer(&want[0])), 4*len(want)))
		buf := memory.NewBufferBytes(vals)
		if shift == 0 && uintptr(unsafe.Pointer(&vals[0]))%4 != 0 {
			t.Fatal("a Go byte slice of this size is expected to be 8-byte aligned")
		}
		data := array.NewData(arrow.PrimitiveTypes.Float32, len(want), []*memory.Buffer{nil, buf}, nil, 0, 0)
		arr := array.MakeFromData(data)
		data.Release()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: column, Type: arrow.PrimitiveTypes.Float32}}, nil),
			[]arrow.Array{arr}, int64(len(want)))
		arr.Release()

		c, err := chunkOf(rec, Info{DType: core.Float32, Shape: []int64{int64(len(want))}}, int64(len(want)))
		rec.Release()
		require.NoError(t, err)
		got, err := core.ReadOnlyElements[float32](c)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		aligned := uintptr(c.Data())%4 == 0
		assert.True(t, aligned, "shift %d", shift)
		if shift == 1 {
			assert.NotZero(t, c.Flags()&core.FlagIsCopied, "a misaligned batch is copied")
		} else {
			assert.Equal(t, unsafe.Pointer(&vals[0]), c.Data(), "an aligned batch is a view")
		}
		c.Release()
	}
}
