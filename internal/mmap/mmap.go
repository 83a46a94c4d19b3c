// Package mmap maps files read-only into memory for the file readers of this module (numpyx,
// safetensorsx, ggufx). Map and Unmap only map and unmap: who unmaps, and when, is the caller's
// ownership rule (a core.Wrap release, run exactly once); Shared is that rule for a mapping
// that a file value and every tensor over it hold together.
package mmap

import "errors"

// ErrUnsupported: this system has no memory maps (Supported is false).
var ErrUnsupported = errors.New("mmap: memory maps are not supported on this system")
