package core

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
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
// or less where the process's control group has a memory limit (see cgroupLimit); 0 if unknown.
func systemMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	unit := max(uint64(si.Unit), 1)
	ram, swap := uint64(si.Totalram)*unit, uint64(si.Totalswap)*unit
	total := ram + swap
	if lim := cgroupLimit("/proc/self/cgroup", "/sys/fs/cgroup", swap); lim > 0 && lim < total {
		total = lim
	}
	if total > math.MaxInt64 {
		return 0
	}
	return int64(total)
}

// cgroupLimit is the memory plus swap that the control group named in the file self (as
// /proc/self/cgroup) allows, from the hierarchy mounted at root: cgroup v2's memory.max and
// memory.swap.max (at root or, on hybrid systems, at root/unified), or v1's
// memory.limit_in_bytes and memory.memsw.limit_in_bytes (at root/memory), each the least along
// the path up to the root. Swap counts at most the system's swap. 0 means no limit found: no
// file, or values that mean none ("max", or v1's 2^63 rounded to a page).
func cgroupLimit(self, root string, swap uint64) uint64 {
	raw, err := os.ReadFile(self)
	if err != nil {
		return 0
	}
	best := uint64(0)
	take := func(lim uint64) {
		if lim > 0 && (best == 0 || lim < best) {
			best = lim
		}
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		switch {
		case f[1] == "": // v2
			for _, base := range []string{root, filepath.Join(root, "unified")} {
				mem, ok := leastAlong(base, f[2], "memory.max")
				if !ok {
					continue
				}
				sw, ok := leastAlong(base, f[2], "memory.swap.max")
				if !ok || sw > swap {
					sw = swap
				}
				if mem != noLimit {
					take(mem + sw)
				}
				break
			}
		case slices.Contains(strings.Split(f[1], ","), "memory"): // v1
			base := filepath.Join(root, "memory")
			mem, ok := leastAlong(base, f[2], "memory.limit_in_bytes")
			if !ok || mem == noLimit {
				continue
			}
			lim := mem + swap
			if memsw, ok := leastAlong(base, f[2], "memory.memsw.limit_in_bytes"); ok && memsw < lim {
				lim = memsw
			}
			take(lim)
		}
	}
	return best
}

// noLimit stands for a limit that is none: "max", or anything from 2^62 up.
const noLimit = uint64(1) << 62

// leastAlong reads the limit called name in the group at base+path and in each of its
// ancestors up to base, and returns the least (noLimit for none); ok is false when the group's
// own file is missing.
func leastAlong(base, path, name string) (least uint64, ok bool) {
	least = noLimit
	dir := filepath.Join(base, path)
	for first := true; ; first = false {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err != nil && first:
			return 0, false
		case err == nil:
			if v, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64); err == nil && v < least {
				least = v
			}
		}
		if dir == base || len(dir) <= len(base) {
			return least, true
		}
		dir = filepath.Dir(dir)
	}
}
