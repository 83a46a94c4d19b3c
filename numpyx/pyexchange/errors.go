package pyexchange

import "errors"

// Errors of this package. Every error it returns wraps one of them, or an error of package core
// or adapters, with what was wrong.
var (
	// ErrHandle: a handle that names no live tensor (never issued, or already released).
	ErrHandle = errors.New("pyexchange: unknown tensor handle")
	// ErrNotAttached: a call that needs the Python interpreter's C API before the Python module
	// attached it (dlpackgo_init).
	ErrNotAttached = errors.New("pyexchange: the Python module has not attached the interpreter")
	// ErrOutOfMemory: C memory could not be allocated.
	ErrOutOfMemory = errors.New("pyexchange: out of C memory")
)
