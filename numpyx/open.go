package numpyx

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// openRegular opens the file called name for reading and returns it with its size, or refuses it
// with ErrNotRegularFile when it is anything but a regular file. It opens without blocking
// (O_NONBLOCK where the system has it), so that a named pipe nobody writes to is refused instead
// of waiting forever for a writer; the flag changes nothing for regular files.
func openRegular(name string) (*os.File, int64, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("numpyx: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("numpyx: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, errs.Errorf(ErrNotRegularFile, "numpyx: %s is %s, not a regular file", name, fileKind(fi.Mode()))
	}
	return f, fi.Size(), nil
}

// fileKind names the kind of file mode m is, for errors.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return "a file of mode " + m.String()
}
