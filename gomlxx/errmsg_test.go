package gomlxx_test

import (
	"testing"
	"unsafe"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx"
)

// TestErrorMessages provokes gomlxx's refusals and holds each message to the module's rule:
// what was wrong first, "gomlxx:" once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	released := core.MustFromSlice([]float32{1, 2})
	released.Release()
	finalized := tensors.FromFlatDataAndDimensions([]float32{1, 2}, 2)
	finalized.FinalizeAll()
	buf := make([]float32, 2)
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []errstest.Case{
		{Name: "FromTensor nil", Want: core.ErrNil, Err: func() error { _, err := gomlxx.FromTensor(nil); return err }},
		{Name: "FromTensor finalized", Want: core.ErrReleased, Err: func() error { _, err := gomlxx.FromTensor(finalized); return err }},
		{Name: "Take nil", Want: core.ErrNil, Err: func() error { _, err := gomlxx.Take(nil); return err }},
		{Name: "ToTensor nil", Want: core.ErrNil, Err: func() error { _, err := gomlxx.ToTensor(nil); return err }},
		{Name: "ToTensor released", Want: core.ErrReleased, Err: func() error { _, err := gomlxx.ToTensor(released); return err }},
		{Name: "ToTensor device", Want: core.ErrNotHost, Err: func() error { _, err := gomlxx.ToTensor(dev); return err }},
		{Name: "ToTensor bcomplex", Want: adapters.ErrUnsupported, Err: func() error {
			_, err := gomlxx.ToTensor(core.MustNew(core.BComplex32, 2))
			return err
		}},
		{Name: "ToTensor zero-copy", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := gomlxx.ToTensor(core.MustFromSlice([]float32{1, 2}), adapters.ZeroCopyOnly())
			return err
		}},
		{Name: "FromDType invalid", Want: adapters.ErrUnsupported, Err: func() error { _, err := gomlxx.FromDType(dtypes.InvalidDType); return err }},
		{Name: "ToDType bcomplex", Want: adapters.ErrUnsupported, Err: func() error { _, err := gomlxx.ToDType(core.BComplex32); return err }},
	}
	errstest.Run(t, `^gomlxx: `, cases, gomlxx.ErrGoMLX)
}
