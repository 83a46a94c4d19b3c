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
// chunk, for a C-contiguous tensor of a multiple of 8 bytes per chunk.
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
	require.NoError(t, sendTensor(send, nil, info, x, 1024, mem))
	require.Len(t, bodies, 4)
	for i, b := range bodies {
		assert.Equal(t, base+uintptr(i*1024), b, "body %d is the tensor's memory", i)
	}
	assert.Equal(t, []int{1024, 1024, 1024, 928}, lens)

	// a chunk of 12 bytes needs padding: assembled in scratch memory, not the tensor's
	y := core.MustNew(core.Float32, 3)
	bodies = nil
	require.NoError(t, sendTensor(send, nil, Info{DType: y.DType(), Shape: y.Shape()}, y, 1024, mem))
	require.Len(t, bodies, 1)
	assert.NotEqual(t, uintptr(y.Data()), bodies[0])
}
