package onnxx

import "fmt"

// kinded is an error whose message leads with the problem and which matches, with errors.Is and
// errors.As, every error in kinds (sentinels, and errors such as an *adapters.CastError) without
// printing them.
type kinded struct {
	msg   string
	kinds []error
}

func (e *kinded) Error() string   { return e.msg }
func (e *kinded) Unwrap() []error { return e.kinds }

// errorf formats a message as fmt.Sprintf does, for an error that matches each of kinds.
func errorf(kinds []error, format string, args ...any) error {
	return &kinded{msg: fmt.Sprintf(format, args...), kinds: kinds}
}
