package cdatax_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/arrowx/cdatax/internal/ctest"
	"github.com/dlpack-go/dlpack/core"
)

// cArrowArray mirrors the C Data Interface's ArrowArray, to read the buffers of an exported tree.
type cArrowArray struct {
	length, nullCount, offset, nBuffers, nChildren int64
	buffers                                        *unsafe.Pointer
	children, dictionary, release, privateData     unsafe.Pointer
}

// the structs of an exported variable_shape_tensor tree, in pre-order
const (
	vstTop         = iota // Struct "+s"
	vstData               // List "+l"
	vstDataValues         // float32 "f"
	vstShape              // FixedSizeList "+w:ndim"
	vstShapeValues        // int32 "i"
	vstNodes
)

// the int32 values a fuzzed op writes into the shape column or the data column's offsets: any
// int32 is a value the consumer reads and must check, never a lie about memory
var fuzzInt32s = []int32{-1, 0, 1, 2, 3, 5, 6, 7, -2, math.MaxInt32, math.MinInt32, 1 << 16, 1 << 30}

// the formats no fuzzed op gives the data values: wider than the float32 the producer allocated,
// they would claim memory it does not have (a lie no consumer can catch)
var wideFormats = map[string]bool{"g": true, "l": true, "L": true, "D": true, "tdm": true, "z": true, "Z": true}

var vstFormats = append([]string{"+s", "+l", "+L", "i", "I", "f", "e", "s", "+w:1", "+w:4", "+m", "+vl"}, fuzzFormats...)

// the extension name and metadata a fuzzed op puts on the top schema
var vstMetadata = [][2]string{
	{arrowx.VariableShapeTensorName, `{}`},
	{arrowx.VariableShapeTensorName, ``},
	{arrowx.VariableShapeTensorName, `{"dim_names":["a","b"]}`},
	{arrowx.VariableShapeTensorName, `{"dim_names":["a"]}`},
	{arrowx.VariableShapeTensorName, `{"permutation":[1,0]}`},
	{arrowx.VariableShapeTensorName, `{"permutation":[0,0]}`},
	{arrowx.VariableShapeTensorName, `{"permutation":[2,0,1]}`},
	{arrowx.VariableShapeTensorName, `{"permutation":[-1,9]}`},
	{arrowx.VariableShapeTensorName, `{"uniform_shape":[2,null]}`},
	{arrowx.VariableShapeTensorName, `{"uniform_shape":[null,3]}`},
	{arrowx.VariableShapeTensorName, `{"uniform_shape":[-1,3]}`},
	{arrowx.VariableShapeTensorName, `{"uniform_shape":[9223372036854775807,1,1]}`},
	{arrowx.VariableShapeTensorName, `{"ndim":2}`},
	{arrowx.VariableShapeTensorName, `{"shape":[2,3]}`},
	{arrowx.VariableShapeTensorName, `{"dim_names":null,"permutation":null,"uniform_shape":null}`},
	{arrowx.VariableShapeTensorName, `{} {}`},
	{arrowx.VariableShapeTensorName, `[`},
	{"arrow.fixed_shape_tensor", `{"shape":[2,3]}`},
	{"", ``},
}

// FuzzImportVariableShapeTensors exports a real arrowx.VariableShapeTensorArray (a few float32
// tensors of one number of dimensions, maybe sliced) with ExportVariableShapeTensors, has the
// adopting C producer (ctest.Adopt) copy the exported structs into ones whose releases it counts,
// spoils that copy in the ways the fuzzer picks (lengths, offsets and null counts, n_buffers and
// n_children, pointers set to NULL, formats, dictionaries, loops, structs released before the
// handover, the shape column's values and the data column's offsets, the extension name and
// metadata) and hands it to ImportVariableShapeTensors. The oracle: no crash; an error wraps one
// of the sentinels the importer documents; every struct the producer made is released exactly
// once, by the importer or (children) by their parents, on error before it returns and on
// success once the array is released; and on success every element Tensor returns has as many
// values as its shape says, lying inside the producer's data values, all of them readable (and,
// unspoiled, the exported tensor's).
//
// Lengths and offsets are only made smaller than the producer's, or impossible, as in
// FuzzImportArray; the data values never get a wider format than float32.
func FuzzImportVariableShapeTensors(f *testing.F) {
	// the header: tensors, ndim, each tensor's dimensions, slice; then ops of (kind, struct, value)
	valid := []byte{1, 1, 2, 3, 1, 3, 0} // two 2-D tensors, 2x3 and 1x3
	sliced := []byte{2, 0, 2, 3, 0, 1}   // three 1-D tensors (one empty), the first sliced off
	threeD := []byte{0, 2, 1, 2, 3, 0}   // one 3-D tensor
	seed := func(header []byte, ops ...byte) []byte { return append(append([]byte{}, header...), ops...) }
	f.Add(valid)
	f.Add(sliced)
	f.Add(threeD)
	f.Add(seed(valid, 0, vstTop, 0))                                     // the top length -1
	f.Add(seed(valid, 0, vstData, 2))                                    // the data column shorter than the struct
	f.Add(seed(valid, 0, vstDataValues, 2))                              // the data values shorter than the offsets say
	f.Add(seed(valid, 0, vstShapeValues, 2))                             // the shape values shorter than the shape column
	f.Add(seed(valid, 0, vstShape, 7))                                   // the shape column's length MaxInt64
	f.Add(seed(sliced, 2, vstTop, 7))                                    // the top offset MaxInt64
	f.Add(seed(sliced, 2, vstShape, 0))                                  // the shape column's offset -1
	f.Add(seed(valid, 1, vstTop, 3))                                     // null_count 2 with no validity bitmap
	f.Add(seed(valid, 1, vstDataValues, 6))                              // null_count MinInt64
	f.Add(seed(valid, 3, vstData, 2))                                    // n_buffers 1 of a List
	f.Add(seed(valid, 4, vstTop, 2))                                     // n_children 1 of the Struct
	f.Add(seed(valid, 4, vstShape, 7))                                   // n_children MaxInt64
	f.Add(seed(valid, 5, vstData, 3))                                    // the offsets buffer NULL
	f.Add(seed(valid, 5, vstDataValues, 3))                              // the values buffer NULL
	f.Add(seed(valid, 5, vstShapeValues, 3))                             // the shape values buffer NULL
	f.Add(seed(valid, 5, vstTop, 1))                                     // children NULL
	f.Add(seed(valid, 5, vstShape, 0))                                   // buffers NULL
	f.Add(seed(valid, 6, vstShape, 4, '+', 'w', ':', '3'))               // the shape column of another ndim
	f.Add(seed(valid, 7, vstDataValues, 3))                              // the data values int32
	f.Add(seed(valid, 7, vstData, 2))                                    // a LargeList
	f.Add(seed(valid, 7, vstShapeValues, 5))                             // the shape values float32
	f.Add(seed(valid, 7, vstTop, 1))                                     // the top a List
	f.Add(seed(valid, 8, vstTop, 2))                                     // the schema's n_children 1
	f.Add(seed(valid, 8, vstData, 1))                                    // the schema's n_children 0, children NULL
	f.Add(seed(valid, 9, vstShapeValues, 0))                             // a NULL format
	f.Add(seed(valid, 10, vstTop, 2))                                    // dim_names
	f.Add(seed(valid, 10, vstTop, 3))                                    // dim_names of the wrong ndim
	f.Add(seed(valid, 10, vstTop, 4))                                    // a permutation
	f.Add(seed(valid, 10, vstTop, 5))                                    // a permutation that is not one
	f.Add(seed(valid, 10, vstTop, 9))                                    // a uniform_shape the tensors fit
	f.Add(seed(valid, 10, vstTop, 8))                                    // a uniform_shape the tensors do not fit
	f.Add(seed(valid, 10, vstTop, 10))                                   // a negative uniform_shape
	f.Add(seed(valid, 10, vstTop, 12))                                   // an unknown field (ndim)
	f.Add(seed(valid, 10, vstTop, 16))                                   // JSON cut short
	f.Add(seed(valid, 10, vstTop, 17))                                   // another extension's name
	f.Add(seed(valid, 11, vstTop, 5, '{', '"', 'p', '"', ':'))           // metadata from the input
	f.Add(seed(valid, 12, vstShapeValues, 0))                            // a negative dimension
	f.Add(seed(valid, 12, vstShapeValues, 144, 12, vstShapeValues, 197)) // huge dimensions
	f.Add(seed(valid, 12, vstShapeValues, 80))                           // a shape of the wrong product
	f.Add(seed(valid, 13, vstData, 17))                                  // offsets out of order
	f.Add(seed(valid, 13, vstData, 145))                                 // an offset past the values
	f.Add(seed(valid, 14, vstData, 0))                                   // a dictionary
	f.Add(seed(valid, 15, vstData, 0))                                   // a loop
	f.Add(seed(valid, 16, vstShapeValues, 1))                            // a child released, fields intact
	f.Add(seed(valid, 16, vstTop, 0))                                    // the top array released
	f.Add(seed(valid, 17, vstDataValues, 1))                             // a child schema released
	f.Fuzz(func(t *testing.T, in []byte) {
		next := func() byte {
			if len(in) == 0 {
				return 0
			}
			b := in[0]
			in = in[1:]
			return b
		}
		n, ndim := 1+int(next()%3), 1+int(next()%3)
		tensors := make([]*core.Tensor, n)
		for i := range tensors {
			shape := make([]int64, ndim)
			size := int64(1)
			for d := range shape {
				shape[d] = int64(next() % 4)
				size *= shape[d]
			}
			vals := make([]float32, size)
			for k := range vals {
				vals[k] = float32(i) + float32(k)/8
			}
			tensors[i] = core.MustFromSlice(vals, shape...)
		}
		first := 0
		if next()%2 == 1 && n > 1 {
			first = 1
		}
		src, err := arrowx.NewVariableShapeTensorArray(tensors, nil, nil)
		require.NoError(t, err)
		if first > 0 {
			s := array.NewSlice(src, int64(first), int64(n)).(*arrowx.VariableShapeTensorArray)
			src.Release()
			src = s
		}
		want := tensors[first:]

		// the original export, released by the test once the copy has been
		oa, os := ctest.Alloc()
		defer ctest.Free(oa, os)
		require.NoError(t, cdatax.ExportVariableShapeTensors(src, (*cdata.CArrowArray)(oa), (*cdata.CArrowSchema)(os)))
		src.Release()
		defer func() {
			cdata.ReleaseCArrowArray((*cdata.CArrowArray)(oa))
			cdata.ReleaseCArrowSchema((*cdata.CArrowSchema)(os))
		}()

		ctest.ResetAdopted()
		arr, sc := ctest.Adopt(oa, os)
		defer ctest.Free(arr, sc)
		arrays, schemas := ctest.AdoptedNodes(arr, sc)
		require.Len(t, arrays, vstNodes)
		require.Len(t, schemas, vstNodes)
		node := func(i int) *cArrowArray { return (*cArrowArray)(arrays[i]) }
		lengths, offsets := make([]int64, vstNodes), make([]int64, vstNodes)
		for i := range vstNodes {
			lengths[i], offsets[i] = node(i).length, node(i).offset
		}
		// the producer's memory: the data values, and the int32 columns an op writes into
		buf := func(i, b int) unsafe.Pointer { return unsafe.Slice(node(i).buffers, node(i).nBuffers)[b] }
		values, nValues := buf(vstDataValues, 1), offsets[vstDataValues]+lengths[vstDataValues]
		var shapeVals, listOffsets []int32
		if p := buf(vstShapeValues, 1); p != nil {
			shapeVals = unsafe.Slice((*int32)(p), offsets[vstShapeValues]+lengths[vstShapeValues])
		}
		if p := buf(vstData, 1); p != nil {
			listOffsets = unsafe.Slice((*int32)(p), offsets[vstData]+lengths[vstData]+1)
		}

		spoiled := false
		for ops := 0; len(in) > 0 && ops < 8; ops++ {
			spoiled = true
			kind, at, v := next()%18, int(next())%vstNodes, next()
			x := fuzzInts[int(v)%len(fuzzInts)]
			switch kind {
			case 0, 2: // length, offset: only smaller, or impossible
				if kind == 0 && x >= 0 {
					x = min(x, lengths[at])
				}
				if kind == 2 && x >= 0 {
					x = min(x, offsets[at])
				}
				ctest.SetArray(arrays[at], 0, ctest.ArrayField(kind), x)
			case 1, 3, 4: // null_count, n_buffers, n_children
				ctest.SetArray(arrays[at], 0, ctest.ArrayField(kind), x)
			case 5: // buffers, children, buffers[0] or buffers[1] to NULL
				ctest.SetArray(arrays[at], 0, ctest.Buffers+ctest.ArrayField(v%4), 0)
			case 6: // a format from the input, up to 7 bytes
				b := make([]byte, 0, 8)
				for range int(v % 8) {
					b = append(b, next())
				}
				if c, _, _ := strings.Cut(string(b), "\x00"); at == vstDataValues && wideFormats[c] {
					continue
				}
				ctest.SetAdoptedFormat(schemas[at], string(b), false)
			case 7:
				format := vstFormats[int(v)%len(vstFormats)]
				if at == vstDataValues && wideFormats[format] {
					continue
				}
				ctest.SetAdoptedFormat(schemas[at], format, false)
			case 8:
				ctest.SetSchemaChildren(schemas[at], 0, x, v%2 == 1)
			case 9:
				ctest.SetAdoptedFormat(schemas[at], "", true)
			case 10: // extension name and metadata from the list
				m := vstMetadata[int(v)%len(vstMetadata)]
				ctest.SetAdoptedMetadata(schemas[vstTop],
					ctest.Metadata("ARROW:extension:name", m[0], "ARROW:extension:metadata", m[1]))
			case 11: // extension metadata from the input, up to 47 bytes
				b := make([]byte, 0, 48)
				for range int(v % 48) {
					b = append(b, next())
				}
				ctest.SetAdoptedMetadata(schemas[vstTop], ctest.Metadata("ARROW:extension:name",
					arrowx.VariableShapeTensorName, "ARROW:extension:metadata", string(b)))
			case 12: // a value of the shape column
				if len(shapeVals) > 0 {
					shapeVals[int(v)%len(shapeVals)] = fuzzInt32s[int(v/16)%len(fuzzInt32s)]
				}
			case 13: // an offset of the data column
				if len(listOffsets) > 0 {
					listOffsets[int(v)%len(listOffsets)] = fuzzInt32s[int(v/16)%len(fuzzInt32s)]
				}
			case 14:
				ctest.AttachAdoptedDictionaries(arrays[at], schemas[at])
			case 15:
				ctest.Cycle(arrays[at], schemas[at], 0)
			case 16: // the last op: nothing may be reached through a released struct
				ctest.ReleaseAdoptedArray(arrays[at], v%2 == 1)
				in = nil
			case 17:
				ctest.ReleaseAdoptedSchema(schemas[at], v%2 == 1)
				in = nil
			}
		}
		orphans := ctest.AdoptedOrphans()

		vt, err := cdatax.ImportVariableShapeTensors((*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(sc))
		assert.True(t, ctest.Released(arr), "the array is released (or moved)")
		assert.True(t, ctest.SchemaReleased(sc), "the schema is released")
		if err != nil {
			require.Nil(t, vt)
			require.True(t, errors.Is(err, arrowx.ErrMalformed) || errors.Is(err, adapters.ErrUnsupported) ||
				errors.Is(err, cdatax.ErrReleased) || errors.Is(err, core.ErrTooLarge),
				"error %v wraps none of the importer's sentinels", err)
			require.False(t, !spoiled, "a valid export refused: %v", err)
		} else {
			require.NotNil(t, vt)
			for i := range vt.Len() {
				x, err := vt.Tensor(i, adapters.ZeroCopyOnly())
				if err != nil {
					require.True(t, errors.Is(err, arrowx.ErrMalformed) || errors.Is(err, arrowx.ErrNulls) ||
						errors.Is(err, adapters.ErrUnsupported) || errors.Is(err, adapters.ErrCopyRequired),
						"element %d: error %v wraps none of Tensor's sentinels", i, err)
					require.False(t, !spoiled, "element %d of a valid export refused: %v", i, err)
					continue
				}
				checkElement(t, x, values, nValues)
				if !spoiled {
					assert.Equal(t, want[i].Shape(), x.Shape(), "element %d", i)
					got, err := core.ReadOnlyElements[float32](x)
					require.NoError(t, err)
					wv, _ := core.ReadOnlyElements[float32](want[i])
					assert.Equal(t, wv, got, "element %d", i)
				}
				x.Release()
			}
			vt.Release()
			leakcheck.Settle()
		}
		for i, c := range ctest.AdoptedReleases() {
			require.EqualValues(t, 1, c, "struct %d released %d times (error %v)", i, c, err)
		}
		require.Equal(t, orphans, ctest.AdoptedOrphans(), "the importer called a child's release")
	})
}

// checkElement checks a tensor Tensor returned: its shape's product is its number of elements,
// its elements (as its strides reach them) lie inside the nValues float32s of the data values at
// values, and reading every byte of them does not fault.
func checkElement(t *testing.T, x *core.Tensor, values unsafe.Pointer, nValues int64) {
	t.Helper()
	shape, strides := x.Shape(), x.Strides()
	n := int64(1)
	for _, d := range shape {
		require.GreaterOrEqual(t, d, int64(0), "shape %v", shape)
		n *= d
	}
	require.Equal(t, n, x.Len(), "shape %v", shape)
	if n == 0 {
		return
	}
	size := int64(x.DType().Size())
	lo, hi := int64(0), int64(0) // the first and last element's offsets, in elements
	for k, d := range shape {
		if s := strides[k] * (d - 1); s < 0 {
			lo += s
		} else {
			hi += s
		}
	}
	start := uintptr(x.Data()) + uintptr(lo*size)
	end := uintptr(x.Data()) + uintptr((hi+1)*size)
	base := uintptr(values)
	require.True(t, start >= base && end <= base+uintptr(nValues*4),
		"element of shape %v, strides %v at [%#x, %#x) outside the data values [%#x, %#x)", shape, strides,
		start, end, base, base+uintptr(nValues*4))
	var sum byte
	for _, b := range unsafe.Slice((*byte)(unsafe.Add(x.Data(), lo*size)), (hi-lo+1)*size) {
		sum ^= b
	}
	_ = sum
}
