//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mmap

import (
	"fmt"
	"math"
	"os"
	"syscall"
)

// Supported reports whether Map works on this system.
const Supported = true

// Map maps the first size bytes of f read-only and shared: the bytes are the page cache, and
// writes to the file by others show through. The mapping outlives f (f may be closed); undo it
// with Unmap exactly once. size must be positive.
func Map(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || size > math.MaxInt {
		return nil, fmt.Errorf("mmap: cannot map %d bytes here", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	return b, nil
}

// Unmap undoes a mapping Map returned. Nothing may touch its bytes afterwards.
func Unmap(b []byte) error {
	if err := syscall.Munmap(b); err != nil {
		return fmt.Errorf("mmap: munmap: %w", err)
	}
	return nil
}
