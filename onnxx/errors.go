package onnxx

import (
	"fmt"
	"strings"
)

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

// wrapf is err with context before it: "onnxx: CONTEXT: ERR", where ERR is err's message without
// this package's prefix (so that it appears once); it matches what err matches.
func wrapf(err error, format string, args ...any) error {
	return &kinded{msg: "onnxx: " + fmt.Sprintf(format, args...) + ": " + bare(err), kinds: []error{err}}
}

// bare is err's message without this package's prefix.
func bare(err error) string { return strings.TrimPrefix(err.Error(), "onnxx: ") }
