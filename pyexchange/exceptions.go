package pyexchange

import (
	"errors"
	"sync"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
)

// Exception is the Python exception a Go error of a registered function is raised as. Each is a
// subclass of dlpackgo.GoError as well as of the Python exception it names, so Python code may
// catch either: except ValueError, or except dlpackgo.GoError.
type Exception byte

// The exceptions. The values are the kind bytes of the error reports the Python module reads.
const (
	RuntimeError Exception = 'E' // dlpackgo.GoError (a RuntimeError): anything not mapped
	ValueError   Exception = 'V' // dlpackgo.GoValueError
	TypeError    Exception = 'T' // dlpackgo.GoTypeError
	BufferError  Exception = 'B' // dlpackgo.GoBufferError
	MemoryError  Exception = 'M' // dlpackgo.GoMemoryError
)

// panicked is the kind of report for a recovered panic: dlpackgo.GoPanic.
const panicked = 'P'

// String returns the Python name of the exception.
func (e Exception) String() string {
	switch e {
	case ValueError:
		return "ValueError"
	case TypeError:
		return "TypeError"
	case BufferError:
		return "BufferError"
	case MemoryError:
		return "MemoryError"
	}
	return "RuntimeError"
}

// The built-in mapping, checked in order (errors.Is) after those of MapError.
var builtinExceptions = []struct {
	target error
	exc    Exception
}{
	{ErrOutOfMemory, MemoryError},
	{core.ErrTypeMismatch, TypeError},
	{adapters.ErrCast, TypeError},
	{core.ErrDType, TypeError},
	{core.ErrSubByte, TypeError},
	{adapters.ErrUnsupported, TypeError},
	{adapters.ErrCopyRequired, BufferError},
	{core.ErrNotHost, BufferError},
	{core.ErrNotViewable, BufferError},
	{core.ErrNotContiguous, BufferError},
	{core.ErrReleased, BufferError},
	{core.ErrReadOnly, ValueError},
	{core.ErrArgument, ValueError},
	{core.ErrInvalid, ValueError},
	{ErrHandle, ValueError},
}

var userExceptions struct {
	sync.RWMutex
	m []struct {
		target error
		exc    Exception
	}
}

// MapError makes every error of a registered function that matches target (errors.Is) raise exc
// in Python. Mappings made here are checked before the built-in ones, in the order they were made.
// Call it from the library's init, next to Register:
//
//	var ErrShape = errors.New("mylib: shapes do not match")
//	func init() { pyexchange.MapError(ErrShape, pyexchange.ValueError) }
func MapError(target error, exc Exception) {
	userExceptions.Lock()
	defer userExceptions.Unlock()
	userExceptions.m = append(userExceptions.m, struct {
		target error
		exc    Exception
	}{target, exc})
}

// ExceptionFor returns the Python exception err is raised as: the first mapping of MapError that
// matches it, else the built-in mapping (MemoryError for ErrOutOfMemory; TypeError for dtype
// errors, core.ErrTypeMismatch, adapters.ErrCast (a cast the cast rule refuses: a complex array
// for a function that computes in float64, say) and adapters.ErrUnsupported; BufferError for memory that cannot be
// shared or reached as asked: adapters.ErrCopyRequired, core.ErrNotHost, ErrNotViewable,
// ErrNotContiguous, ErrReleased; ValueError for core.ErrReadOnly, ErrArgument, the other
// core.ErrInvalid errors and ErrHandle), else RuntimeError (dlpackgo.GoError).
func ExceptionFor(err error) Exception {
	userExceptions.RLock()
	for _, m := range userExceptions.m {
		if errors.Is(err, m.target) {
			userExceptions.RUnlock()
			return m.exc
		}
	}
	userExceptions.RUnlock()
	for _, m := range builtinExceptions {
		if errors.Is(err, m.target) {
			return m.exc
		}
	}
	return RuntimeError
}
