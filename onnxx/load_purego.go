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

// invoke calls the C function fn with integer and pointer arguments and returns its result.
// Pointers passed as uintptr(unsafe.Pointer(p)) in the call expression stay valid for the call
// (go:uintptrescapes, as for purego.SyscallN).
//
//go:uintptrescapes
func invoke(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// invokeArgs calls fn with the arguments in args, a slice the caller keeps (on the heap, reused
// from call to call) so that the call allocates nothing. Pointers among the arguments must be to
// memory that stays where it is and alive for the call (the heap, C memory), which the caller
// ensures.
func invokeArgs(fn uintptr, args []uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
