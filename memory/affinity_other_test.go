//go:build !linux

package memory_test

// allowedCPUs is unknown here: the benchmark runs unbound.
func allowedCPUs() []int { return nil }

func onCPU(cpu int, f func()) { f() }
