package pyexchange

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of this package. Every error it returns matches one of them, or an error of package core
// or adapters, under errors.Is; its message leads with what was wrong and the values at fault
// ("pyexchange: unknown tensor handle 7 ..."), without the sentinel's own text.
var (
	// ErrHandle: a handle that names no live tensor (never issued, or already released).
	ErrHandle = errors.New("pyexchange: unknown tensor handle")
	// ErrNotAttached: a call that needs the Python interpreter's C API before the Python module
	// attached it (dlpackgo_init).
	ErrNotAttached = errors.New("pyexchange: the Python module has not attached the interpreter")
	// ErrOutOfMemory: C memory could not be allocated.
	ErrOutOfMemory = errors.New("pyexchange: out of C memory")
)

// inContext adds context (what was being done: "copy", "f() result 0") to err: after the cause
// when err is this package's (its message leads with "pyexchange: "), as the first words after
// the package otherwise.
func inContext(err error, context string) error {
	if strings.HasPrefix(err.Error(), "pyexchange: ") {
		return fmt.Errorf("%w (%s)", err, context)
	}
	return fmt.Errorf("pyexchange: %s: %w", context, err)
}
