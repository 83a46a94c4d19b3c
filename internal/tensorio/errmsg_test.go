package tensorio_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
)

// TestErrorMessages provokes tensorio's refusals and holds each message to the module's rule:
// what was wrong first (tensorio's messages leave the package prefix to their callers), each
// package prefix once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	cases := []struct {
		name string
		want error
		lead string
		err  func() error
	}{
		{"ReplaceFile in a missing directory", fs.ErrNotExist, `^pkg: `, func() error {
			return tensorio.ReplaceFile("pkg", filepath.Join(t.TempDir(), "none", "x"), func(*os.File) error { return nil })
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.NoError(t, errs.Check(err.Error(), core.ErrInvalid, core.ErrOverflow))
			assert.Regexp(t, tc.lead, err.Error())
		})
	}
}
