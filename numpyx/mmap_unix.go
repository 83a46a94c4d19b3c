//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package numpyx

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/mmap"
)

const mmapSupported = mmap.Supported

// mapFile maps the whole file read-only and wraps its data as a tensor whose release unmaps it.
func mapFile(f *os.File, size int64, h Header) (*core.Tensor, error) {
	m, err := mmap.Map(f, size)
	if err != nil {
		return nil, fmt.Errorf("numpyx: %w", err)
	}
	d := core.Desc{Data: unsafe.Pointer(&m[h.DataOffset]), Device: core.CPUDevice, DType: h.DType,
		Shape: h.Shape, Strides: stridesFor(h), Flags: core.FlagReadOnly}
	t, err := core.Wrap(d, func() { mmap.Unmap(m) })
	if err != nil { // Wrap has unmapped already
		return nil, fmt.Errorf("numpyx: %w", err)
	}
	return t, nil
}
