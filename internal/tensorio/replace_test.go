package tensorio_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/tensorio"
)

// ReplaceFile renames a complete new file over the old one; a failing write leaves the old file
// and nothing else; errors of the file system say whose they are.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.bin")
	require.NoError(t, os.WriteFile(name, []byte("old"), 0o600))

	boom := errors.New("boom")
	err := tensorio.ReplaceFile("pkg", name, func(f *os.File) error {
		_, err := f.WriteString("half")
		require.NoError(t, err)
		return boom
	})
	require.Same(t, boom, err, "the write's error comes back as it is")
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the new file is removed")

	require.NoError(t, tensorio.ReplaceFile("pkg", name, func(f *os.File) error {
		_, err := f.WriteString("new")
		return err
	}))
	b, err = os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	info, err := os.Stat(name)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)

	err = tensorio.ReplaceFile("pkg", filepath.Join(dir, "no", "such", "dir"), func(*os.File) error { return nil })
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "pkg: ")
}
