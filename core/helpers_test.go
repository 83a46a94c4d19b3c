package core_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// elems reads every element of t in C order through At, whatever its strides.
func elems[T core.Element](tb testing.TB, t *core.Tensor) []T {
	tb.Helper()
	shape := t.Shape()
	n := t.Len()
	out := make([]T, 0, n)
	idx := make([]int64, len(shape))
	for k := int64(0); k < n; k++ {
		v, err := core.At[T](t, idx...)
		require.NoError(tb, err)
		out = append(out, v)
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

func arange(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i)
	}
	return s
}

// fakeAddr turns an address that is not Go memory (a device address, an opaque handle, a
// descriptor that is never dereferenced) into an unsafe.Pointer.
func fakeAddr(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

// reuseFreedMemory runs collections and, after each, allocates and overwrites small tensors and
// byte slices, so that memory freed by a collection is handed out again and overwritten: a
// tensor whose memory was wrongly let go then reads -1s or zeros instead of its elements.
func reuseFreedMemory() {
	for range 5 {
		runtime.GC()
		for range 1000 {
			y := core.MustNew(core.Float32, 64)
			e, _ := core.Elements[float32](y)
			for i := range e {
				e[i] = -1
			}
			_ = make([]byte, 200)
		}
	}
}

// withAllocation sets memory's allocation for the test and puts the previous one back after it.
func withAllocation(t *testing.T, a memory.Allocation) {
	t.Helper()
	prev := memory.SetAllocation(a)
	t.Cleanup(func() { memory.SetAllocation(prev) })
}
