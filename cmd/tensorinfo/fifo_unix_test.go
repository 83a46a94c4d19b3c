//go:build unix

package main

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// syscallNonblock lets opening a named pipe for writing fail at once when no one reads it.
const syscallNonblock = syscall.O_NONBLOCK

func mkfifo(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o644)) }
