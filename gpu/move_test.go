package gpu_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu"
)

// ToHost decides to copy, then finds the tensor released: the caller's ReportCopy flag is left
// as it was, whatever was in it. (A released tensor fails the same way with or without a device.)
func TestToHostFailedCopyLeavesReport(t *testing.T) {
	host := core.MustFromSlice([]float32{1, 2}, 2)
	host.Release()
	buf := make([]float32, 2)
	dev, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: gpu.Device(0), DType: core.Float32, Shape: []int64{2}}, buf)
	require.NoError(t, err)
	dev.Release()
	for _, c := range []struct {
		name   string
		in     *core.Tensor
		policy adapters.Option
	}{
		{"host tensor", host, nil},
		{"host tensor under AlwaysCopy", host, adapters.AlwaysCopy()},
		{"device tensor", dev, nil},
		{"device tensor under AlwaysCopy", dev, adapters.AlwaysCopy()},
	} {
		for _, sentinel := range []bool{false, true} {
			copied := sentinel
			_, err := gpu.ToHost(c.in, c.policy, adapters.ReportCopy(&copied))
			require.ErrorIs(t, err, core.ErrReleased, c.name)
			assert.Equal(t, sentinel, copied, "%s: ReportCopy was set by a conversion that failed", c.name)
		}
	}
}
