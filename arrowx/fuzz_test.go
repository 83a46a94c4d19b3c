package arrowx_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/memory"
)

// FuzzFromArrayData builds array data as an untrusted producer (a C or IPC peer) could
// describe it, lengths, offsets, list sizes, null counts and buffers all as given, and
// converts it: FromArrayData must return a tensor whose every element it can read, or an error;
// never panic or read outside the buffers.
func FuzzFromArrayData(f *testing.F) {
	f.Add(uint8(0), int64(4), int64(0), int32(0), int64(0), int64(0), int64(0), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, []byte{})
	f.Add(uint8(1), int64(2), int64(1), int32(2), int64(6), int64(1), int64(1), make([]byte, 64), []byte{0xfb})
	f.Add(uint8(2), int64(3), int64(0), int32(0), int64(0), int64(0), int64(2), []byte{0xff}, []byte{0x05})
	f.Add(uint8(3), int64(1), int64(0), int32(3), int64(3), int64(0), int64(0), make([]byte, 6), []byte{})
	f.Fuzz(func(t *testing.T, kind uint8, n, off int64, size int32, childN, childOff, nulls int64, values, valid []byte) {
		if n < 0 || n > 1<<20 || off < 0 || off > 1<<20 || childN < 0 || childN > 1<<20 || childOff < 0 || childOff > 1<<20 {
			return // arrow-go's own NewData takes ints; the checks under test are on what it stores
		}
		leafTypes := []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Int16,
			arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Float64}
		leaf := leafTypes[int(kind)%len(leafTypes)]
		var bm *amemory.Buffer
		if len(valid) > 0 {
			bm = amemory.NewBufferBytes(valid)
		}
		vb := amemory.NewBufferBytes(values)
		var d arrow.ArrayData
		if size > 0 && size <= 64 {
			child := array.NewData(leaf, int(childN), []*amemory.Buffer{bm, vb}, nil, int(nulls%3), int(childOff))
			defer child.Release()
			d = array.NewData(arrow.FixedSizeListOf(size, leaf), int(n), []*amemory.Buffer{nil}, []arrow.ArrayData{child}, 0, int(off))
		} else {
			d = array.NewData(leaf, int(n), []*amemory.Buffer{bm, vb}, nil, int(nulls%3), int(off))
		}
		defer d.Release()
		for _, opts := range [][]adapters.Option{nil, {arrowx.FillNulls(1)}} {
			x, err := arrowx.FromArrayData(d, opts...)
			if err != nil {
				continue
			}
			c, err := memory.Contiguous(x) // reads every element
			if err != nil {
				t.Fatalf("reading %s: %v", x, err)
			}
			c.Release()
			x.Release()
		}
	})
}
