//go:build amd64 && !purego

package memory

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAMDL3 reads leaf 0x80000006's L3 field as it is reported on real chips and on the VMs
// this project runs on, whose figures count caches one core cannot reach.
func TestAMDL3(t *testing.T) {
	for _, tc := range []struct {
		name string
		edx  uint32
		want int
	}{
		{"none", 0x00000000, 0},
		{"Zen 1 CCX, 8 MiB", 16<<18 | 0x9140, 8 << 20},
		{"Zen 4 CCD, 32 MiB", 64<<18 | 0x9140, 32 << 20},
		{"3D V-Cache CCD, 96 MiB", 192<<18 | 0x9140, 96 << 20},
		{"2-core Zen 4 VM, 320 MiB", 640<<18 | 0x9140, maxCoreL3},
		{"2-core Zen 5 VM, 508 MiB", 0x0fe09140, maxCoreL3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, amdL3(tc.edx))
		})
	}
}

// TestLastLevelCacheBounded checks this CPU's figure: an AMD core never shares more than
// maxCoreL3, and a known last-level cache holds at least 256 KiB.
func TestLastLevelCacheBounded(t *testing.T) {
	if vendor, _ := cpuVendor(); vendor == "AuthenticAMD" {
		require.LessOrEqual(t, lastLevelCache, maxCoreL3)
	}
	if lastLevelCache != 0 {
		require.GreaterOrEqual(t, lastLevelCache, 256<<10)
	}
	t.Logf("last-level cache %d MiB, cachedMax %d MiB", lastLevelCache>>20, cachedMax>>20)
}

// TestFamilyOf decodes the family of CPUID leaf 1's EAX as real chips report it: downWalk turns
// on for AMD's families 17h and 19h.
func TestFamilyOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		eax    uint32
		family uint32
	}{
		{"Zen 2 (EPYC 7002)", 0x00830f10, 0x17},
		{"Zen 3 (EPYC 7003, this project's VM)", 0x00a00f11, 0x19},
		{"Zen 4 (EPYC 9004)", 0x00a10f11, 0x19},
		{"Zen 5 (EPYC 9005)", 0x00b00f21, 0x1a},
		{"Intel Cascade Lake", 0x00050657, 6},
		{"Intel Pentium 4 (base family 0xF)", 0x00000f29, 0xf},
	} {
		require.Equal(t, tc.family, familyOf(tc.eax), tc.name)
	}
}

// TestCachedMax pins the share of the last-level cache that results may take and still be
// written through it: 1/8 on preZen4 CPUs (4 MiB of a Zen 3's 32 MiB), 3/8 elsewhere.
func TestCachedMax(t *testing.T) {
	require.Equal(t, wantCachedMax(lastLevelCache), cachedMax)
	if vendor, _ := cpuVendor(); vendor != "AuthenticAMD" && vendor != "HygonGenuine" {
		require.False(t, preZen4, "preZen4 is for AMD's and Hygon's cores only")
	}
}

// wantCachedMax is the cachedMax that a last-level cache of llc bytes gives on this CPU.
func wantCachedMax(llc int) int {
	switch {
	case llc <= 0:
		return 8 << 20
	case preZen4:
		return llc / 8
	}
	return llc * 3 / 8
}
