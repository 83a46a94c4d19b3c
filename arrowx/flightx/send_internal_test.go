package flightx

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// TestSendIsZeroCopy: the body of every data message is the tensor's own memory, chunk by
// chunk, for a C-contiguous tensor of a multiple of 8 bytes per chunk: in the tensor column,
// batches of whole rows (2 rows of 100 float32 in 1024 bytes), in the flat one of the earlier
// format, runs of elements.
func TestSendIsZeroCopy(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	x := core.MustNew(core.Float32, 10, 100) // 4000 bytes, chunks of 1024
	base := uintptr(x.Data())
	var bodies []uintptr
	var lens []int
	send := func(fd *flight.FlightData) error {
		if len(fd.DataBody) > 0 {
			bodies = append(bodies, uintptr(unsafe.Pointer(&fd.DataBody[0])))
			lens = append(lens, len(fd.DataBody))
		}
		return nil
	}
	info := Info{DType: x.DType(), Shape: x.Shape()}
	for _, tc := range []struct {
		flat bool
		lens []int
	}{
		{false, []int{800, 800, 800, 800, 800}},
		{true, []int{1024, 1024, 1024, 928}},
	} {
		bodies, lens = nil, nil
		require.NoError(t, sendTensorAs(send, nil, info, x, 1024, mem, tc.flat))
		require.Equal(t, tc.lens, lens, "flat %v", tc.flat)
		at := base
		for i, b := range bodies {
			assert.Equal(t, at, b, "flat %v: body %d is the tensor's memory", tc.flat, i)
			at += uintptr(lens[i])
		}
	}

	// a chunk of 12 bytes needs padding: assembled in scratch memory, not the tensor's
	y := core.MustNew(core.Float32, 3)
	bodies = nil
	require.NoError(t, sendTensor(send, nil, Info{DType: y.DType(), Shape: y.Shape()}, y, 1024, mem))
	require.Len(t, bodies, 1)
	assert.NotEqual(t, uintptr(y.Data()), bodies[0])
}
