package numpyx

import (
	"fmt"
	"os"

	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
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
		return nil, 0, errs.Errorf(ErrNotRegularFile, "numpyx: %s is %s, not a regular file", name, tensorio.FileKind(fi.Mode()))
	}
	return f, fi.Size(), nil
}
