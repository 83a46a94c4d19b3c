//go:build linux && (amd64 || arm64)

package cuda

import (
	"github.com/ebitengine/purego"
)

// libraryName is the driver library that the NVIDIA driver installs (never the SDK's stub).
const libraryName = "libcuda.so.1"

// openLibrary opens the driver library; the process keeps it open.
func openLibrary() (uintptr, error) {
	return purego.Dlopen(libraryName, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// lookup resolves one entry point.
func lookup(lib uintptr, name string) (uintptr, error) { return purego.Dlsym(lib, name) }

// callLibrary calls the C function fn with integer arguments and returns its int result (a
// CUresult); invoke keeps the pointers among them alive.
func callLibrary(fn uintptr, args ...uintptr) Result {
	r, _, _ := purego.SyscallN(fn, args...)
	return Result(int32(r))
}
