package memory

import (
	"math"
	"syscall"
	"unsafe"

	"github.com/dlpack-go/dlpack/memory/internal/cgroup"
)

// canMap says whether NewUninit can map memory here.
const canMap = true

// mapBlock maps size bytes of anonymous private memory (size a multiple of the alignment). With
// huge, the block is aligned to 2 MiB, by mapping 2 MiB more and unmapping the ends, and
// advised for transparent huge pages.
func mapBlock(size int64, huge bool) (unsafe.Pointer, bool) {
	n := uintptr(size)
	if huge {
		n += hugeAlign
	}
	addr, _, errno := syscall.Syscall6(syscall.SYS_MMAP, 0, n, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS, ^uintptr(0), 0)
	if errno != 0 {
		return nil, false
	}
	if huge {
		start := (addr + hugeAlign - 1) &^ (hugeAlign - 1)
		if head := start - addr; head > 0 {
			munmap(addr, head)
		}
		if tail := addr + n - (start + uintptr(size)); tail > 0 {
			munmap(start+uintptr(size), tail)
		}
		addr = start
		// advice only: a kernel without transparent huge pages refuses it, and small pages do
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, uintptr(size), syscall.MADV_HUGEPAGE)
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr)), true
}

// unmapBlock gives a block back to the system.
func unmapBlock(b block) { munmap(uintptr(b.base), uintptr(b.size)) }

func munmap(addr, n uintptr) {
	// munmap of a range this package mapped fails only for arguments it never passes
	_, _, _ = syscall.Syscall(syscall.SYS_MUNMAP, addr, n, 0)
}

// systemMemory is the memory and swap this process may have, in bytes: the machine's (sysinfo),
// or less where the process's control group has a memory limit (see package cgroup); 0 if unknown.
func systemMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	unit := max(uint64(si.Unit), 1)
	ram, swap := uint64(si.Totalram)*unit, uint64(si.Totalswap)*unit
	total := ram + swap
	if lim := cgroup.Limit(swap); lim > 0 && lim < total {
		total = lim
	}
	if total > math.MaxInt64 {
		return 0
	}
	return int64(total)
}
