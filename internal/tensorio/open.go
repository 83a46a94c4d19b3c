package tensorio

import (
	"fmt"
	"os"
)

// OpenRegular opens the file called name for reading and returns it with its size, or refuses it
// with a *NotRegularError wrapping notRegular when it is anything but a regular file (a named
// pipe, a directory, a device, a socket). Messages start with pkg ("numpyx", "safetensorsx",
// ...); with pkg empty, errors from the system are returned as they are.
//
// It opens without blocking (O_NONBLOCK where the system has it): a plain open of a named pipe
// nobody writes to waits forever for a writer, so the mode is checked on the open descriptor
// instead, which also leaves no window between a check by name and the open. The flag changes
// nothing for regular files, and reads of them never return EAGAIN. Every file-format package
// and cmd/tensorinfo open through it, so that none of them can hang on such a path.
func OpenRegular(name, pkg string, notRegular error) (*os.File, int64, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, prefixed(pkg, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, prefixed(pkg, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, &NotRegularError{Pkg: pkg, Name: name, Kind: FileKind(fi.Mode()), Sentinel: notRegular}
	}
	return f, fi.Size(), nil
}

func prefixed(pkg string, err error) error {
	if pkg == "" {
		return err
	}
	return fmt.Errorf("%s: %w", pkg, err)
}

// NotRegularError is OpenRegular's refusal of a path that is not a regular file: "numpyx: p is a
// named pipe (FIFO), not a regular file". It matches Sentinel under errors.Is; a caller with its
// own wording takes Kind from it (errors.As).
type NotRegularError struct {
	Pkg, Name string
	Kind      string // FileKind's words: "a named pipe (FIFO)", "a directory", ...
	Sentinel  error
}

func (e *NotRegularError) Error() string {
	msg := fmt.Sprintf("%s is %s, not a regular file", e.Name, e.Kind)
	if e.Pkg == "" {
		return msg
	}
	return e.Pkg + ": " + msg
}

// Unwrap returns Sentinel.
func (e *NotRegularError) Unwrap() error { return e.Sentinel }
