package ggufx

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// cpuClock locks the benchmark's goroutine to its thread and returns a function that reports
// the thread's CPU time per iteration (user and system: page faults included) as "cpu-ns/op":
// on a machine shared with other work, a steadier figure than the wall clock. It measures the
// calling thread only: run the benchmark with -cpu 1, so that the work stays on it.
func cpuClock(b *testing.B) (report func()) {
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		used := threadCPU() - start
		runtime.UnlockOSThread()
		if b.N > 0 {
			b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
		}
	}
}

func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
