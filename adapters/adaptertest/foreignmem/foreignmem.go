//go:build unix

// Package foreignmem is the foreign-memory fixture of the conformance kit and of adapters' tests: tensors over memory
// that Go did not allocate, released through core.Wrap's release function, made to catch use
// after free loudly. Its memory is an anonymous mapping of its own, and the release unmaps it: a
// read or write through the tensor's address after the release faults, instead of reading stale
// values that happen to still be there. Pair it with Collect, which forces garbage collections
// throughout a test, so that an operation that stops holding its operand before it is done with
// the memory has that memory unmapped under it.
package foreignmem

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

// Mapped is a tensor over memory mapped for it alone, and the count of its release.
type Mapped struct {
	// Tensor is the only holder of the memory when the fixture returns it.
	Tensor *core.Tensor
	// Releases counts the calls of the release function (core promises exactly one).
	Releases *atomic.Int32
}

// Twin returns a tensor with t's dtype, shape, strides, flags and elements over a fresh mapping
// (t itself is only read): the mapping covers exactly the bytes t's elements span, so any layout
// (offsets, steps, negative and zero strides, transposes) has a twin. Releasing the twin's last
// holder unmaps the memory.
func Twin(t *core.Tensor) (Mapped, error) {
	h, err := core.Hold(t)
	if err != nil {
		return Mapped{}, err
	}
	defer h.Release()
	size := int64(t.DType().Size())
	lo, hi := int64(0), int64(-1)
	if t.Len() > 0 {
		hi = 0
		for i, d := range t.Shape() {
			if s := (d - 1) * t.Stride(i); s < 0 {
				lo += s
			} else {
				hi += s
			}
		}
	}
	n := (hi - lo + 1) * size
	if t.DType().SubByte() {
		lo, n = 0, t.NumBytes()
	}
	d := core.Desc{Device: core.CPUDevice, DType: t.DType(), Shape: t.Shape(), Strides: t.Strides(), Flags: t.Flags()}
	releases := new(atomic.Int32)
	if n <= 0 {
		m, err := core.Wrap(d, func() { releases.Add(1) })
		return Mapped{m, releases}, err
	}
	mem, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return Mapped{}, fmt.Errorf("foreignmem: mmap of %d bytes: %w", n, err)
	}
	src := unsafe.Slice((*byte)(unsafe.Add(t.Data(), lo*size)), n)
	copy(mem, src)
	base := unsafe.Pointer(unsafe.SliceData(mem))
	d.Data = unsafe.Add(base, -lo*size)
	m, err := core.Wrap(d, func() {
		if err := syscall.Munmap(mem); err != nil {
			panic(fmt.Sprintf("foreignmem: munmap: %v", err))
		}
		releases.Add(1)
	})
	return Mapped{m, releases}, err
}

// New returns a compact C-order tensor of dtype and shape over a fresh mapping, its bytes
// filled by fill (which may be nil: the mapping starts zeroed).
func New(dtype core.DLDataType, shape []int64, fill func(b []byte)) (Mapped, error) {
	t, err := core.New(dtype, shape...)
	if err != nil {
		return Mapped{}, err
	}
	if fill != nil && t.Len() > 0 {
		b, err := t.Bytes()
		if err != nil {
			return Mapped{}, err
		}
		fill(b)
	}
	return Twin(t)
}
