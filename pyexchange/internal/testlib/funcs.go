package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// The registered functions test_functions.py calls (pyexchange.Register).

// errOdd is a sentinel of this library, mapped to ValueError with pyexchange.MapError.
var errOdd = errors.New("testlib: odd")

func init() {
	pyexchange.MapError(errOdd, pyexchange.ValueError)
	for _, r := range []struct {
		name string
		fn   any
		doc  string
	}{
		{"noop", noop, "noop(a)\n\nDoes nothing with a (call overhead)."},
		{"scale", scale, "scale(x, factor)\n\nMultiplies every element of x (float32 or float64) by factor, in place."},
		{"add", add, "add(a, b)\n\nReturns a new float64 tensor a + b (same shapes)."},
		{"total", total, "total(x)\n\nThe sum of x's elements, as a float64."},
		{"first_address", firstAddress, "first_address(x)\n\nThe address of x's first element."},
		{"same", same, "same(x)\n\nReturns x itself: the result shares the argument's memory."},
		{"reversed", reversed, "reversed(x)\n\nReturns x reversed along axis 0 (negative strides)."},
		{"readonly", readonly, "readonly(x)\n\nReturns a read-only view of x."},
		{"echo", echo, "echo(i8, i64, u8, u64, f32, f64, b, s)\n\nReturns its scalar arguments."},
		{"split", split, "split(x)\n\nReturns x's first row, its row count, and its dtype's name."},
		{"fail", fail, "fail(kind)\n\nReturns an error: kind 'value', 'type', 'buffer', 'memory', 'odd' or other."},
		{"crash", crash, "crash(x)\n\nPanics (index out of range) after reading x."},
		{"nil_result", nilResult, "nil_result()\n\nReturns a nil tensor without an error."},
		{"spin", spin, "spin(ms)\n\nKeeps the CPU busy in Go for ms milliseconds."},
		{"keep", keep, "keep(x)\n\nKeeps a view of x beyond the call (released by drop_kept)."},
		{"drop_kept", dropKept, "drop_kept()\n\nReleases the views keep kept; returns how many."},
		{"scale_calls", func() (int64, error) { return scaleCalls.Load(), nil }, "scale_calls()\n\nHow many times scale ran."},
		{"unnamed", func(a *core.Tensor, n int) error { return nil }, "Parameters without names."},
		{"ext_tensor", extTensor, "ext_tensor(n)\n\nA float32 tensor of n elements on the test device (kDLExtDev)."},
		{"vk_tensor", vkTensor, "vk_tensor(n)\n\nA float32 tensor of n elements on a device without a StreamSync (kDLVulkan)."},
		{"counted", counted, "counted(n)\n\nA new float64 tensor 0, 1, ..., n-1 over C memory whose release counted_releases counts."},
		{"counted_releases", func() (int64, error) { return countedReleases.Load(), nil },
			"counted_releases()\n\nHow many tensors of counted have let go of their memory."},
		{"zeros_like", zerosLike, "zeros_like(x)\n\nA new float64 tensor of zeros of x's shape (a small new result, for the benchmarks)."},
		{"size_of", sizeOf, "size_of(x)\n\nx's element count (an int result on the same inputs as zeros_like)."},
		{"matmul", matmul, "matmul(a, b)\n\nA new float64 matrix a @ b of two float64 matrices."},
		{"ext_syncs", func() (int64, int64, error) { return extSyncs.Load(), extLastStream.Load(), nil },
			"ext_syncs()\n\nHow many times the test device's StreamSync ran, and its last stream."},
	} {
		pyexchange.MustRegister(r.name, r.fn, r.doc)
	}
	pyexchange.SetStreamSync(core.ExtDev, func(t *core.Tensor, stream int64) error {
		if stream == 0 {
			return errors.New("testlib: stream 0 refused")
		}
		extLastStream.Store(stream)
		extSyncs.Add(1)
		return nil
	})
}

// The test device: tensors of device type kDLExtDev over Go memory, with a StreamSync that
// records the streams it is asked for (test_functions.py's DeviceStreams).
var extSyncs, extLastStream atomic.Int64

func extTensor(n int64) (*core.Tensor, error) { return cTensor("ext_tensor", core.ExtDev, n) }

// vkTensor is extTensor on a device without a StreamSync: its results are shared by the C fast
// path of function results, as a CUDA tensor is in a library without a StreamSync for CUDA.
func vkTensor(n int64) (*core.Tensor, error) { return cTensor("vk_tensor", core.Vulkan, n) }

// cTensor makes n zeroed float32 of C memory labelled as device dev's, as device memory would
// be: never Go memory behind a device pointer (the export passes device addresses to C as they
// are, unpinned).
func cTensor(name string, dev core.DeviceType, n int64) (*core.Tensor, error) {
	if n < 1 || n > 1<<20 {
		return nil, fmt.Errorf("testlib: %s(%d): want 1 to 2^20 elements", name, n)
	}
	p := C.calloc(C.size_t(n), 4)
	if p == nil {
		return nil, fmt.Errorf("testlib: %s(%d): out of memory", name, n)
	}
	return core.Wrap(core.Desc{Data: p, Device: core.DLDevice{DeviceType: dev},
		DType: core.Float32, Shape: []int64{n}}, func() { C.free(p) })
}

// countedReleases counts the releases of counted's tensors: a test that exports one in any way
// checks that its memory is let go exactly once.
var countedReleases atomic.Int64

func counted(n int64) (*core.Tensor, error) {
	if n < 1 || n > 1<<20 {
		return nil, fmt.Errorf("testlib: counted(%d): want 1 to 2^20 elements", n)
	}
	p := C.calloc(C.size_t(n), 8)
	if p == nil {
		return nil, fmt.Errorf("testlib: counted(%d): out of memory", n)
	}
	v := unsafe.Slice((*float64)(p), n)
	for i := range v {
		v[i] = float64(i)
	}
	return core.Wrap(core.Desc{Data: p, Device: core.DLDevice{DeviceType: core.CPU},
		DType: core.Float64, Shape: []int64{n}}, func() {
		C.free(p)
		countedReleases.Add(1)
	})
}

func noop(a *core.Tensor) error { return nil }

func zerosLike(x *core.Tensor) (*core.Tensor, error) { return core.New(core.Float64, x.Shape()...) }

func sizeOf(x *core.Tensor) (int64, error) { return x.Len(), nil }

// matmul is a plain triple loop over strided float64 matrices: the benchmarks compare the cost
// of a call that returns a new small matrix with np.matmul's.
func matmul(a, b *core.Tensor) (*core.Tensor, error) {
	if a.Ndim() != 2 || b.Ndim() != 2 || a.Dim(1) != b.Dim(0) {
		return nil, fmt.Errorf("%w: matmul: shapes %v and %v do not multiply", core.ErrArgument, a.Shape(), b.Shape())
	}
	if a.DType() != core.Float64 || b.DType() != core.Float64 {
		return nil, fmt.Errorf("%w: matmul: dtypes %v and %v, want float64", core.ErrTypeMismatch, a.DType(), b.DType())
	}
	av, ao, err := core.ReadOnlySpan[float64](a)
	if err != nil {
		return nil, err
	}
	bv, bo, err := core.ReadOnlySpan[float64](b)
	if err != nil {
		return nil, err
	}
	n, k, m := a.Dim(0), a.Dim(1), b.Dim(1)
	c, err := core.New(core.Float64, n, m)
	if err != nil {
		return nil, err
	}
	cv, _ := core.Elements[float64](c)
	as, bs := a.Strides(), b.Strides()
	for i := range n {
		for j := range m {
			s := 0.0
			for l := range k {
				s += av[ao+i*as[0]+l*as[1]] * bv[bo+l*bs[0]+j*bs[1]]
			}
			cv[i*m+j] = s
		}
	}
	return c, nil
}

// dlpackgo_test_noop is noop as a plain //export taking a handle: what a ctypes caller pays.
//
//export dlpackgo_test_noop
func dlpackgo_test_noop(h C.uintptr_t) C.int {
	t, err := pyexchange.Lookup(pyexchange.Handle(h))
	if err != nil {
		return -1
	}
	held, err := core.Hold(t)
	if err != nil {
		return -1
	}
	held.Release()
	return 0
}

var scaleCalls atomic.Int64

func scale(x *core.Tensor, factor float64) error {
	scaleCalls.Add(1)
	switch x.DType() {
	case core.Float64:
		return each(x, true, func(p *float64) { *p *= factor })
	case core.Float32:
		return each(x, true, func(p *float32) { *p *= float32(factor) })
	}
	return fmt.Errorf("%w: scale: dtype %v, want float32 or float64", core.ErrTypeMismatch, x.DType())
}

func add(a, b *core.Tensor) (*core.Tensor, error) {
	if fmt.Sprint(a.Shape()) != fmt.Sprint(b.Shape()) {
		return nil, fmt.Errorf("%w: add: shapes %v and %v differ", core.ErrArgument, a.Shape(), b.Shape())
	}
	ca, err := asFloat64("add", a)
	if err != nil {
		return nil, err
	}
	cb, err := asFloat64("add", b)
	if err != nil {
		return nil, err
	}
	x, _ := core.Elements[float64](ca)
	y, _ := core.Elements[float64](cb)
	for i := range x {
		x[i] += y[i]
	}
	return ca, nil
}

// asFloat64 is x as float64 for a function that computes in float64, under the cast rule
// (adapters.CheckCast, issue 33): a cast that keeps every value (float32, int32, bool, ...) is
// made, as a copy; any other (complex, int64, uint64) is refused with an error naming both dtypes
// that Python raises as TypeError (GoTypeError), so that a complex array never reaches the sum
// with its imaginary parts dropped.
func asFloat64(fn string, x *core.Tensor) (*core.Tensor, error) {
	if err := (adapters.Options{}).CheckCast(x.DType(), core.Float64, fn+"()"); err != nil {
		return nil, err
	}
	return memory.Cast(x, core.Float64)
}

func total(x *core.Tensor) (float64, error) {
	c, err := asFloat64("total", x)
	if err != nil {
		return 0, err
	}
	v, _ := core.ReadOnlyElements[float64](c)
	s := 0.0
	for _, e := range v {
		s += e
	}
	return s, nil
}

func firstAddress(x *core.Tensor) (uintptr, error) { return uintptr(x.Data()), nil }

func same(x *core.Tensor) (*core.Tensor, error) { return x, nil }

func reversed(x *core.Tensor) (*core.Tensor, error) { return x.Reverse(0) }

func readonly(x *core.Tensor) (*core.Tensor, error) { return x.AsReadOnly() }

func echo(i8 int8, i64 int64, u8 uint8, u64 uint64, f32 float32, f64 float64, b bool, s string) (int8, int64, uint8, uint64, float32, float64, bool, string, error) {
	return i8, i64, u8, u64, f32, f64, b, s + "!", nil
}

func split(x *core.Tensor) (*core.Tensor, int, string, error) {
	row, err := x.Index(0, 0)
	if err != nil {
		return nil, 0, "", err
	}
	return row, int(x.Dim(0)), x.DType().String(), nil
}

func fail(kind string) error {
	switch kind {
	case "value":
		return fmt.Errorf("testlib: fail: %w: the value", core.ErrArgument)
	case "type":
		return fmt.Errorf("testlib: fail: %w", core.ErrTypeMismatch)
	case "buffer":
		return fmt.Errorf("testlib: fail: %w", adapters.ErrCopyRequired)
	case "memory":
		return fmt.Errorf("testlib: fail: %w", pyexchange.ErrOutOfMemory)
	case "odd":
		return fmt.Errorf("testlib: fail: %w", errOdd)
	}
	return errors.New("testlib: fail: " + strings.ToUpper(kind))
}

func crash(x *core.Tensor) error {
	var s []int
	_ = s[x.Len()+3] // index out of range: a runtime panic
	return nil
}

func nilResult() (*core.Tensor, error) { return nil, nil }

func spin(ms int) (int64, error) {
	end := time.Now().Add(time.Duration(ms) * time.Millisecond)
	n := int64(0)
	for time.Now().Before(end) {
		n++
	}
	return n, nil
}

// kept is what keep kept, guarded by keptMu: calls from several Python threads run at once.
var (
	keptMu sync.Mutex
	kept   []*core.Tensor
)

func keep(x *core.Tensor) error {
	v, err := x.View()
	if err != nil {
		return err
	}
	keptMu.Lock()
	kept = append(kept, v)
	keptMu.Unlock()
	return nil
}

func dropKept() (int, error) {
	keptMu.Lock()
	vs := kept
	kept = nil
	keptMu.Unlock()
	for _, v := range vs {
		v.Release()
	}
	return len(vs), nil
}

// each calls f with the address of every element of t, whatever its strides (write: through
// core.Span, which refuses read-only tensors).
func each[T float32 | float64](t *core.Tensor, write bool, f func(*T)) error {
	span, first, err := core.ReadOnlySpan[T](t)
	if write {
		span, first, err = core.Span[T](t)
	}
	if err != nil {
		return err
	}
	strides := t.Strides()
	for idx := range core.Indices(t.Shape()) {
		off := first
		for i, x := range idx {
			off += x * strides[i]
		}
		f(&span[off])
	}
	return nil
}
