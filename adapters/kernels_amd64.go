//go:build !purego

package adapters

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

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv0() (a, d uint32)
