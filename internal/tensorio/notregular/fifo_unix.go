//go:build unix

package notregular

import "syscall"

// writeNonblock lets opening a named pipe for writing fail at once when no one reads it.
const writeNonblock = syscall.O_NONBLOCK

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
