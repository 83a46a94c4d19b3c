//go:build linux && (amd64 || arm64) && !purego

package ccall

import (
	"unsafe"

	"github.com/ebitengine/purego"
)

// Trampoline reports how calls are made: "asm" here, "purego" where they go through
// purego.SyscallN.
const Trampoline = "asm"

// trampolineABI0 is the address of the trampoline (call_linux_$GOARCH.s), which runs on the
// system stack: it loads the C argument registers (and, on amd64, the stack slots of a7 and a8)
// from a frame, calls frame.fn and stores its result in frame.r.
var trampolineABI0 uintptr

// cgocall is runtime.cgocall, which purego reaches the same way (the runtime keeps it
// linkname-able for purego: go.dev/issue/67401): it leaves the goroutine's P as a system call
// does, switches to the system stack and calls fn(arg) with the C ABI. With CGO_ENABLED=0,
// purego's fakecgo sets up what it needs.
//
// arg does not escape: the goroutine's stack cannot move while it is in the call (the collector
// does not shrink the stack of a goroutine in a system call), and no callee calls back into Go
// (see the package rules), so a frame on the caller's stack is valid for the whole call.
//
//go:linkname cgocall runtime.cgocall
//go:noescape
func cgocall(fn uintptr, arg unsafe.Pointer) int32

// call runs f on the trampoline.
func (f *frame) call(int) uintptr {
	if f.fn == 0 {
		panic(errNilFunction)
	}
	cgocall(trampolineABI0, unsafe.Pointer(f))
	return f.r
}

// callMany calls fn with more than MaxArgs arguments.
func callMany(fn uintptr, args []uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
