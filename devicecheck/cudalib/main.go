// Command cudalib is the Go library devicecheck/check_cuda.py drives (go build
// -buildmode=c-shared): the product's Python exchange (pyexchange, the dlpackgo package)
// with CUDA tensors, plus the few functions the check needs to make, fill, read and copy them.
// Every tensor crosses through pyexchange: results as dlpackgo.Tensor, arguments as any object
// with __dlpack__ (torch and CuPy CUDA tensors, NumPy arrays), exports with the stream semantics
// of the Python protocol through the StreamSync this library installs for CUDA tensors
// (gpu.ReadyFor from the stream the tensor was written on).
package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu"
	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/dlpack-go/dlpack/pyexchange"
)

func main() {}

func init() {
	for _, r := range []struct {
		name string
		fn   any
		doc  string
	}{
		{"no_device", noDevice, "no_device()\n\nWhy no CUDA device can be used, or \"\" when one can."},
		{"device_name", func() (string, error) { return cuda.DeviceName(0) }, "device_name()\n\nThe name of device 0."},
		{"new", newTensor, "new(kind, rows, cols)\n\nA zeroed float32 tensor: kind 0 on CUDA device 0, 1 in pinned host memory, 2 in Go memory."},
		{"bytes", newBytes, "bytes(kind, n)\n\nA zeroed tensor of n bytes, kinds as new's (for the bandwidth check)."},
		{"copy", func(dst, src *core.Tensor) error { return gpu.Copy(dst, src) }, "copy(dst, src)\n\nCopies src into dst (same shape and dtype, any devices and layouts), synchronously."},
		{"fill_async", fillAsync, "fill_async(t, start)\n\nFills CUDA tensor t with start, start+1, ... on Go's own non-blocking stream, asynchronously."},
		{"producer_sync", producerSync, "producer_sync()\n\nWaits for Go's stream and frees the pinned buffers fill_async used."},
	} {
		pyexchange.MustRegister(r.name, r.fn, r.doc)
	}
	pyexchange.SetStreamSync(core.CUDA, func(t *core.Tensor, stream int64) error {
		return gpu.ReadyFor(t, producerOf(t), stream)
	})
}

func noDevice() (string, error) {
	if err := cuda.Available(); err != nil {
		if errors.Is(err, cuda.ErrNoDevice) {
			return err.Error(), nil
		}
		return "", err
	}
	return "", nil
}

// alloc makes a zeroed tensor of dtype and shape: kind 0 on CUDA device 0, 1 pinned, 2 Go memory.
func alloc(kind int, dtype core.DLDataType, shape ...int64) (*core.Tensor, error) {
	switch kind {
	case 0:
		return gpu.Alloc(dtype, 0, shape...)
	case 1:
		return gpu.AllocPinned(dtype, shape...)
	case 2:
		return core.New(dtype, shape...)
	}
	return nil, fmt.Errorf("cudalib: kind %d: want 0 (CUDA), 1 (pinned) or 2 (Go memory): %w", kind, core.ErrInvalid)
}

func newTensor(kind int, rows, cols int64) (*core.Tensor, error) {
	return alloc(kind, core.Float32, rows, cols)
}

func newBytes(kind int, n int64) (*core.Tensor, error) { return alloc(kind, core.Uint8, n) }

// The producer stream: fill_async queues work on it, and the StreamSync makes consumers wait for
// it for the tensors it wrote (the others were written on the legacy default stream).
var producer struct {
	sync.Mutex
	stream  gpu.Stream
	writes  map[uintptr]bool // data addresses of tensors with work queued on stream
	pending []*core.Tensor   // pinned buffers in flight on stream
}

func producerOf(t *core.Tensor) gpu.Stream {
	producer.Lock()
	defer producer.Unlock()
	if producer.writes[uintptr(t.Data())] {
		return producer.stream
	}
	return gpu.LegacyStream
}

func fillAsync(t *core.Tensor, start float64) error {
	producer.Lock()
	defer producer.Unlock()
	if producer.writes == nil {
		s, err := gpu.NewStream(0)
		if err != nil {
			return err
		}
		producer.stream, producer.writes = s, map[uintptr]bool{}
	}
	p, err := gpu.AllocPinned(core.Float32, t.Shape()...)
	if err != nil {
		return err
	}
	d, err := core.Elements[float32](p)
	if err != nil {
		p.Release()
		return err
	}
	for i := range d {
		d[i] = float32(start) + float32(i)
	}
	producer.pending = append(producer.pending, p)
	producer.writes[uintptr(t.Data())] = true
	return gpu.CopyOn(t, p, producer.stream)
}

func producerSync() error {
	producer.Lock()
	defer producer.Unlock()
	if producer.writes == nil {
		return nil
	}
	if err := producer.stream.Synchronize(); err != nil {
		return err
	}
	for _, p := range producer.pending {
		p.Release()
	}
	producer.pending = nil
	clear(producer.writes)
	return nil
}
