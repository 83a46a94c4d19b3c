package onnxx

import "testing"

// BenchmarkCall: the cost of one call of ORT's C API through purego, the floor under every run
// (OrtApi::ReleaseStatus(NULL), which does nothing), with the arguments in reused heap memory as
// the run path passes them.
func BenchmarkCall(b *testing.B) {
	a, err := loaded()
	if err != nil {
		b.Fatal(err)
	}
	f := a.f(fnReleaseStatus)
	args := make([]uintptr, 1)
	b.ReportAllocs()
	for b.Loop() {
		invokeArgs(f, args)
	}
}
