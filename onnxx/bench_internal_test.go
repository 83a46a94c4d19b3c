//go:build (linux || darwin) && (amd64 || arm64)

package onnxx

import (
	"testing"

	"github.com/dlpack-go/dlpack/internal/ccall"
	"github.com/ebitengine/purego"
)

// BenchmarkCall: the cost of one call of ORT's C API, the floor under every run
// (OrtApi::ReleaseStatus(NULL), which does nothing), side by side: through package ccall as the
// run path calls it (a fixed-arity call; the trampoline on linux/amd64 and linux/arm64), and
// through purego.SyscallN with the arguments in reused heap memory, as the run path called it
// before ccall.
func BenchmarkCall(b *testing.B) {
	a, err := loaded()
	if err != nil {
		b.Fatal(err)
	}
	f := a.f(fnReleaseStatus)
	b.Run("ccall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ccall.Call1(f, 0)
		}
	})
	b.Run("purego", func(b *testing.B) {
		args := make([]uintptr, 1)
		b.ReportAllocs()
		for b.Loop() {
			purego.SyscallN(f, args...)
		}
	})
}
