package arrowx

import (
	"errors"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Errors of this package, each wrapped with what was wrong; unsupported types wrap
// adapters.ErrUnsupported instead, nil arguments core.ErrNil, and invalid tensors the other
// errors of package core.
var (
	// ErrNulls: the array (or one of its list levels) has nulls and no fill value was given
	// (see FillNulls).
	ErrNulls = errors.New("arrowx: array has nulls")
	// ErrMalformed: an array, tensor or record batch does not describe its own memory
	// consistently (a buffer shorter than its length needs, a stride that is not a whole number
	// of elements, a size that overflows).
	ErrMalformed = errors.New("arrowx: malformed arrow data")
	// ErrMismatch: the columns of a record batch differ in type or length.
	ErrMismatch = errors.New("arrowx: columns do not form a matrix")
)

// wrapf adds context to err as errs.Wrap does for "arrowx": after a cause that already names
// the package ("arrowx: offset -1 ... (FromArray of int32)"), before any other.
func wrapf(err error, format string, args ...any) error {
	return errs.Wrap("arrowx", err, format, args...)
}
