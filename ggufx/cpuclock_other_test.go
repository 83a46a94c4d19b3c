//go:build !linux

package ggufx

import "testing"

// cpuClock reports nothing where the thread's CPU clock is not read (see cpuclock_linux_test.go).
func cpuClock(b *testing.B) (report func()) { return func() {} }
