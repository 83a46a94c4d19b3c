//go:build cgo

package cdlpack_test

import (
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/core/cdlpack/internal/ctest"
)

// TestErrorMessages provokes the refusals of cdlpack's exports and imports and holds each
// message to the module's rule (errs.Check): what was wrong first, each package prefix once,
// and errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	released := core.MustFromSlice([]float64{1})
	released.Release()
	imp := func(mutate func(m *core.DLManagedTensorVersioned)) func() error {
		return func() error {
			m := ctest.ProduceVersioned(ctest.NewCounter(), 6, 2, 3)
			mutate(m)
			x, err := cdlpack.ImportVersioned(m)
			if err == nil {
				x.Release()
			}
			return err
		}
	}
	shapeAt := func(m *core.DLManagedTensorVersioned, i int) *int64 {
		return (*int64)(unsafe.Add(unsafe.Pointer(m.DLTensor.Shape), 8*i))
	}
	cases := []errstest.Case{
		{Name: "export nil", Want: core.ErrNil, Err: func() error { _, err := cdlpack.ExportVersioned(nil); return err }},
		{Name: "export released", Want: core.ErrReleased, Err: func() error { _, err := cdlpack.ExportVersioned(released); return err }},
		{Name: "export legacy released", Want: core.ErrReleased, Err: func() error { _, err := cdlpack.ExportLegacy(released); return err }},
		{Name: "import nil", Want: core.ErrNil, Err: func() error { _, err := cdlpack.ImportVersioned(nil); return err }},
		{Name: "import legacy nil", Want: core.ErrNil, Err: func() error { _, err := cdlpack.ImportLegacy(nil); return err }},
		{Name: "ndim", Want: core.ErrNdim, Err: imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Ndim = 65 })},
		{Name: "negative dim", Want: core.ErrShape, Err: imp(func(m *core.DLManagedTensorVersioned) { *shapeAt(m, 1) = -3 })},
		{Name: "null data", Want: core.ErrNullData, Err: imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Data = nil })},
		{Name: "dtype", Want: core.ErrDType, Err: imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Dtype.Code = 99 })},
		{Name: "device", Want: core.ErrDevice, Err: imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Device.DeviceType = 5 })},
		{Name: "version", Want: core.ErrVersion, Err: imp(func(m *core.DLManagedTensorVersioned) { m.Version.Major = 2 })},
		{Name: "null shape", Want: core.ErrShape, Err: imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Shape = nil })},
	}
	errstest.Run(t, `^cdlpack: `, cases)
}
