//go:build !unix

package ortgo_test

import "time"

// cpuTime is not measured on this system: the cpu-ns/op metric reads 0.
func cpuTime() time.Duration { return 0 }
