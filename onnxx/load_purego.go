//go:build (linux || darwin) && (amd64 || arm64)

package onnxx

import "github.com/ebitengine/purego"

// openLibrary opens the ONNX Runtime library at path and returns its OrtGetApiBase; the process
// keeps the library open. onnxruntime_go (package ortgo) opening the same path gets the same copy.
func openLibrary(path string) (uintptr, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0, err
	}
	return purego.Dlsym(h, "OrtGetApiBase")
}
