package flightx

import "github.com/dlpack-go/dlpack/internal/errs"

// wrapf adds context to err as errs.Wrap does for "flightx": after a cause that already names
// the package (`flightx: batch of 3 elements when 2 remain (get "w")`), before any other.
func wrapf(err error, format string, args ...any) error {
	return errs.Wrap("flightx", err, format, args...)
}
