//go:build !purego

package memory

import "unsafe"

// The assembly kernels of kernels_amd64.s, and whether this CPU may run them. AVX needs the CPU's
// support and the operating system's (CPUID leaf 1: OSXSAVE and AVX; XCR0: SSE and AVX state
// saved); F16C comes on top of AVX. Tests turn them off to cover the portable paths.
var haveStrip32, haveF16C = func() (avx, f16c bool) {
	const osxsave, avxBit, f16cBit = 1 << 27, 1 << 28, 1 << 29
	if max, _, _, _ := cpuid(0, 0); max < 1 {
		return false, false
	}
	_, _, c, _ := cpuid(1, 0)
	if c&osxsave == 0 || c&avxBit == 0 {
		return false, false
	}
	if xcr0, _ := xgetbv0(); xcr0&6 != 6 {
		return false, false
	}
	return true, c&f16cBit != 0
}()

// haveAVX512 says whether the CPU has AVX-512 Foundation and the operating system saves the
// state of its registers (XCR0: opmask, the upper halves of Z0..Z15, and Z16..Z31, besides SSE and
// AVX): the tile transposes then move whole 64-byte lines through Z registers
// (transposeTiles32Z, transposeTiles64Z). A variable so that tests can cover the AVX kernels on
// CPUs that have both.
var haveAVX512 = avx512Available

// avx512Available is what the CPU and the operating system allow (haveAVX512 may be turned off).
var avx512Available = func() bool {
	const avx512f = 1 << 16
	if !haveStrip32 {
		return false
	}
	if max, _, _, _ := cpuid(0, 0); max < 7 {
		return false
	}
	if _, b, _, _ := cpuid(7, 0); b&avx512f == 0 {
		return false
	}
	xcr0, _ := xgetbv0()
	return xcr0&0xe6 == 0xe6
}()

// downWalk says whether the non-temporal tile transposes walk down long source columns (see
// walkDown): on preZen4 CPUs, where it was measured faster; the CPUs that have AVX-512, Zen 4 and
// Zen 5 among them, and other vendors' keep the bands their kernels were measured with. A
// variable so that tests can cover both orders.
var downWalk = preZen4

// preZen4 reports whether this is one of AMD's cores of families 17h to 19h (Zen to Zen 3, and
// Hygon's) that lack AVX-512: the kind of the project's Zen 3 VM, where the tiles walk down the
// columns (downWalk) and results from 1/8 of the last-level cache up skip it (cachedMax).
var preZen4 = func() bool {
	if avx512Available {
		return false
	}
	vendor, _ := cpuVendor()
	if vendor != "AuthenticAMD" && vendor != "HygonGenuine" {
		return false
	}
	eax, _, _, _ := cpuid(1, 0)
	family := familyOf(eax)
	return family >= 0x17 && family <= 0x19
}()

// familyOf is the CPU family that CPUID leaf 1 reports in EAX: the base family, plus the extended
// family where the base is 0xF.
func familyOf(eax uint32) uint32 {
	family := eax >> 8 & 0xf
	if family == 0xf {
		family += eax >> 20 & 0xff
	}
	return family
}

// transposeStrip32 transposes blocks 8×8 blocks of 4-byte words side by side: for block b,
// column k (0..7) of the block is the 8 consecutive words at src + (8b+k)·sCol, and it becomes
// word k of each of the 8 rows dst + r·dRow + 32b (r = 0..7). dRow and sCol are in bytes and may
// be negative. Written in assembly with AVX: 8 loads, 24 shuffles and 8 stores per block.
//
//go:noescape
func transposeStrip32(dst, src unsafe.Pointer, blocks, dRow, sCol int)

// cvtFloat32ToFloat16 converts n float32 at src to float16 bits at dst, n a multiple of 8, with
// F16C's VCVTPS2PH rounding to nearest even: the same bits as toFloat16 for every input, NaNs
// included (quieted, sign and top payload bits kept).
//
//go:noescape
func cvtFloat32ToFloat16(dst *uint16, src *float32, n int)

// cvtFloat16ToFloat32 converts n float16 bits at src to float32 at dst with F16C's VCVTPH2PS,
// n a multiple of 8: exact, and NaNs come out quiet with their payload, as float16.Float32 does.
//
//go:noescape
func cvtFloat16ToFloat32(dst *float32, src *uint16, n int)

// transposeTiles32 transposes tiles 16×16 tiles of 4-byte words side by side: for tile b,
// column k (0..15) is the 16 consecutive words at src + (16b+k)·sCol, and it becomes word k of
// each of the 16 rows dst + r·dRow + 64b (r = 0..15). Each tile reads 16 whole 64-byte source
// lines and writes 16 whole destination lines (when aligned), as four 8×8 blocks of
// transposeStrip32's, ordered so that each source line is read, and each destination line
// written, in one go (its two halves back to back). transposeTiles32NT does the same with
// non-temporal stores, for destinations past the cache: it needs dst and dRow to be multiples of
// 64, and its caller calls storeFence when done with them. Those pay on every core measured
// (BenchmarkTransposeAgainstCopy), as memcpy (Go's, glibc's) writes whole lines non-temporally
// in 32-byte pieces.
// Both kernels park half a tile in their frame, 512-byte aligned (PARKAREA in kernels_amd64.s).
//
//go:noescape
func transposeTiles32(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

//go:noescape
func transposeTiles32NT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

// transposeTiles32Z and transposeTiles32ZNT are transposeTiles32 with AVX-512 (see haveAVX512):
// a tile is 16 loads of whole source lines, 64 shuffles of Z registers and 16 stores of whole
// destination lines, through the cache or, in transposeTiles32ZNT, with non-temporal stores,
// which skip reading the destination lines into the cache first; transposeTiles32ZNT needs dst
// and dRow to be multiples of 64, and its caller calls storeFence when done with them
// (transposeRange).
//
//go:noescape
func transposeTiles32Z(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

//go:noescape
func transposeTiles32ZNT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

// transposeTiles64Z and transposeTiles64ZNT are transposeTiles64 and transposeTiles64NT with
// AVX-512: a tile is 8 loads of whole lines, 24 shuffles and 8 stores of whole lines.
// transposeTiles64ZNT needs dst and dRow to be multiples of 64.
//
//go:noescape
func transposeTiles64Z(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

//go:noescape
func transposeTiles64ZNT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

// transposeTiles64 is transposeTiles32 for 8×8 tiles of 8-byte words (64 bytes a line too):
// for tile b, column k (0..7) is the 8 words at src + (8b+k)·sCol, and it becomes word k of the
// rows dst + r·dRow + 64b (r = 0..7). transposeTiles64NT does the same with non-temporal stores
// (dst and dRow multiples of 32), which pay here too, on one processor and on two.
//
//go:noescape
func transposeTiles64(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

//go:noescape
func transposeTiles64NT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

// transposeTiles64L is transposeTiles64NT for 64-byte aligned destination rows where the CPU has
// AVX but not AVX-512: it transposes the two 4×4 blocks of a pair of destination rows' halves
// before storing either, so that each destination line goes out whole, its two halves back to
// back, and leaves its write-combining buffer complete (transposeTiles64NT writes every line in
// two halves far apart, with 8 lines open at once). On AVX2-only CPUs this made the large float64
// permutation of BenchmarkNumPyCopies faster than both through the cache and transposeTiles64NT
// (figures in docs/benchmarks-history.md).
//
//go:noescape
func transposeTiles64L(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)

// gather2x64 and gather2x32 copy every other word, dst[i] = src[2i], for n words (a multiple
// of 4 and of 8), reading src[0 .. 2n-1]: AVX2 shuffles of whole source lines.
//
//go:noescape
func gather2x64(dst, src unsafe.Pointer, n int)

//go:noescape
func gather2x32(dst, src unsafe.Pointer, n int)

// storeFence orders the non-temporal stores before it before every store after it (SFENCE):
// the kernels that use them call it when done, before anyone else may read what they wrote.
func storeFence()

// copyRowsNT copies rows rows of n bytes (n a multiple of 64), row r from src + r·sRow to
// dst + r·dRow, with non-temporal stores: dst and dRow are multiples of 32, and the caller calls
// storeFence when done. It writes the blocks transposeStaged stages out to their destination.
//
//go:noescape
func copyRowsNT(dst, src unsafe.Pointer, rows, n, dRow, sRow int)

// copyCached copies n bytes, a multiple of 128, with ordinary AVX loads and stores.
//
//go:noescape
func copyCached(dst, src unsafe.Pointer, n int)

// cvtFloat64ToFloat32 converts n float64 (a multiple of 8) with VCVTPD2PS, which rounds as the
// MXCSR says (to nearest even, as Go leaves it): the bits of Go's float32(f), NaNs included.
// cvtFloat32ToFloat64 is the exact widening, VCVTPS2PD.
//
//go:noescape
func cvtFloat64ToFloat32(dst *float32, src *float64, n int)

//go:noescape
func cvtFloat32ToFloat64(dst *float64, src *float32, n int)

// cvtFloat64ToFloat32NT and cvtFloat32ToFloat64NT are the same conversions written with
// non-temporal stores and a store fence, for large results (see rowKernel): dst is 32-byte
// aligned, and n a multiple of 16 (narrowing) or of 8 (widening).
//
//go:noescape
func cvtFloat64ToFloat32NT(dst *float32, src *float64, n int)

//go:noescape
func cvtFloat32ToFloat64NT(dst *float64, src *float32, n int)

// cvtFloat32ToFloat16NT and cvtFloat16ToFloat32NT are cvtFloat32ToFloat16 and
// cvtFloat16ToFloat32 with non-temporal stores and a store fence: dst is 32-byte aligned, and n
// a multiple of 16 (narrowing) or of 8 (widening).
//
//go:noescape
func cvtFloat32ToFloat16NT(dst *uint16, src *float32, n int)

//go:noescape
func cvtFloat16ToFloat32NT(dst *float32, src *uint16, n int)

// lastLevelCache is the size in bytes of the CPU's last-level cache as CPUID reports it, the
// cache one core shares with its neighbours: the largest cache of the deterministic cache
// parameters (Intel: leaf 4; AMD and Hygon: leaf 0x8000001D, where the CPU has topology
// extensions, else leaf 0x80000006, at most maxCoreL3), or 0 if unknown. On AMD's chips of
// several core complexes, leaf 0x80000006 can report the L3 of the whole package, or whatever a
// hypervisor sums up: a 2-core Zen 4 VM reports 320 MiB there and 32 MiB in leaf 0x8000001D (as
// Linux does), and a 2-core Zen 5 VM reports 508 MiB there and nothing in leaf 0x8000001D (see
// amdL3).
var lastLevelCache = func() int {
	vendor, max0 := cpuVendor()
	switch vendor {
	case "AuthenticAMD", "HygonGenuine":
		ext, _, _, _ := cpuid(0x80000000, 0)
		const topologyExtensions = 1 << 22
		if _, _, c, _ := cpuid(0x80000001, 0); ext >= 0x8000001d && c&topologyExtensions != 0 {
			if size := largestCache(0x8000001d); size > 0 {
				return size
			}
		}
		if ext >= 0x80000006 {
			_, _, _, d := cpuid(0x80000006, 0)
			return amdL3(d)
		}
	case "GenuineIntel":
		if max0 >= 4 {
			return largestCache(4)
		}
	}
	return 0
}()

// maxCoreL3 is the most L3 cache one core of any AMD chip shares with its neighbours: the 96 MiB
// of a core complex with 3D V-Cache (Zen 3 to Zen 5; the plain complexes have 32 MiB).
const maxCoreL3 = 96 << 20

// amdL3 is the L3 size that leaf 0x80000006 reports in EDX (bits 31..18, in 512 KiB units), at
// most maxCoreL3: the leaf may count the caches of every core complex of the package, or of the
// host under a VM, none of which one core can fill.
func amdL3(edx uint32) int {
	return min(int(edx>>18)*512<<10, maxCoreL3)
}

// largestCache is the size of the largest cache that a deterministic cache parameters leaf
// (Intel's 4, AMD's 0x8000001D: the same layout) lists.
func largestCache(leaf uint32) int {
	best := 0
	for sub := uint32(0); sub < 16; sub++ {
		a, b, c, _ := cpuid(leaf, sub)
		if a&31 == 0 { // no more caches
			break
		}
		size := int(b>>22+1) * int(b>>12&0x3ff+1) * int(b&0xfff+1) * int(c+1)
		best = max(best, size)
	}
	return best
}

// cpuVendor is the CPU's vendor string and highest standard leaf (CPUID leaf 0).
func cpuVendor() (string, uint32) {
	max0, b, c, d := cpuid(0, 0)
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&[3]uint32{b, d, c})), 12)), max0
}

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv0() (a, d uint32)
