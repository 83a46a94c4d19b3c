package pyexchange

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

func TestSyncForConsumer(t *testing.T) {
	on := func(dev core.DeviceType) *core.Tensor {
		mem := make([]float32, 4)
		x, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.DLDevice{DeviceType: dev},
			DType: core.Float32, Shape: []int64{4}}, mem)
		require.NoError(t, err)
		return x
	}
	var got []int64
	refuse := errors.New("refused")
	sync := func(_ *core.Tensor, s int64) error {
		if s == 99 {
			return refuse
		}
		got = append(got, s)
		return nil
	}
	cpu, ext, rocm := on(core.CPU), on(core.ExtDev), on(core.ROCM)

	require.NoError(t, syncForConsumer(cpu, 0, false))
	assert.ErrorIs(t, syncForConsumer(cpu, 1, true), ErrStream)
	assert.ErrorIs(t, syncForConsumer(cpu, -1, true), ErrStream)

	// no StreamSync for the device: None and -1 only, without synchronization
	require.NoError(t, syncForConsumer(ext, 0, false))
	require.NoError(t, syncForConsumer(ext, -1, true))
	err := syncForConsumer(ext, 5, true)
	assert.ErrorIs(t, err, ErrStream)
	assert.ErrorContains(t, err, "SetStreamSync")

	SetStreamSync(core.ExtDev, sync)
	SetStreamSync(core.ROCM, sync)
	defer SetStreamSync(core.ExtDev, nil)
	defer SetStreamSync(core.ROCM, nil)
	for _, c := range []struct {
		x      *core.Tensor
		stream int64
		given  bool
	}{{ext, 0, false}, {ext, 7, true}, {ext, -1, true}, {rocm, 0, false}, {rocm, 3, true}} {
		require.NoError(t, syncForConsumer(c.x, c.stream, c.given))
	}
	assert.Equal(t, []int64{1, 7, -1, 0, 3}, got, "None is 1 on CUDA-like devices, 0 on ROCm")
	assert.ErrorIs(t, syncForConsumer(ext, 99, true), refuse)

	SetStreamSync(core.ExtDev, nil)
	assert.ErrorIs(t, syncForConsumer(ext, 5, true), ErrStream, "removed")
}
