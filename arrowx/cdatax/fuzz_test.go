package cdatax_test

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/arrowx/cdatax/internal/ctest"
)

// the values a fuzzed op writes. Lengths and offsets are only ever made smaller than the
// producer's, or impossible (negative, or so large that any element type overflows): a struct
// that claims more memory than its producer allocated, in range, is a lie no consumer can catch,
// so the fuzzer does not tell it.
var fuzzInts = []int64{-1, 0, 1, 2, 3, -2, math.MinInt64, math.MaxInt64, math.MaxInt64 - 3}

var fuzzFormats = []string{"f", "g", "c", "b", "u", "q", "", "+w:0", "+w:1", "+w:2", "+w:3", "+w:-1",
	"+w:99999999999", "+l", "+w:3x", "+w", "+w:", "+s", "n", "tdD", "+w:0000000003"}

// FuzzImportArray spoils a C producer's array in the ways the fuzzer picks (fields set to
// impossible values, pointers set to NULL, format strings replaced, dictionaries, loops, structs
// released before the handover) and hands it to ImportArray, which must return a tensor or an
// error, never crash, and leave every struct the producer made released exactly once (by its
// producer's release: the top ones called by ImportArray or by the tensor's last holder, the
// children by their parents).
func FuzzImportArray(f *testing.F) {
	f.Add([]byte{0, 5, 0, 0})                       // a valid 1-D array
	f.Add([]byte{1, 1, 2, 1, 1, 0, 0, 1, 0})        // a valid 2-D array with nulls and an offset
	f.Add([]byte{0, 5, 0, 0, 0, 0, 0})              // length -1
	f.Add([]byte{1, 1, 2, 0, 0, 7, 0, 4})           // FixedSizeList of size 0
	f.Add([]byte{1, 1, 2, 0, 0, 8, 0, 0})           // a schema of a list with no child
	f.Add([]byte{1, 1, 2, 0, 0, 11, 0, 0})          // a loop
	f.Add([]byte{1, 1, 2, 0, 0, 12, 1, 1})          // a child released, fields intact
	f.Add([]byte{0, 5, 0, 0, 6, 0, 3, 'a', 'b'})    // a format from the input
	f.Add([]byte{2, 1, 1, 1, 2, 1, 2, 0, 13, 0, 0}) // the top schema released
	f.Fuzz(func(t *testing.T, in []byte) {
		next := func() byte {
			if len(in) == 0 {
				return 0
			}
			b := in[0]
			in = in[1:]
			return b
		}
		ndim := 1 + int(next()%3)
		shape := make([]int64, ndim)
		for i := range shape {
			shape[i] = 1 + int64(next()%5)
		}
		offset, nulls := int64(next()%4), next()%2 == 1
		ctest.Reset()
		arr, sc, _ := ctest.Produce(offset, nulls, shape...)
		defer ctest.Free(arr, sc)
		lengths, offsets := make([]int64, ndim), make([]int64, ndim)
		for d := range ndim {
			lengths[d], offsets[d] = ctest.ArrayLengths(arr, d)
		}
		for ops := 0; len(in) > 0 && ops < 8; ops++ {
			kind, depth, v := next()%14, int(next())%ndim, next()
			n := fuzzInts[int(v)%len(fuzzInts)]
			switch kind {
			case 0, 2: // length, offset: only smaller, or impossible
				if kind == 0 && n >= 0 {
					n = min(n, lengths[depth])
				}
				if kind == 2 && n >= 0 {
					n = min(n, offsets[depth])
				}
				ctest.SetArray(arr, depth, ctest.ArrayField(kind), n)
			case 1, 3, 4: // null_count, n_buffers, n_children
				ctest.SetArray(arr, depth, ctest.ArrayField(kind), n)
			case 5: // a pointer to NULL
				ctest.SetArray(arr, depth, ctest.Buffers+ctest.ArrayField(v%4), 0)
			case 6: // a format from the input, up to 7 bytes (NUL-terminated where it has one)
				b := make([]byte, 0, 8)
				for range int(v % 8) {
					b = append(b, next())
				}
				ctest.SetSchemaFormat(sc, depth, string(b), false)
			case 7:
				ctest.SetSchemaFormat(sc, depth, fuzzFormats[int(v)%len(fuzzFormats)], false)
			case 8:
				ctest.SetSchemaChildren(sc, depth, n, false)
			case 9:
				ctest.SetSchemaFormat(sc, depth, "", true)
			case 10:
				ctest.AttachDictionaries(arr, sc, depth)
			case 11:
				ctest.Cycle(arr, sc, depth)
			case 12: // the last op: nothing may be reached through a released struct
				ctest.ReleaseArrayAt(arr, depth, v%2 == 1)
				in = nil
			case 13:
				ctest.ReleaseSchemaAt(sc, depth, v%2 == 1)
				in = nil
			}
		}
		orphans := ctest.Orphans()

		ten, err := cdatax.ImportArray((*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(sc))
		if err != nil {
			assert.Nil(t, ten)
		} else {
			require.NotNil(t, ten)
			assert.True(t, ten.ReadOnly())
			ten.Release()
		}
		assert.True(t, ctest.Released(arr), "the array is released (or moved)")
		assert.True(t, ctest.SchemaReleased(sc), "the schema is released")
		for i, n := range ctest.Releases() {
			require.EqualValues(t, 1, n, "struct %d released %d times (error %v)", i, n, err)
		}
		require.Equal(t, orphans, ctest.Orphans(), "ImportArray called a child's release")
	})
}
