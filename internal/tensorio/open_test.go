package tensorio_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/tensorio"
	"github.com/dlpack-go/dlpack/internal/tensorio/notregular"
)

var errNotRegular = errors.New("test: not a regular file")

func TestOpenRegular(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.bin")
	require.NoError(t, os.WriteFile(path, []byte("12345"), 0o644))
	f, size, err := tensorio.OpenRegular(path, "test", errNotRegular)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, int64(5), size)
	b := make([]byte, 5)
	_, err = f.ReadAt(b, 0)
	require.NoError(t, err)
	assert.Equal(t, "12345", string(b))
}

func TestOpenRegularRefusesOthers(t *testing.T) {
	paths, fifo := notregular.Paths(t, "x.bin")
	for kind, path := range paths {
		t.Run(kind, func(t *testing.T) {
			err := notregular.Within(t, fifo, func() error {
				f, _, err := tensorio.OpenRegular(path, "test", errNotRegular)
				if f != nil {
					f.Close()
				}
				return err
			})
			require.ErrorIs(t, err, errNotRegular)
			assert.Equal(t, fmt.Sprintf("test: %s is %s, not a regular file", path, kind), err.Error())
		})
	}
}

func TestOpenRegularMissing(t *testing.T) {
	_, _, err := tensorio.OpenRegular(filepath.Join(t.TempDir(), "nope"), "test", errNotRegular)
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.NotErrorIs(t, err, errNotRegular)
	assert.Contains(t, err.Error(), "test: ")
}

// With pkg empty, system errors come as they are and a refusal names only the path; the kind is
// there for a caller with its own wording.
func TestOpenRegularNoPrefix(t *testing.T) {
	dir := t.TempDir()
	_, _, err := tensorio.OpenRegular(dir, "", errNotRegular)
	var nr *tensorio.NotRegularError
	require.ErrorAs(t, err, &nr)
	assert.Equal(t, "a directory", nr.Kind)
	assert.Equal(t, dir+" is a directory, not a regular file", err.Error())
	missing := filepath.Join(dir, "nope")
	_, _, err = tensorio.OpenRegular(missing, "", errNotRegular)
	var pe *os.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, pe, err, "the system's error itself")
}
