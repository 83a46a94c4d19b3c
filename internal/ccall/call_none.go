//go:build !(darwin || freebsd || linux || netbsd || windows)

package ccall

import "runtime"

// Trampoline reports how calls are made: "none" on platforms purego does not support, where
// every call panics (nothing there can have given the caller a C function to call).
const Trampoline = "none"

func (f *frame) call(int) uintptr { panic(unsupported) }

func callMany(uintptr, []uintptr) uintptr { panic(unsupported) }

var unsupported = "ccall: no C calls on " + runtime.GOOS + "/" + runtime.GOARCH
