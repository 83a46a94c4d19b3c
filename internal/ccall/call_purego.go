//go:build (darwin || linux) && (purego || darwin || !(amd64 || arm64))

package ccall

import "github.com/ebitengine/purego"

// Trampoline reports how calls are made: "purego" here (purego.SyscallN), "asm" on linux/amd64
// and linux/arm64 without the purego build tag.
const Trampoline = "purego"

// call passes f's first n arguments to purego.SyscallN.
func (f *frame) call(n int) uintptr {
	if f.fn == 0 {
		panic(errNilFunction)
	}
	r, _, _ := purego.SyscallN(f.fn, f.a[:n]...)
	return r
}

func callMany(fn uintptr, args []uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
