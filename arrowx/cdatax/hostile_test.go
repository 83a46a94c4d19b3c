package cdatax_test

import (
	"math"
	"strings"
	"testing"
	"unsafe"

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

// hostile is an array a C producer makes (float32 of shape, as nested FixedSizeLists) and then
// spoils before handing it over.
type hostile struct {
	name  string
	shape []int64
	nulls bool
	spoil func(arr, schema unsafe.Pointer)
	err   error
	says  []string // what the error must name: the struct, the field, the value
}

func setArray(depth int, f ctest.ArrayField, v int64) func(arr, schema unsafe.Pointer) {
	return func(arr, _ unsafe.Pointer) { ctest.SetArray(arr, depth, f, v) }
}

func setFormat(depth int, format string) func(arr, schema unsafe.Pointer) {
	return func(_, schema unsafe.Pointer) { ctest.SetSchemaFormat(schema, depth, format, false) }
}

func setSchemaChildren(depth int, n int64, null bool) func(arr, schema unsafe.Pointer) {
	return func(_, schema unsafe.Pointer) { ctest.SetSchemaChildren(schema, depth, n, null) }
}

var hostiles = []hostile{
	// the array's own fields
	{name: "length -1", spoil: setArray(0, ctest.Length, -1), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray length -1 is negative"}},
	{name: "offset -1", spoil: setArray(0, ctest.Offset, -1), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray offset -1 is negative"}},
	{name: "offset INT64_MAX", spoil: setArray(0, ctest.Offset, math.MaxInt64), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray offset 9223372036854775807 + length 6 overflows"}},
	{name: "null_count > length", spoil: setArray(0, ctest.NullCount, 7), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray null_count 7 is outside [-1, length 6]"}},
	{name: "null_count -2", spoil: setArray(0, ctest.NullCount, -2), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray null_count -2"}},
	{name: "length overflows the values", spoil: setArray(0, ctest.Length, 1<<62), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray offset 0 + length 4611686018427387904 elements of float32 overflow"}},
	{name: "n_buffers 3", spoil: setArray(0, ctest.NBuffers, 3), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray n_buffers is 3, a float32 array has 2"}},
	{name: "buffers NULL", spoil: setArray(0, ctest.Buffers, 0), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray buffers is NULL"}},
	{name: "values NULL", spoil: setArray(0, ctest.Values, 0), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray values buffer (buffers[1]) is NULL", "length 6"}},
	{name: "nulls without a bitmap", nulls: true, spoil: setArray(0, ctest.Validity, 0), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray null_count is 2, with no validity bitmap"}},
	{name: "array of a list with no child", shape: []int64{2, 3}, spoil: setArray(0, ctest.NChildren, 0),
		err: arrowx.ErrMalformed, says: []string{"ArrowArray n_children is 0, a FixedSizeList array has 1"}},
	{name: "array children NULL", shape: []int64{2, 3}, spoil: setArray(0, ctest.Children, 0),
		err: arrowx.ErrMalformed, says: []string{"ArrowArray children[0] is NULL"}},
	{name: "child length -1", shape: []int64{2, 3}, spoil: setArray(1, ctest.Length, -1), err: arrowx.ErrMalformed,
		says: []string{"ArrowArray (child at depth 1) length -1 is negative"}},
	{name: "child offset INT64_MAX", shape: []int64{2, 3}, spoil: setArray(1, ctest.Offset, math.MaxInt64),
		err: arrowx.ErrMalformed, says: []string{"ArrowArray (child at depth 1) offset 9223372036854775807"}},
	{name: "list lengths overflow", shape: []int64{2, 3}, spoil: setArray(0, ctest.Length, math.MaxInt64/2),
		err: arrowx.ErrMalformed, says: []string{"ArrowArray offset 0 + length 4611686018427387903 lists of 3 elements overflow"}},

	// the schema
	{name: "format NULL", spoil: func(_, s unsafe.Pointer) { ctest.SetSchemaFormat(s, 0, "", true) },
		err: arrowx.ErrMalformed, says: []string{"ArrowSchema format is NULL"}},
	{name: "format unknown", spoil: setFormat(0, "q"), err: adapters.ErrUnsupported,
		says: []string{`ArrowSchema format "q" is not one arrowx maps`}},
	{name: "format of strings", spoil: setFormat(0, "u"), err: adapters.ErrUnsupported,
		says: []string{`ArrowSchema format "u"`}},
	{name: "format too long", spoil: setFormat(0, "+w:"+strings.Repeat("7", 60)), err: adapters.ErrUnsupported,
		says: []string{`ArrowSchema format "+w:77777`, "longer than"}},
	{name: "FixedSizeList of size 0", shape: []int64{2, 3}, spoil: setFormat(0, "+w:0"), err: adapters.ErrUnsupported,
		says: []string{`ArrowSchema format "+w:0": FixedSizeList size 0`}},
	{name: "FixedSizeList of size -3", shape: []int64{2, 3}, spoil: setFormat(0, "+w:-3"), err: arrowx.ErrMalformed,
		says: []string{`ArrowSchema format "+w:-3": FixedSizeList size "-3" is not a decimal number`}},
	{name: "FixedSizeList of no size", shape: []int64{2, 3}, spoil: setFormat(0, "+w:"), err: arrowx.ErrMalformed,
		says: []string{`ArrowSchema format "+w:" has no FixedSizeList size`}},
	{name: "FixedSizeList over int32", shape: []int64{2, 3}, spoil: setFormat(0, "+w:4294967296"),
		err: adapters.ErrUnsupported, says: []string{"FixedSizeList size 4294967296 is over 2147483647"}},
	{name: "schema of a list with no child", shape: []int64{2, 3}, spoil: setSchemaChildren(0, 0, false),
		err: arrowx.ErrMalformed, says: []string{`ArrowSchema n_children is 0, format "+w:3" has 1`}},
	{name: "schema of a list with two children", shape: []int64{2, 3}, spoil: setSchemaChildren(0, 2, false),
		err: arrowx.ErrMalformed, says: []string{`ArrowSchema n_children is 2, format "+w:3" has 1`}},
	{name: "schema of a number with a child", spoil: setSchemaChildren(0, 1, false),
		err: arrowx.ErrMalformed, says: []string{`ArrowSchema n_children is 1, format "f" has 0`}},
	{name: "schema children NULL", shape: []int64{2, 3}, spoil: setSchemaChildren(0, 1, true),
		err: arrowx.ErrMalformed, says: []string{`ArrowSchema (format "+w:3") children[0] is NULL`}},
	{name: "child format unknown", shape: []int64{2, 3}, spoil: setFormat(1, "q"), err: adapters.ErrUnsupported,
		says: []string{`ArrowSchema (child at depth 1) format "q"`}},
	{name: "schema a number, array a list", shape: []int64{2, 3},
		spoil: func(a, s unsafe.Pointer) { setFormat(0, "f")(a, s); setSchemaChildren(0, 0, false)(a, s) },
		err:   arrowx.ErrMalformed, says: []string{"ArrowArray n_buffers is 1, a float32 array has 2"}},
	{name: "dictionary-encoded", spoil: func(a, s unsafe.Pointer) { ctest.AttachDictionaries(a, s, 0) },
		err: adapters.ErrUnsupported, says: []string{`ArrowSchema (format "f") is dictionary-encoded`}},
	{name: "a loop", shape: []int64{2, 3}, spoil: func(a, s unsafe.Pointer) { ctest.Cycle(a, s, 0) },
		err: adapters.ErrUnsupported, says: []string{"more than 63 nested FixedSizeLists"}},

	// released structs: nothing of them is read or called
	{name: "array released", spoil: func(a, _ unsafe.Pointer) { ctest.ReleaseArrayAt(a, 0, false) }, err: cdatax.ErrReleased,
		says: []string{"ArrowArray has a NULL release"}},
	{name: "schema released", spoil: func(_, s unsafe.Pointer) { ctest.ReleaseSchemaAt(s, 0, false) }, err: cdatax.ErrReleased,
		says: []string{"ArrowSchema has a NULL release"}},
	{name: "array released, fields intact", spoil: func(a, _ unsafe.Pointer) { ctest.ReleaseArrayAt(a, 0, true) },
		err: cdatax.ErrReleased, says: []string{"ArrowArray has a NULL release"}},
	{name: "schema released, fields intact", shape: []int64{2, 3},
		spoil: func(_, s unsafe.Pointer) { ctest.ReleaseSchemaAt(s, 0, true) },
		err:   cdatax.ErrReleased, says: []string{"ArrowSchema has a NULL release"}},
	{name: "child array released, fields intact", shape: []int64{2, 3},
		spoil: func(a, _ unsafe.Pointer) { ctest.ReleaseArrayAt(a, 1, true) },
		err:   cdatax.ErrReleased, says: []string{"ArrowArray (child at depth 1) has a NULL release"}},
	{name: "both released", spoil: func(a, s unsafe.Pointer) { ctest.ReleaseArrayAt(a, 0, false); ctest.ReleaseSchemaAt(s, 0, false) },
		err: cdatax.ErrReleased, says: []string{"has a NULL release"}},
	{name: "child array released", shape: []int64{2, 3}, spoil: func(a, _ unsafe.Pointer) { ctest.ReleaseArrayAt(a, 1, false) },
		err: cdatax.ErrReleased, says: []string{"ArrowArray (child at depth 1) has a NULL release"}},
	{name: "child schema released", shape: []int64{2, 3}, spoil: func(_, s unsafe.Pointer) { ctest.ReleaseSchemaAt(s, 1, false) },
		err: cdatax.ErrReleased, says: []string{"ArrowSchema (child at depth 1) has a NULL release"}},

	// well-formed structs that arrowx refuses after arrow-go took them
	{name: "a list longer than its child", shape: []int64{2, 3}, spoil: setFormat(0, "+w:4"), err: arrowx.ErrMalformed,
		says: []string{"FixedSizeList<4>", "need 8 child elements, the child has 6"}},
	{name: "too many dimensions", shape: ones(core.MaxNdim + 1), err: adapters.ErrUnsupported,
		says: []string{"more than 63 nested FixedSizeLists"}},
}

func ones(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// TestImportHostile hands ImportArray arrays and schemas a C producer spoiled, and checks that
// each is refused with an error that names what is wrong, and that every struct the producer
// made (array and schema, top-level and children) has been released exactly once when
// ImportArray returns: by its producer's release, the top-level ones called by ImportArray
// unless they were released already, the children by their parents, never by ImportArray.
func TestImportHostile(t *testing.T) {
	for _, c := range hostiles {
		t.Run(c.name, func(t *testing.T) {
			ctest.Reset()
			shape := c.shape
			if shape == nil {
				shape = []int64{6}
			}
			arr, sc, _ := ctest.Produce(0, c.nulls, shape...)
			defer ctest.Free(arr, sc)
			if c.spoil != nil {
				c.spoil(arr, sc)
			}
			orphans := ctest.Orphans()

			ten, err := cdatax.ImportArray((*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(sc))
			require.Error(t, err)
			assert.Nil(t, ten)
			assert.ErrorIs(t, err, c.err)
			for _, s := range c.says {
				assert.Contains(t, err.Error(), s)
			}
			assert.True(t, ctest.Released(arr), "the array is released (or moved)")
			assert.True(t, ctest.SchemaReleased(sc), "the schema is released")
			releases := ctest.Releases()
			require.Len(t, releases, 2*len(shape), "an array and a schema per level")
			for i, n := range releases {
				assert.EqualValues(t, 1, n, "struct %d of %d released %d times", i, len(releases), n)
			}
			assert.Equal(t, orphans, ctest.Orphans(), "ImportArray called a child's release")
		})
	}
}

// TestImportReleasesOnlyTheTop: a successful import of a nested array calls only the top-level
// release callbacks, as the C Data Interface requires; each child is released once, by its
// parent.
func TestImportReleasesOnlyTheTop(t *testing.T) {
	ctest.Reset()
	arr, sc, first := ctest.Produce(2, false, 2, 3, 4)
	defer ctest.Free(arr, sc)
	ten, err := cdatax.ImportArray((*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(sc))
	require.NoError(t, err)
	assert.Equal(t, first, ten.Data())
	assert.Equal(t, []int64{2, 3, 4}, ten.Shape())
	// made in the order array, schema, level by level
	assert.Equal(t, []int64{0, 1, 0, 1, 0, 1}, ctest.Releases(), "the schemas released once, the arrays held")
	ten.Release()
	leakcheck.Settle()
	assert.Equal(t, []int64{1, 1, 1, 1, 1, 1}, ctest.Releases())
	assert.Zero(t, ctest.Orphans(), "ImportArray called a child's release")
}

// TestImportNilWithReleased: a nil array with a released schema (and the other way) is refused
// without calling the released struct's NULL release.
func TestImportNilWithReleased(t *testing.T) {
	ctest.Reset()
	arr, sc, _ := ctest.Produce(0, false, 4)
	defer ctest.Free(arr, sc)
	ctest.ReleaseSchemaAt(sc, 0, false)
	_, err := cdatax.ImportArray(nil, (*cdata.CArrowSchema)(sc))
	require.ErrorIs(t, err, core.ErrNil)
	_, err = cdatax.ImportArray((*cdata.CArrowArray)(arr), nil)
	require.ErrorIs(t, err, core.ErrNil)
	assert.Equal(t, []int64{1, 1}, ctest.Releases())
}

// TestSloppyRelease: a producer whose release callbacks do not set release to NULL (which makes
// arrow-go abort the process) is released once, array and schema, on success and on refusal,
// and the process goes on.
func TestSloppyRelease(t *testing.T) {
	leakcheck.Check(t)
	arrays, schemas := ctest.ArrayReleases(), ctest.SchemaReleases()
	a, s, _ := ctest.Produce(0, false, 2, 3)
	defer ctest.Free(a, s)
	ctest.Sloppy(a, s)
	x, err := cdatax.ImportArray((*cdata.CArrowArray)(a), (*cdata.CArrowSchema)(s))
	require.NoError(t, err)
	assert.Equal(t, schemas+1, ctest.SchemaReleases(), "the schema was released")
	assert.True(t, ctest.SchemaReleased(s), "and marked released")
	vals, err := core.ReadOnlyElements[float32](x)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0.5, 1, 1.5, 2, 2.5}, vals)
	x.Release()
	require.True(t, leakcheck.Until(func() bool { return ctest.ArrayReleases() == arrays+1 }),
		"the producer's array release ran")

	// refused after the checks passed (nulls): released before the error
	a2, s2, _ := ctest.Produce(0, true, 6)
	defer ctest.Free(a2, s2)
	ctest.Sloppy(a2, s2)
	_, err = cdatax.ImportArray((*cdata.CArrowArray)(a2), (*cdata.CArrowSchema)(s2))
	require.ErrorIs(t, err, arrowx.ErrNulls)
	require.True(t, leakcheck.Until(func() bool { return ctest.ArrayReleases() == arrays+2 }))
	assert.Equal(t, schemas+2, ctest.SchemaReleases())

	// refused by the checks (a bad length): released at once
	a3, s3, _ := ctest.Produce(0, false, 6)
	defer ctest.Free(a3, s3)
	ctest.Sloppy(a3, s3)
	ctest.SetArray(a3, 0, ctest.Length, -1)
	_, err = cdatax.ImportArray((*cdata.CArrowArray)(a3), (*cdata.CArrowSchema)(s3))
	require.ErrorIs(t, err, arrowx.ErrMalformed)
	assert.Equal(t, arrays+3, ctest.ArrayReleases())
	assert.True(t, ctest.Released(a3))
}
