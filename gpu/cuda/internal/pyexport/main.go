// Command pyexport is a C shared library (go build -buildmode=c-shared) through which
// gpu/cuda/devicecheck.py drives Go's CUDA tensors from Python with ctypes alone: it allocates
// and fills device tensors, exports them as DLPack managed tensors (core/cdlpack) honouring the
// stream argument of the Python protocol (gpu.ReadyFor), imports the managed tensors PyTorch and
// CuPy produce, and copies for the bandwidth comparison. Tensors cross to Python as cgo.Handle
// integers; every function returns 0 (or a non-zero handle or pointer) on success and leaves the
// error text for dg_last_error.
//
// It is a test harness for the device check, not an API.
package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/gpu"
	"github.com/dlpack-go/dlpack/gpu/cuda"
)

func main() {}

var (
	mu       sync.Mutex
	lastErr  *C.char
	producer = gpu.LegacyStream // the stream dg_fill_async queued work on
	pending  []*core.Tensor     // pinned buffers in flight on producer
)

func fail(err error) {
	mu.Lock()
	defer mu.Unlock()
	if lastErr != nil {
		C.free(unsafe.Pointer(lastErr))
	}
	lastErr = C.CString(err.Error())
}

//export dg_last_error
func dg_last_error() *C.char {
	mu.Lock()
	defer mu.Unlock()
	return lastErr
}

// dg_init returns 0 when a device can be used, 2 when there is none (the error says why).
//
//export dg_init
func dg_init() C.int {
	if err := cuda.Available(); err != nil {
		fail(err)
		if errors.Is(err, cuda.ErrNoDevice) {
			return 2
		}
		return 1
	}
	return 0
}

//export dg_device_name
func dg_device_name(buf *C.char, n C.int) C.int {
	name, err := cuda.DeviceName(0)
	if err != nil {
		fail(err)
		return 1
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	k := copy(b[:len(b)-1], name)
	b[k] = 0
	return 0
}

func handle(t *core.Tensor) C.uintptr_t { return C.uintptr_t(cgo.NewHandle(t)) }

func tensor(h C.uintptr_t) (*core.Tensor, error) {
	if h == 0 {
		return nil, errors.New("pyexport: handle 0")
	}
	t, ok := cgo.Handle(h).Value().(*core.Tensor)
	if !ok {
		return nil, errors.New("pyexport: not a tensor handle")
	}
	return t, nil
}

// dg_new allocates a zeroed float32 tensor of shape (rows, cols): kind 0 on CUDA device 0,
// 1 in pinned host memory, 2 in Go memory (for the self-test of the capsule code without a GPU).
//
//export dg_new
func dg_new(kind C.int, rows, cols C.int64_t) C.uintptr_t {
	var t *core.Tensor
	var err error
	switch kind {
	case 0:
		t, err = gpu.Alloc(core.Float32, 0, int64(rows), int64(cols))
	case 1:
		t, err = gpu.AllocPinned(core.Float32, int64(rows), int64(cols))
	default:
		t, err = core.New(core.Float32, int64(rows), int64(cols))
	}
	if err != nil {
		fail(err)
		return 0
	}
	return handle(t)
}

// hostView is a float32 host tensor over n floats of C (ctypes) memory, shaped like t.
func hostView(t *core.Tensor, p *C.float, n C.int64_t) (*core.Tensor, error) {
	if int64(n) != t.Len() {
		return nil, fmt.Errorf("pyexport: %d floats for a tensor of %d", n, t.Len())
	}
	return core.Wrap(core.Desc{Data: unsafe.Pointer(p), Device: core.CPUDevice, DType: core.Float32, Shape: t.Shape()}, nil)
}

// dg_write copies n floats from host memory into tensor h (synchronously).
//
//export dg_write
func dg_write(h C.uintptr_t, in *C.float, n C.int64_t) C.int {
	t, err := tensor(h)
	if err == nil {
		var hv *core.Tensor
		if hv, err = hostView(t, in, n); err == nil {
			err = gpu.Copy(t, hv)
		}
	}
	if err != nil {
		fail(err)
		return 1
	}
	return 0
}

// dg_read copies tensor h (any layout, any device) into n floats of host memory.
//
//export dg_read
func dg_read(h C.uintptr_t, out *C.float, n C.int64_t) C.int {
	t, err := tensor(h)
	if err == nil {
		var hv *core.Tensor
		if hv, err = hostView(t, out, n); err == nil {
			err = gpu.Copy(hv, t)
		}
	}
	if err != nil {
		fail(err)
		return 1
	}
	return 0
}

// dg_copy copies tensor src into tensor dst (synchronously).
//
//export dg_copy
func dg_copy(dst, src C.uintptr_t) C.int {
	d, err := tensor(dst)
	if err == nil {
		var s *core.Tensor
		if s, err = tensor(src); err == nil {
			err = gpu.Copy(d, s)
		}
	}
	if err != nil {
		fail(err)
		return 1
	}
	return 0
}

// dg_fill_async fills CUDA tensor h with start, start+1, ... through pinned memory,
// asynchronously on a non-blocking stream of Go's: the data is ready only for work ordered
// after that stream (dg_export with producer 1 hands this ordering to the consumer).
//
//export dg_fill_async
func dg_fill_async(h C.uintptr_t, start C.float) C.int {
	err := func() error {
		t, err := tensor(h)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if producer == gpu.LegacyStream {
			if producer, err = gpu.NewStream(0); err != nil {
				return err
			}
		}
		p, err := gpu.AllocPinned(core.Float32, t.Shape()...)
		if err != nil {
			return err
		}
		d, err := core.Elements[float32](p)
		if err != nil {
			return err
		}
		for i := range d {
			d[i] = float32(start) + float32(i)
		}
		pending = append(pending, p)
		return gpu.CopyOn(t, p, producer)
	}()
	if err != nil {
		fail(err)
		return 1
	}
	return 0
}

// dg_producer_sync waits for Go's producer stream and frees the pinned buffers in flight.
//
//export dg_producer_sync
func dg_producer_sync() C.int {
	mu.Lock()
	defer mu.Unlock()
	if err := producer.Synchronize(); err != nil {
		fail(err)
		return 1
	}
	for _, p := range pending {
		p.Release()
	}
	pending = nil
	return 0
}

// dg_export exports tensor h as a DLManagedTensorVersioned (versioned != 0) or a legacy
// DLManagedTensor, after making it ready for the consumer's stream (the protocol's stream
// argument, 1 for None): the work Go queued on its producer stream (fromProducer != 0) or on the
// legacy default stream.
//
//export dg_export
func dg_export(h C.uintptr_t, stream C.int64_t, versioned, fromProducer C.int) unsafe.Pointer {
	p, err := func() (unsafe.Pointer, error) {
		t, err := tensor(h)
		if err != nil {
			return nil, err
		}
		prod := gpu.LegacyStream
		if fromProducer != 0 {
			mu.Lock()
			prod = producer
			mu.Unlock()
		}
		if err := gpu.ReadyFor(t, prod, int64(stream)); err != nil {
			return nil, err
		}
		if versioned != 0 {
			m, err := cdlpack.ExportVersioned(t)
			return unsafe.Pointer(m), err
		}
		m, err := cdlpack.ExportLegacy(t)
		return unsafe.Pointer(m), err
	}()
	if err != nil {
		fail(err)
		return nil
	}
	return p
}

// dg_import takes ownership of a managed tensor from a capsule (versioned or legacy) and
// returns a handle to the Go tensor over its memory.
//
//export dg_import
func dg_import(m unsafe.Pointer, versioned C.int) C.uintptr_t {
	var t *core.Tensor
	var err error
	if versioned != 0 {
		t, err = cdlpack.ImportVersioned((*core.DLManagedTensorVersioned)(m))
	} else {
		t, err = cdlpack.ImportLegacy((*core.DLManagedTensor)(m))
	}
	if err != nil {
		fail(err)
		return 0
	}
	return handle(t)
}

// dg_info writes device type, device id, ndim, data address, flags, then the shape and the
// strides into out (room for 5 + 2*ndim values, at most 5 + 2*8).
//
//export dg_info
func dg_info(h C.uintptr_t, out *C.int64_t) C.int {
	t, err := tensor(h)
	if err == nil && t.Ndim() > 8 {
		err = fmt.Errorf("pyexport: info: ndim %d > 8", t.Ndim())
	}
	if err != nil {
		fail(err)
		return 1
	}
	o := unsafe.Slice((*int64)(unsafe.Pointer(out)), 5+2*8)
	o[0], o[1], o[2] = int64(t.Device().DeviceType), int64(t.Device().DeviceID), int64(t.Ndim())
	o[3], o[4] = int64(uintptr(t.Data())), int64(t.Flags())
	copy(o[5:], t.Shape())
	copy(o[5+t.Ndim():], t.Strides())
	return 0
}

// dg_release lets go of the handle's tensor and deletes the handle.
//
//export dg_release
func dg_release(h C.uintptr_t) {
	if t, err := tensor(h); err == nil {
		t.Release()
		cgo.Handle(h).Delete()
	}
}

//export dg_live_exports
func dg_live_exports() C.int64_t { return C.int64_t(cdlpack.LiveExports()) }

//export dg_live_foreign
func dg_live_foreign() C.int64_t { return C.int64_t(core.LiveForeign()) }

// dg_bytes allocates an uninitialised-looking (zeroed) byte tensor of n bytes: kind 0 on CUDA
// device 0, 1 pinned, 2 Go memory. For the bandwidth comparison.
//
//export dg_bytes
func dg_bytes(kind C.int, n C.int64_t) C.uintptr_t {
	var t *core.Tensor
	var err error
	switch kind {
	case 0:
		t, err = gpu.Alloc(core.Uint8, 0, int64(n))
	case 1:
		t, err = gpu.AllocPinned(core.Uint8, int64(n))
	default:
		t, err = core.New(core.Uint8, int64(n))
	}
	if err != nil {
		fail(err)
		return 0
	}
	return handle(t)
}
