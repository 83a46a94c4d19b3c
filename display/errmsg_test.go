package display_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/display"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// TestErrorMessages provokes Image's refusals and holds each message to the module's rule:
// what was wrong first, each package prefix once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	sentinels := []error{display.ErrNotImage, core.ErrNotHost, core.ErrReleased, core.ErrInvalid}
	buf := make([]float32, 4)
	cuda, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2, 2}}, nil)
	require.NoError(t, err)
	released := core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	released.Release()
	wide, err := core.MustFromSlice([]uint8{1}, 1, 1).BroadcastTo(1, 1<<26+1)
	require.NoError(t, err)
	f8 := core.MustNew(core.DLDataType{Code: core.CodeFloat8E5M2, Bits: 8, Lanes: 1}, 2, 2)
	for _, c := range []struct {
		name string
		x    *core.Tensor
		want error
	}{
		{"1-D", core.MustFromSlice([]float32{1, 2}), display.ErrNotImage},
		{"4-D", core.MustNew(core.Float32, 1, 1, 1, 1), display.ErrNotImage},
		{"5 channels", core.MustNew(core.Uint8, 2, 2, 5), display.ErrNotImage},
		{"int16 color", core.MustNew(core.Int16, 2, 2, 3), display.ErrNotImage},
		{"complex", core.MustNew(core.Complex64, 2, 2), display.ErrNotImage},
		{"empty", core.MustNew(core.Float32, 0, 2), display.ErrNotImage},
		{"too many pixels", wide, display.ErrNotImage},
		{"float8", f8, display.ErrNotImage},
		{"device", cuda, core.ErrNotHost},
		{"released", released, core.ErrReleased},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := display.Image(c.x)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
			assert.NoError(t, errs.Check(err.Error(), sentinels...))
			assert.Regexp(t, `^display: `, err.Error(), "names its package first")
		})
	}
}
