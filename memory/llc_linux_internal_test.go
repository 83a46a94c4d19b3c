//go:build linux && amd64 && !purego

package memory

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLastLevelCacheMatchesLinux compares lastLevelCache, read from CPUID, with the largest
// cache Linux lists for CPU 0 (which it reads from the same deterministic cache parameters
// leaves): on AMD, the older leaf 0x80000006 can report the L3 of a whole package or what a
// hypervisor sums up (320 MiB on a 2-core VM whose cores share 32 MiB), and cachedMax, a share of
// lastLevelCache, decides where copies, transposes and casts stop writing through the cache.
func TestLastLevelCacheMatchesLinux(t *testing.T) {
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*")
	largest := 0
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "size"))
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		mult := 1
		switch {
		case strings.HasSuffix(s, "K"):
			s, mult = strings.TrimSuffix(s, "K"), 1<<10
		case strings.HasSuffix(s, "M"):
			s, mult = strings.TrimSuffix(s, "M"), 1<<20
		}
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "%s/size", d)
		largest = max(largest, n*mult)
	}
	if largest == 0 {
		t.Skip("Linux lists no cache sizes for CPU 0 here (/sys/devices/system/cpu/cpu0/cache)")
	}
	require.Equal(t, largest, lastLevelCache, "Linux's largest cache against CPUID's")
	require.Equal(t, wantCachedMax(largest), cachedMax)
}
