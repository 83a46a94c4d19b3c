//go:build !(darwin || linux)

package ccall

import "runtime"

// Trampoline reports how calls are made: "none" on systems other than linux and darwin (the ones
// where onnxx opens ONNX Runtime, and where purego works without cgo), where every call panics:
// nothing there can have given the caller a C function to call.
const Trampoline = "none"

func (f *frame) call(int) uintptr { panic(unsupported) }

func callMany(uintptr, []uintptr) uintptr { panic(unsupported) }

var unsupported = "ccall: no C calls on " + runtime.GOOS + "/" + runtime.GOARCH
