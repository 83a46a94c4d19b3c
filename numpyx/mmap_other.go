//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package numpyx

import (
	"io"
	"os"

	"github.com/dlpack-go/dlpack/core"
)

// mmapSupported is false here: Map reads the file instead (or refuses under ZeroCopyOnly).
const mmapSupported = false

func mapFile(f *os.File, size int64, h Header) (*core.Tensor, error) {
	return readData(io.NewSectionReader(f, h.DataOffset, size-h.DataOffset), h, size-h.DataOffset)
}
