package adapters

import (
	"errors"
	"fmt"
	"github.com/dlpack-go/dlpack/memory"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// CopyPolicy says whether a conversion may copy elements.
type CopyPolicy int

const (
	// CopyIfNeeded shares memory when the layout, dtype and device allow, and copies otherwise.
	// It is the default.
	CopyIfNeeded CopyPolicy = iota
	// CopyNever shares memory or fails with ErrCopyRequired.
	CopyNever
	// CopyAlways copies even when memory could be shared, so that the result aliases nothing.
	CopyAlways
)

// String names the policy.
func (p CopyPolicy) String() string {
	switch p {
	case CopyIfNeeded:
		return "copy-if-needed"
	case CopyNever:
		return "copy-never"
	case CopyAlways:
		return "copy-always"
	}
	return fmt.Sprintf("CopyPolicy(%d)", int(p))
}

// Errors every adapter returns, wrapped with what was wrong.
var (
	// ErrCopyRequired: CopyNever was asked but the conversion cannot share memory.
	ErrCopyRequired = errors.New("adapters: conversion needs a copy, and copying was not allowed")
	// ErrUnsupported: the target cannot represent the tensor at all (dtype, rank, device). It is
	// memory.ErrUnsupported, which the copy and cast kernels return.
	ErrUnsupported = memory.ErrUnsupported
)

// Options are the settings every adapter's conversion takes. Adapters read them with Apply.
type Options struct {
	// Policy decides between sharing and copying.
	Policy CopyPolicy
	// Copied, if not nil, is set to whether the conversion copied, by a conversion that
	// succeeds; one that fails leaves it as it was.
	Copied *bool
	// Cast lets a conversion whose target has a fixed element type (a *mat.Dense, a model's
	// input) convert elements of another dtype with Cast, a copy, even when the cast can change
	// values. Off by default: only casts that keep every value (Preserves) happen without it,
	// and a narrowing such as float64 to float32 is never silent (see CheckCast).
	Cast bool

	// extra holds settings that one adapter defines and the others ignore (arrowx's fill value
	// for nulls), keyed by a value of a type private to that adapter: see WithExtra and Extra.
	extra map[any]any
}

// Option sets one of the Options.
type Option func(*Options)

// WithCopy sets the copy policy.
func WithCopy(p CopyPolicy) Option { return func(o *Options) { o.Policy = p } }

// ZeroCopyOnly is WithCopy(CopyNever): share memory or fail with ErrCopyRequired.
func ZeroCopyOnly() Option { return WithCopy(CopyNever) }

// AlwaysCopy is WithCopy(CopyAlways): never alias the input.
func AlwaysCopy() Option { return WithCopy(CopyAlways) }

// ReportCopy makes the conversion store in *copied whether it copied, once it has succeeded. A
// conversion that fails does not touch *copied: it keeps whatever the caller put there.
func ReportCopy(copied *bool) Option { return func(o *Options) { o.Copied = copied } }

// AllowCast lets a conversion convert elements to the element type its target needs even when
// the cast can change values (a copy with Cast, reported like any copy), instead of failing
// with ErrCast. Casts that keep every value (Preserves) need no option.
func AllowCast() Option { return func(o *Options) { o.Cast = true } }

// WithExtra sets a setting that only one adapter understands, under a key of a type private to
// that adapter (as context.WithValue does); the adapter exports a constructor that calls it, such
// as arrowx.FillNulls. Other adapters ignore it.
func WithExtra(key, value any) Option {
	return func(o *Options) {
		if o.extra == nil {
			o.extra = map[any]any{}
		}
		o.extra[key] = value
	}
}

// Extra returns the setting stored under key by WithExtra, and whether there was one.
func (o Options) Extra(key any) (any, bool) {
	v, ok := o.extra[key]
	return v, ok
}

// Apply folds opts into Options, starting from the defaults.
func Apply(opts ...Option) Options {
	var o Options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// Decide is Choose followed by Report: it decides and records the decision at once, so it is
// only right for a conversion that nothing can fail after the decision. Adapters call Choose,
// and Report once the conversion has succeeded.
func (o Options) Decide(shareable bool, why string) (copy bool, err error) {
	copy, err = o.Choose(shareable, why)
	if err == nil {
		o.Report(copy)
	}
	return copy, err
}

// Choose tells an adapter whether to copy, without recording it. shareable reports whether the
// conversion could share memory; when it cannot, why says what stops it and leads the message
// of the error (wrapping ErrCopyRequired) returned under CopyNever. The adapter makes the
// conversion, and calls Report with the decision once it has succeeded, so that a failure
// leaves Copied as it was.
func (o Options) Choose(shareable bool, why string) (copy bool, err error) {
	switch {
	case o.Policy == CopyAlways:
		return true, nil
	case shareable:
		return false, nil
	case o.Policy == CopyNever:
		return false, errs.Errorf(ErrCopyRequired, "%s: the conversion needs a copy, and adapters.ZeroCopyOnly() forbids one", why)
	}
	return true, nil
}

// Report stores copied in Copied, if the caller asked for it. A conversion calls it once, when
// it has succeeded, and not at all when it fails.
func (o Options) Report(copied bool) {
	if o.Copied != nil {
		*o.Copied = copied
	}
}

// Share finishes a conversion that can always share memory (the From functions of adapters
// whose ecosystem values are plain memory): under the default policy and CopyNever it returns t
// itself; under CopyAlways it returns a C-order copy in Go memory (flagged core.FlagIsCopied)
// and lets go of t. ReportCopy reports which; when the copy fails, it is left as it was.
func Share(t *core.Tensor, opts ...Option) (*core.Tensor, error) {
	o := Apply(opts...)
	copied, err := o.Choose(true, "")
	if err != nil {
		return t, err
	}
	if !copied {
		o.Report(false)
		return t, nil
	}
	defer t.Release()
	c, err := memory.Contiguous(t)
	if err != nil {
		return nil, err
	}
	o.Report(true)
	return c, nil
}
