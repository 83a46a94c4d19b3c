//go:build linux

package onnxx_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// captureStderr runs f with file descriptor 2 (where ORT's C++ logger writes) redirected to a
// file, and returns what was written.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer tmp.Close()
	saved, err := syscall.Dup(2)
	require.NoError(t, err)
	require.NoError(t, syscall.Dup3(int(tmp.Fd()), 2, 0))
	func() {
		defer func() {
			require.NoError(t, syscall.Dup3(saved, 2, 0))
			syscall.Close(saved)
		}()
		f()
	}()
	b, err := os.ReadFile(tmp.Name())
	require.NoError(t, err)
	return string(b)
}
