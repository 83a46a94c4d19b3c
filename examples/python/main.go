// Command python is a Go library for Python: built with -buildmode=c-shared, it hands its
// tensors to NumPy and PyTorch and works on theirs, without copying, through DLPack capsules.
// roundtrip.py loads it with the pure-Python module numpyx/python/dlpackgo.py. From the
// repository root:
//
//	go build -buildmode=c-shared -o /tmp/libexample.so ./examples/python
//	PYTHONPATH=numpyx/python python3 examples/python/roundtrip.py /tmp/libexample.so
//
// Importing package pyexchange gives the library the exchange functions the Python module calls
// (dlpackgo_export, dlpackgo_import, ...); the library adds its own, which take and return
// tensor handles (pyexchange.Handle).
package main

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx/pyexchange"
)

func main() {
	fmt.Println("build me with -buildmode=c-shared and load me from Python: see roundtrip.py")
}

// example_matrix returns the handle of a new rows×cols float64 matrix holding 0, 1, 2, ... in
// row-major order, or 0 for a bad shape.
//
//export example_matrix
func example_matrix(rows, cols C.int64_t) C.uintptr_t {
	if rows < 0 || cols < 0 || rows*cols > 1<<24 {
		return 0
	}
	vals := make([]float64, rows*cols)
	for i := range vals {
		vals[i] = float64(i)
	}
	t, err := core.FromSlice(vals, int64(rows), int64(cols))
	if err != nil {
		return 0
	}
	h, err := pyexchange.NewHandle(t)
	if err != nil {
		return 0
	}
	return C.uintptr_t(h)
}

// example_scale multiplies every element of a float64 or float32 tensor by factor, in place,
// whatever its strides. It returns 0, or -1 for an unknown handle, another dtype or a read-only
// tensor.
//
//export example_scale
func example_scale(h C.uintptr_t, factor C.double) C.int {
	t, err := pyexchange.Lookup(pyexchange.Handle(h))
	if err != nil {
		return -1
	}
	switch t.DType() {
	case core.Float64:
		err = scale(t, float64(factor))
	case core.Float32:
		err = scale(t, float32(factor))
	default:
		return -1
	}
	if err != nil {
		return -1
	}
	return 0
}

// example_sum stores the sum of a float64 or float32 tensor's elements in *out; 0, or -1.
//
//export example_sum
func example_sum(h C.uintptr_t, out *C.double) C.int {
	t, err := pyexchange.Lookup(pyexchange.Handle(h))
	if err != nil || out == nil {
		return -1
	}
	var s float64
	switch t.DType() {
	case core.Float64:
		err = each(t, false, func(p *float64) { s += *p })
	case core.Float32:
		err = each(t, false, func(p *float32) { s += float64(*p) })
	default:
		return -1
	}
	if err != nil {
		return -1
	}
	*out = C.double(s)
	return 0
}

func scale[T float32 | float64](t *core.Tensor, f T) error {
	return each(t, true, func(p *T) { *p *= f })
}

// each calls f with the address of every element of t, in C order, whatever the strides.
func each[T float32 | float64](t *core.Tensor, write bool, f func(*T)) error {
	span, first, err := core.ReadOnlySpan[T](t)
	if write {
		span, first, err = core.Span[T](t)
	}
	if err != nil {
		return err
	}
	shape, strides := t.Shape(), t.Strides()
	idx := make([]int64, len(shape))
	for range t.Len() {
		off := first
		for i, x := range idx {
			off += x * strides[i]
		}
		f(&span[off])
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return nil
}
