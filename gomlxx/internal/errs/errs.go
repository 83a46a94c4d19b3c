// Package errs builds this module's error messages by the rule of the root module's adapters
// (see package adapters, "The adapter contract"): an error wraps its sentinel without printing
// it, leads with what was wrong, and names the package once. It is this module's own, not the
// root's internal/errs: a nested module is released at versions of its own and may not depend
// on another module's internal packages.
package errs

import (
	"fmt"
	"strings"
)

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

// Wrap adds context to err for package pkg ("gomlxx"): after err when err already starts with
// "pkg: ", so that the message leads with the cause and names the package once, and before it
// otherwise ("gomlxx: ToTensor: core: ..."). An empty format adds only the package's name, where
// err lacks it.
func Wrap(pkg string, err error, format string, args ...any) error {
	named := strings.HasPrefix(err.Error(), pkg+": ")
	switch {
	case format == "" && named:
		return err
	case format == "":
		return fmt.Errorf("%s: %w", pkg, err)
	case named:
		return fmt.Errorf("%w (%s)", err, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%s: %s: %w", pkg, fmt.Sprintf(format, args...), err)
}
