package mmap_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/mmap"
)

// TestMapSharesFile: the mapping holds the file's bytes, sees later writes to the file, and
// outlives the *os.File.
func TestMapSharesFile(t *testing.T) {
	if !mmap.Supported {
		t.Skip("no memory maps on this system")
	}
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("hello, map"), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	b, err := mmap.Map(f, 10)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, "hello, map", string(b))
	require.NoError(t, os.WriteFile(path, []byte("HELLO"), 0o644)) // truncates to 5, then writes
	assert.Equal(t, "HELLO", string(b[:5]))
	require.NoError(t, mmap.Unmap(b))

	_, err = mmap.Map(f, 0)
	require.Error(t, err)
}
