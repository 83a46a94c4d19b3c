// Package errs makes this module's errors read the way its users read them: the first words
// say what went wrong and the values at fault, then the context, while errors.Is still matches
// the sentinel that names the kind of failure.
//
// Errorf is fmt.Errorf that also wraps a sentinel without printing it:
//
//	errs.Errorf(adapters.ErrUnsupported, "gonumx: *mat.Dense needs 2 dimensions, the tensor has shape %v", shape)
//
// reads "gonumx: *mat.Dense needs 2 dimensions, the tensor has shape [2 2 2]" and matches
// adapters.ErrUnsupported, where fmt.Errorf("%w: gonumx: ...", adapters.ErrUnsupported, ...)
// would lead with "adapters: conversion not supported". Check is the rule the tests hold every
// message to.
package errs

import (
	"fmt"
	"regexp"
	"strings"
)

// kinded is a message that also wraps a sentinel it does not print.
type kinded struct {
	msg  error
	kind error
}

func (e *kinded) Error() string   { return e.msg.Error() }
func (e *kinded) Unwrap() []error { return []error{e.msg, e.kind} }

// Errorf formats an error as fmt.Errorf does (its %w verbs wrap as there) that also matches
// kind with errors.Is, without kind's text in the message.
func Errorf(kind error, format string, args ...any) error {
	return &kinded{msg: fmt.Errorf(format, args...), kind: kind}
}

// Packages are the prefixes of this module's messages ("onnxx: ..."): those of its packages,
// and of the Go standard library's and dependencies' packages whose errors it wraps.
var Packages = []string{
	"core", "cdlpack", "adapters", "adaptertest", "gonumx", "gorgoniax", "gomlxx", "numpyx",
	"pyexchange", "safetensorsx", "ggufx", "onnxx", "ortgo", "tinyonnx", "arrowx", "cdatax",
	"flightx", "gpu", "cuda", "display", "tensorinfo", "tensorio", "mmap", "pyfind",
}

var prefix = regexp.MustCompile(`(?:^|: )([a-z][a-z0-9]*): `)

// Check holds msg to the module's rule for messages and says what breaks it, or returns nil:
// no package prefix may appear twice ("onnxx: element type: onnxx: ..."), and the message may
// not put a sentinel's generic text before the specific cause, at its start or after a context
// ("adapters: conversion not supported: onnxx: ...", "cdlpack: import: core: invalid tensor:
// bad ndim: ..."): sentinels are the sentinels whose text must not come first. A message that
// ends with a sentinel's text passes.
func Check(msg string, sentinels ...error) error {
	seen := map[string]bool{}
	for _, m := range prefix.FindAllStringSubmatch(msg, -1) {
		p := m[1]
		if !isPackage(p) {
			continue
		}
		if seen[p] {
			return fmt.Errorf("the prefix %q appears twice in %q", p+":", msg)
		}
		seen[p] = true
	}
	for _, s := range sentinels {
		if s == nil {
			continue
		}
		text := s.Error()
		if rest, ok := strings.CutPrefix(msg, text+": "); ok && rest != "" {
			return fmt.Errorf("%q leads with the generic %q before its cause", msg, text)
		}
		if strings.Contains(msg, ": "+text+": ") {
			return fmt.Errorf("%q has the generic %q before its cause", msg, text)
		}
	}
	return nil
}

func isPackage(p string) bool {
	for _, q := range Packages {
		if p == q {
			return true
		}
	}
	return false
}

// CheckErr is Check of err's message, and nil for a nil err.
func CheckErr(err error, sentinels ...error) error {
	if err == nil {
		return nil
	}
	return Check(err.Error(), sentinels...)
}

// Wrap adds context to err for package pkg ("arrowx"): after err when err already starts with
// "pkg: " ("arrowx: offset -1 ... (FromArray of int32)"), so that the message leads with the
// cause and names the package once, and before it otherwise ("arrowx: ToArray: core: ...").
// An empty format adds only the package's name, where err lacks it.
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
