// Package errstest holds an adapter's error messages to dlpack-go's rule in its tests (what was
// wrong leads, each package prefix appears once, errors.Is still matches the sentinels): one table
// of refusals, each provoked, matched with errors.Is and read.
package errstest

import (
	"errors"
	"regexp"
	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// Generic are the sentinels of core and memory, whose text must not lead a message. The
// sentinels of adapters (ErrCopyRequired, ErrCast; ErrUnsupported is memory's) are held to the
// rule by each case that wants them (Case.Want), so that this package needs nothing above memory.
var Generic = []error{
	core.ErrInvalid, core.ErrNdim, core.ErrShape, core.ErrStrides, core.ErrOverflow, core.ErrNullData,
	core.ErrDType, core.ErrDevice, core.ErrVersion, core.ErrBounds, core.ErrNil, core.ErrReadOnly,
	core.ErrNotContiguous, core.ErrNotHost, core.ErrReleased, core.ErrNotViewable, core.ErrTypeMismatch,
	core.ErrSubByte, core.ErrImported, core.ErrArgument, core.ErrTooLarge, core.ErrOverlap,
	memory.ErrUnsupported,
}

// Case is one refusal: Err provokes it, and its error must match Want.
type Case struct {
	Name string
	Want error
	Err  func() error
}

// Run provokes every case and checks that its error matches Want, that its message follows
// errs.Check with Generic, Want and the package's own sentinels, and that it starts with lead (a
// regular expression such as `^gonumx: `; empty for no check).
func Run(t *testing.T, lead string, cases []Case, sentinels ...error) {
	t.Helper()
	all := append(append([]error(nil), Generic...), sentinels...)
	var re *regexp.Regexp
	if lead != "" {
		re = regexp.MustCompile(lead)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			err := tc.Err()
			if err == nil {
				t.Fatalf("no error")
			}
			if !errors.Is(err, tc.Want) {
				t.Errorf("%v does not match %v", err, tc.Want)
			}
			if bad := errs.Check(err.Error(), append(all[:len(all):len(all)], tc.Want)...); bad != nil {
				t.Error(bad)
			}
			if re != nil && !re.MatchString(err.Error()) {
				t.Errorf("%q does not start as %s", err, lead)
			}
		})
	}
}

// Check is errs.Check of err's message with Generic and sentinels.
func Check(err error, sentinels ...error) error {
	return errs.CheckErr(err, append(append([]error(nil), Generic...), sentinels...)...)
}
