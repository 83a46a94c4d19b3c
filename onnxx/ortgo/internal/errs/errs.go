// Package errs builds this module's error messages by the rule of the root module's adapters
// (see package adapters, "The adapter contract"): an error wraps its sentinel without printing
// it, leads with what was wrong, and names the package once. It is this module's own, not the
// root's internal/errs: a nested module is released at versions of its own and may not depend
// on another module's internal packages.
package errs

import "fmt"

// kinded is an error with its own message that also matches a sentinel (errors.Is).
type kinded struct {
	msg  error
	kind error
}

func (e *kinded) Error() string   { return e.msg.Error() }
func (e *kinded) Unwrap() []error { return []error{e.msg, e.kind} }

// Errorf formats a message, as fmt.Errorf does (%w included), and returns an error that also
// wraps the sentinel kind, whose text it does not print.
func Errorf(kind error, format string, args ...any) error {
	return &kinded{msg: fmt.Errorf(format, args...), kind: kind}
}
