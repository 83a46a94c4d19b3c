//go:build !((linux || darwin) && (amd64 || arm64))

package onnxx

import (
	"errors"
	"runtime"
)

// openLibrary fails: this package calls ONNX Runtime through purego on linux and darwin, amd64
// and arm64 only.
func openLibrary(string) (uintptr, error) {
	return 0, errors.New("onnxx calls ONNX Runtime only on linux and darwin (amd64, arm64), not " + runtime.GOOS + "/" + runtime.GOARCH)
}
