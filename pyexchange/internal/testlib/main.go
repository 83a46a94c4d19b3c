// Command testlib is the c-shared library the Python tests of package pyexchange load: the
// exchange functions of pyexchange plus fixtures that make tensors (every dtype, strided views,
// foreign C memory) and read and write their elements from Go, so that the tests can prove
// zero-copy sharing in both directions. Build it with
//
//	go build -buildmode=c-shared -o libdlpackgo_test.so ./pyexchange/internal/testlib
package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/pyexchange"
)

func main() {}

func lookup(h C.uintptr_t) *core.Tensor {
	t, err := pyexchange.Lookup(pyexchange.Handle(h))
	if err != nil {
		return nil
	}
	return t
}

// handleOf registers t (a fresh tensor or view the registry may own) and returns its handle, or
// 0 on error.
func handleOf(t *core.Tensor, err error) C.uintptr_t {
	if err != nil {
		return 0
	}
	h, err := pyexchange.NewHandle(t)
	t.Release()
	if err != nil {
		return 0
	}
	return C.uintptr_t(h)
}

func int64s(p *C.int64_t, n C.int) []int64 {
	if n <= 0 || p == nil {
		return []int64{}
	}
	return append([]int64{}, unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n))...)
}

// dlpackgo_test_arange makes a C-order tensor of the given dtype and shape holding 0, 1, 2, ...
// (converted to the dtype: bool is "not zero"). It returns 0 for a bad dtype or shape.
//
//export dlpackgo_test_arange
func dlpackgo_test_arange(code, bits, lanes C.int, ndim C.int, shape *C.int64_t) C.uintptr_t {
	if ndim < 0 || ndim > core.MaxNdim {
		return 0
	}
	dims := int64s(shape, ndim)
	n := int64(1)
	for _, d := range dims {
		if d < 0 || d > 1<<24 {
			return 0
		}
		n *= d
	}
	if n > 1<<24 {
		return 0
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = float64(i)
	}
	src, err := core.FromSliceStrided(vals, 0, dims, nil)
	if err != nil {
		return 0
	}
	dt := core.DLDataType{Code: core.DataTypeCode(code), Bits: uint8(bits), Lanes: uint16(lanes)}
	if err := dt.Validate(); err != nil {
		return 0
	}
	return handleOf(memory.Cast(src, dt))
}

// dlpackgo_test_transpose returns a handle to the transpose (all axes reversed) of h's tensor.
//
//export dlpackgo_test_transpose
func dlpackgo_test_transpose(h C.uintptr_t) C.uintptr_t {
	if t := lookup(h); t != nil {
		return handleOf(t.Transpose())
	}
	return 0
}

// dlpackgo_test_reverse returns a handle to h's tensor reversed along axis (negative strides).
//
//export dlpackgo_test_reverse
func dlpackgo_test_reverse(h C.uintptr_t, axis C.int) C.uintptr_t {
	if t := lookup(h); t != nil {
		return handleOf(t.Reverse(int(axis)))
	}
	return 0
}

// dlpackgo_test_slice returns a handle to h's tensor sliced along axis as start:stop:step.
//
//export dlpackgo_test_slice
func dlpackgo_test_slice(h C.uintptr_t, axis C.int, start, stop, step C.int64_t) C.uintptr_t {
	if t := lookup(h); t != nil {
		return handleOf(t.Slice(int(axis), int64(start), int64(stop), int64(step)))
	}
	return 0
}

// dlpackgo_test_readonly returns a handle to a read-only view of h's tensor.
//
//export dlpackgo_test_readonly
func dlpackgo_test_readonly(h C.uintptr_t) C.uintptr_t {
	if t := lookup(h); t != nil {
		return handleOf(t.AsReadOnly())
	}
	return 0
}

// dlpackgo_test_broadcast returns a handle to h's tensor broadcast to shape (zero strides).
//
//export dlpackgo_test_broadcast
func dlpackgo_test_broadcast(h C.uintptr_t, ndim C.int, shape *C.int64_t) C.uintptr_t {
	if t := lookup(h); t != nil && ndim >= 0 && ndim <= core.MaxNdim {
		return handleOf(t.BroadcastTo(int64s(shape, ndim)...))
	}
	return 0
}

// dlpackgo_test_drop_view makes a view of h's tensor and drops it without releasing it: the
// view holds the memory until the garbage collector's cleanup lets go, on a Go thread of its
// own. It returns 0, or -1 for an unknown handle.
//
//export dlpackgo_test_drop_view
func dlpackgo_test_drop_view(h C.uintptr_t) C.int {
	t := lookup(h)
	if t == nil {
		return -1
	}
	if _, err := t.View(); err != nil {
		return -1
	}
	return 0
}

var foreignReleased atomic.Int64

// dlpackgo_test_foreign makes a float64 tensor of n elements 0..n-1 over C memory (malloc) that
// Go frees, and counts, when its last holder lets go.
//
//export dlpackgo_test_foreign
func dlpackgo_test_foreign(n C.int64_t) C.uintptr_t {
	if n <= 0 || n > 1<<24 {
		return 0
	}
	p := C.malloc(C.size_t(n) * 8)
	if p == nil {
		return 0
	}
	s := unsafe.Slice((*float64)(p), int(n))
	for i := range s {
		s[i] = float64(i)
	}
	t, err := core.Wrap(core.Desc{Data: p, Device: core.CPUDevice, DType: core.Float64,
		Shape: []int64{int64(n)}}, func() {
		C.free(p)
		foreignReleased.Add(1)
	})
	return handleOf(t, err)
}

// dlpackgo_test_foreign_released returns how many dlpackgo_test_foreign blocks were freed.
//
//export dlpackgo_test_foreign_released
func dlpackgo_test_foreign_released() C.int64_t { return C.int64_t(foreignReleased.Load()) }

// dlpackgo_test_get stores the element at idx (ndim indices) as a float64 in *out (the real part
// of a complex); it returns 0, or -1 on error.
//
//export dlpackgo_test_get
func dlpackgo_test_get(h C.uintptr_t, ndim C.int, idx *C.int64_t, out *C.double) C.int {
	t := lookup(h)
	if t == nil || out == nil {
		return -1
	}
	v, err := get(t, int64s(idx, ndim))
	if err != nil {
		return -1
	}
	*out = C.double(v)
	return 0
}

// dlpackgo_test_set stores v at idx, converted to the dtype; it returns 0, or -1 on error (a
// read-only tensor included).
//
//export dlpackgo_test_set
func dlpackgo_test_set(h C.uintptr_t, ndim C.int, idx *C.int64_t, v C.double) C.int {
	t := lookup(h)
	if t == nil {
		return -1
	}
	if set(t, int64s(idx, ndim), float64(v)) != nil {
		return -1
	}
	return 0
}

// dlpackgo_test_sum stores the sum of the elements (real parts) in *out; 0, or -1 on error.
//
//export dlpackgo_test_sum
func dlpackgo_test_sum(h C.uintptr_t, out *C.double) C.int {
	t := lookup(h)
	if t == nil || out == nil {
		return -1
	}
	c, err := memory.Cast(t, core.Float64)
	if err != nil {
		return -1
	}
	vals, err := core.Elements[float64](c)
	if err != nil {
		return -1
	}
	s := 0.0
	for _, x := range vals {
		s += x
	}
	*out = C.double(s)
	return 0
}

// get reads any dtype as a float64 (the real part), set writes one (by Copy's conversions).
func get(t *core.Tensor, idx []int64) (float64, error) {
	v, err := memory.At(t, idx...)
	return real(v), err
}

func set(t *core.Tensor, idx []int64, v float64) error {
	return memory.SetAt(t, complex(v, 0), idx...)
}
