//go:build !linux

package ggufx

import "testing"

// cpuClock reports nothing where the thread's CPU clock is not read (see cpuclock_linux_test.go).
func cpuClock(b *testing.B) (report func()) { return func() {} }

// freshFloats is make where memory is not mapped by hand (see cpuclock_linux_test.go).
func freshFloats(n int) (y []float32, free func(), err error) {
	return make([]float32, n), func() {}, nil
}
