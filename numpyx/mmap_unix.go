//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package numpyx

import (
	"fmt"
	"math"
	"os"
	"syscall"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

const mmapSupported = true

// mapFile maps the whole file read-only and wraps its data as a tensor whose release unmaps it.
func mapFile(f *os.File, size int64, h Header) (*core.Tensor, error) {
	if size > math.MaxInt {
		return nil, fmt.Errorf("numpyx: file of %d bytes is too large to map here", size)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("numpyx: mmap: %w", err)
	}
	d := core.Desc{Data: unsafe.Pointer(&m[h.DataOffset]), Device: core.CPUDevice, DType: h.DType,
		Shape: h.Shape, Strides: stridesFor(h), Flags: core.FlagReadOnly}
	t, err := core.Wrap(d, func() { syscall.Munmap(m) })
	if err != nil { // Wrap has unmapped already
		return nil, fmt.Errorf("numpyx: %w", err)
	}
	return t, nil
}
