package tensorio

import (
	"fmt"
	"os"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// OpenRegular opens the file called name for reading and returns it with its size, or refuses it
// with an error wrapping notRegular when it is anything but a regular file (a named pipe, a
// directory, a device, a socket). Messages start with pkg ("numpyx", "safetensorsx", ...).
//
// It opens without blocking (O_NONBLOCK where the system has it): a plain open of a named pipe
// nobody writes to waits forever for a writer, so the mode is checked on the open descriptor
// instead, which also leaves no window between a check by name and the open. The flag changes
// nothing for regular files, and reads of them never return EAGAIN. Every file-format package
// and cmd/tensorinfo open through it, so that none of them can hang on such a path.
func OpenRegular(name, pkg string, notRegular error) (*os.File, int64, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", pkg, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", pkg, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, errs.Errorf(notRegular, "%s: %s is %s, not a regular file", pkg, name, FileKind(fi.Mode()))
	}
	return f, fi.Size(), nil
}
