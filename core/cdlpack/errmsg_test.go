//go:build cgo

package cdlpack_test

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/core/cdlpack/internal/ctest"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// TestErrorMessages provokes the refusals of cdlpack's exports and imports and holds each
// message to the module's rule (errs.Check): what was wrong first, each package prefix once,
// and errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	sentinels := []error{
		core.ErrInvalid, core.ErrNdim, core.ErrShape, core.ErrStrides, core.ErrOverflow, core.ErrNullData,
		core.ErrDType, core.ErrDevice, core.ErrVersion, core.ErrBounds, core.ErrNil, core.ErrReleased,
		core.ErrImported, core.ErrSubByte,
	}
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
	cases := []struct {
		name string
		want error
		err  func() error
	}{
		{"export nil", core.ErrNil, func() error { _, err := cdlpack.ExportVersioned(nil); return err }},
		{"export released", core.ErrReleased, func() error { _, err := cdlpack.ExportVersioned(released); return err }},
		{"export legacy released", core.ErrReleased, func() error { _, err := cdlpack.ExportLegacy(released); return err }},
		{"import nil", core.ErrNil, func() error { _, err := cdlpack.ImportVersioned(nil); return err }},
		{"import legacy nil", core.ErrNil, func() error { _, err := cdlpack.ImportLegacy(nil); return err }},
		{"ndim", core.ErrNdim, imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Ndim = 65 })},
		{"negative dim", core.ErrShape, imp(func(m *core.DLManagedTensorVersioned) { *shapeAt(m, 1) = -3 })},
		{"null data", core.ErrNullData, imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Data = nil })},
		{"dtype", core.ErrDType, imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Dtype.Code = 99 })},
		{"device", core.ErrDevice, imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Device.DeviceType = 5 })},
		{"version", core.ErrVersion, imp(func(m *core.DLManagedTensorVersioned) { m.Version.Major = 2 })},
		{"null shape", core.ErrShape, imp(func(m *core.DLManagedTensorVersioned) { m.DLTensor.Shape = nil })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, checkMessage(err.Error(), sentinels...))
			assert.Regexp(t, `^cdlpack: `, err.Error())
		})
	}
}

// checkMessage is errs.Check, and also refuses a sentinel's generic text that comes before
// the cause further into the message ("cdlpack: import: core: invalid tensor: bad ndim: ...").
func checkMessage(msg string, sentinels ...error) error {
	if err := errs.Check(msg, sentinels...); err != nil {
		return err
	}
	for _, s := range sentinels {
		if i := strings.Index(msg, s.Error()+": "); i > 0 {
			return fmt.Errorf("%q has the generic %q before its cause", msg, s.Error())
		}
	}
	return nil
}
