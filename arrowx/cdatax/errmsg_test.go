package cdatax_test

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/arrowx/cdatax/internal/ctest"
	"github.com/dlpack-go/dlpack/core"
)

// TestErrorMessages provokes cdatax's refusals, of exports and of C structs a producer spoiled,
// and holds each message to the module's rule: what was wrong first, "cdatax:" once, errors.Is
// still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	spoiled := func(shape []int64, nulls bool, spoil func(arr, schema unsafe.Pointer)) func() error {
		return func() error {
			arr, sc, _ := ctest.Produce(0, nulls, shape...)
			defer ctest.Free(arr, sc)
			if spoil != nil {
				spoil(arr, sc)
			}
			ten, err := cdatax.ImportArray((*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(sc))
			if ten != nil {
				ten.Release()
			}
			return err
		}
	}
	export := func(fixed bool, x *core.Tensor) func() error {
		return func() error {
			arr, sc := ctest.Alloc()
			defer ctest.Free(arr, sc)
			var err error
			if fixed {
				err = cdatax.ExportFixedShapeTensor(x, (*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(sc))
			} else {
				err = cdatax.ExportArray(x, (*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(sc))
			}
			return err
		}
	}
	vec := core.MustFromSlice([]float32{1, 2})
	one := []int64{6}
	matrix := []int64{2, 3}
	cases := []errstest.Case{
		{Name: "ExportArray nil structs", Want: core.ErrNil, Err: func() error { return cdatax.ExportArray(vec, nil, nil) }},
		{Name: "ExportFixedShapeTensor nil structs", Want: core.ErrNil, Err: func() error {
			return cdatax.ExportFixedShapeTensor(vec, nil, nil)
		}},
		{Name: "ImportArray nil structs", Want: core.ErrNil, Err: func() error { _, err := cdatax.ImportArray(nil, nil); return err }},
		{Name: "ExportArray complex", Want: adapters.ErrUnsupported, Err: export(false, core.MustFromSlice([]complex64{1}))},
		{Name: "ExportArray nil tensor", Want: core.ErrNil, Err: export(false, nil)},
		{Name: "ExportFixedShapeTensor 0-d", Want: adapters.ErrUnsupported, Err: export(true, core.Scalar(float32(1)))},
		{Name: "length -1", Want: arrowx.ErrMalformed, Err: spoiled(one, false, setArray(0, ctest.Length, -1))},
		{Name: "null_count > length", Want: arrowx.ErrMalformed, Err: spoiled(one, false, setArray(0, ctest.NullCount, 7))},
		{Name: "n_buffers 3", Want: arrowx.ErrMalformed, Err: spoiled(one, false, setArray(0, ctest.NBuffers, 3))},
		{Name: "values NULL", Want: arrowx.ErrMalformed, Err: spoiled(one, false, setArray(0, ctest.Values, 0))},
		{Name: "child length -1", Want: arrowx.ErrMalformed, Err: spoiled(matrix, false, setArray(1, ctest.Length, -1))},
		{Name: "format NULL", Want: arrowx.ErrMalformed, Err: spoiled(one, false, func(_, s unsafe.Pointer) {
			ctest.SetSchemaFormat(s, 0, "", true)
		})},
		{Name: "format unknown", Want: adapters.ErrUnsupported, Err: spoiled(one, false, setFormat(0, "q"))},
		{Name: "FixedSizeList size 0", Want: adapters.ErrUnsupported, Err: spoiled(matrix, false, setFormat(0, "+w:0"))},
		{Name: "schema children NULL", Want: arrowx.ErrMalformed, Err: spoiled(matrix, false, setSchemaChildren(0, 1, true))},
		{Name: "array released", Want: cdatax.ErrReleased, Err: spoiled(one, false, func(a, _ unsafe.Pointer) {
			ctest.ReleaseArrayAt(a, 0, true)
		})},
		{Name: "nulls", Want: arrowx.ErrNulls, Err: spoiled(one, true, nil)},
		{Name: "ExportArray into a live export", Want: cdatax.ErrLive, Err: func() error {
			arr, sc, _ := ctest.Produce(0, false, 2)
			defer ctest.Free(arr, sc)
			defer ctest.Sum(arr, sc) // releases the producer's structs
			return cdatax.ExportArray(vec, (*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(sc))
		}},
	}
	errstest.Run(t, `^cdatax: `, cases, cdatax.ErrReleased, cdatax.ErrLive, core.ErrNil, arrowx.ErrMalformed, arrowx.ErrNulls,
		arrowx.ErrMismatch)
}
