package numpyx

import (
	"os"

	"github.com/dlpack-go/dlpack/internal/tensorio"
)

// openRegular opens the file called name for reading and returns it with its size, or refuses it
// with ErrNotRegularFile when it is anything but a regular file, without blocking on a named pipe
// (see tensorio.OpenRegular, which every file format of this module opens through).
func openRegular(name string) (*os.File, int64, error) {
	return tensorio.OpenRegular(name, "numpyx", ErrNotRegularFile)
}
