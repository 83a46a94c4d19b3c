//go:build !(linux && (amd64 || arm64))

package cuda

import (
	"errors"
	"runtime"
)

const libraryName = "libcuda.so.1"

// openLibrary fails: this package binds the driver only on linux/amd64 and linux/arm64.
func openLibrary() (uintptr, error) {
	return 0, errors.New("the CUDA driver binding is not built for " + runtime.GOOS + "/" + runtime.GOARCH)
}

func lookup(uintptr, string) (uintptr, error) { return 0, errors.New("no driver library") }

func callLibrary(uintptr, ...uintptr) Result { return ErrorNotInitialized }
