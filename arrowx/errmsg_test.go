package arrowx_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
)

// TestErrorMessages provokes arrowx's refusals and holds each message to the module's rule:
// what was wrong first, "arrowx:" once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	withNulls := func() arrow.Array {
		b := array.NewInt32Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues([]int32{1, 2, 3}, []bool{true, false, true})
		return b.NewArray()
	}
	short := func() arrow.ArrayData { // 4 float64s over 8 bytes
		return array.NewData(arrow.PrimitiveTypes.Float64, 4, []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 8))}, nil, 0, 0)
	}
	released := core.MustFromSlice([]float32{1, 2})
	released.Release()
	rev, _ := core.MustFromSlice([]float32{1, 2, 3}).Reverse(0)
	matrix := core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	cases := []errstest.Case{
		{Name: "FromArray nil", Want: core.ErrNil, Err: func() error { _, err := arrowx.FromArray(nil); return err }},
		{Name: "FromArrayData nil", Want: core.ErrNil, Err: func() error { _, err := arrowx.FromArrayData(nil); return err }},
		{Name: "FromArray nulls", Want: arrowx.ErrNulls, Err: func() error { _, err := arrowx.FromArray(withNulls()); return err }},
		{Name: "FromArray fill cast", Want: adapters.ErrCast, Err: func() error {
			_, err := arrowx.FromArray(withNulls(), arrowx.FillNulls(1.5))
			return err
		}},
		{Name: "FromArrayData short buffer", Want: arrowx.ErrMalformed, Err: func() error { _, err := arrowx.FromArrayData(short()); return err }},
		{Name: "FromArray zero-copy bool", Want: adapters.ErrCopyRequired, Err: func() error {
			b := array.NewBooleanBuilder(memory.DefaultAllocator)
			defer b.Release()
			b.AppendValues([]bool{true}, nil)
			_, err := arrowx.FromArray(b.NewArray(), adapters.ZeroCopyOnly())
			return err
		}},
		{Name: "ToArray nil", Want: core.ErrNil, Err: func() error { _, err := arrowx.ToArray(nil); return err }},
		{Name: "ToArray 0-d", Want: adapters.ErrUnsupported, Err: func() error { _, err := arrowx.ToArray(core.Scalar(float32(1))); return err }},
		{Name: "ToArray complex", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := arrowx.ToArray(core.MustFromSlice([]complex64{1}))
			return err
		}},
		{Name: "ToArray released", Want: core.ErrReleased, Err: func() error { _, err := arrowx.ToArray(released); return err }},
		{Name: "ToArray zero-copy reversed", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := arrowx.ToArray(rev, adapters.ZeroCopyOnly())
			return err
		}},
		{Name: "ToTensor nil", Want: core.ErrNil, Err: func() error { _, err := arrowx.ToTensor(nil); return err }},
		{Name: "ToTensor float16", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := arrowx.ToTensor(core.MustNew(core.Float16, 2))
			return err
		}},
		{Name: "FromRecord nil", Want: core.ErrNil, Err: func() error { _, err := arrowx.FromRecord(nil); return err }},
		{Name: "ToRecord 1-D", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := arrowx.ToRecord(core.MustFromSlice([]float32{1}), nil)
			return err
		}},
		{Name: "ToRecord names", Want: arrowx.ErrMismatch, Err: func() error { _, err := arrowx.ToRecord(matrix, []string{"a"}); return err }},
		{Name: "FromDType nil", Want: adapters.ErrUnsupported, Err: func() error { _, err := arrowx.FromDType(nil); return err }},
		{Name: "FromDType string", Want: adapters.ErrUnsupported, Err: func() error { _, err := arrowx.FromDType(arrow.BinaryTypes.String); return err }},
		{Name: "ToDType bfloat16", Want: adapters.ErrUnsupported, Err: func() error { _, err := arrowx.ToDType(core.BFloat16); return err }},
		{Name: "fixed_shape_tensor metadata", Want: arrowx.ErrMalformed, Err: func() error {
			_, err := (&arrowx.FixedShapeTensorType{}).Deserialize(arrow.FixedSizeListOf(6, arrow.PrimitiveTypes.Int8), `{"shape":[2,4]}`)
			return err
		}},
		{Name: "ToFixedShapeTensor 0-d", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := arrowx.ToFixedShapeTensor(core.Scalar(float32(1)))
			return err
		}},
		{Name: "ToFixedShapeTensor zero dimension", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := arrowx.ToFixedShapeTensor(core.MustNew(core.Float32, 3, 0))
			return err
		}},
	}
	errstest.Run(t, `^arrowx: `, cases, core.ErrNil, arrowx.ErrNulls, arrowx.ErrMalformed, arrowx.ErrMismatch)
}
