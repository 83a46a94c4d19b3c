//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mmap

import "os"

// Supported reports whether Map works on this system: not here, so Map fails with
// ErrUnsupported and the file readers read instead.
const Supported = false

// Map fails with ErrUnsupported on this system.
func Map(f *os.File, size int64) ([]byte, error) { return nil, ErrUnsupported }

// Unmap does nothing on this system.
func Unmap(b []byte) error { return nil }
