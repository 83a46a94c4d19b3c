//go:build unix

package interop

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used, or 0 where it cannot be read.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
