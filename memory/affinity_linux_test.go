package memory_test

import (
	"runtime"
	"syscall"
	"unsafe"
)

// cpuMask is a sched_setaffinity mask of up to 1024 processors.
type cpuMask [16]uint64

func getAffinity() (cpuMask, bool) {
	var m cpuMask
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	return m, e == 0
}

func setAffinity(m *cpuMask) bool {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	return e == 0
}

// allowedCPUs lists the processors this process may run on.
func allowedCPUs() []int {
	m, ok := getAffinity()
	if !ok {
		return nil
	}
	var cpus []int
	for i := range len(m) * 64 {
		if m[i/64]&(1<<(i%64)) != 0 {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// onCPU runs f on the calling goroutine with its thread bound to processor cpu (the goroutines f
// starts run wherever the scheduler puts them), then gives the thread its mask back. A cpu
// below 0, or a mask the system refuses, runs f unbound.
func onCPU(cpu int, f func()) {
	if cpu < 0 {
		f()
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, ok := getAffinity()
	var one cpuMask
	one[cpu/64] = 1 << (cpu % 64)
	if !ok || !setAffinity(&one) {
		f()
		return
	}
	defer setAffinity(&old)
	f()
}
