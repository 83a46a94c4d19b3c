package ggufx

import (
	"runtime"
	"testing"
	"unsafe"

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

// freshFloats maps n float32s of new anonymous memory, as C's malloc does for a buffer this
// large (glibc maps every allocation above its mmap threshold, at most 32 MiB, and unmaps it on
// free): the pages are faulted in as they are first written. free unmaps them.
func freshFloats(n int) (y []float32, free func(), err error) {
	b, err := unix.Mmap(-1, 0, 4*n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, err
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n), func() { unix.Munmap(b) }, nil
}
