//go:build !purego

package adapters

import "unsafe"

// haveStrip32 says whether transposeStrip32 may run: the CPU has AVX and the operating system
// saves the YMM registers (CPUID leaf 1: OSXSAVE and AVX; XCR0: SSE and AVX state). Tests turn
// it off to cover the portable path.
var haveStrip32 = func() bool {
	const osxsave, avx = 1 << 27, 1 << 28
	if max, _, _, _ := cpuid(0, 0); max < 1 {
		return false
	}
	_, _, c, _ := cpuid(1, 0)
	if c&osxsave == 0 || c&avx == 0 {
		return false
	}
	xcr0, _ := xgetbv0()
	return xcr0&6 == 6
}()

// transposeStrip32 transposes blocks 8×8 blocks of 4-byte words side by side: for block b,
// column k (0..7) of the block is the 8 consecutive words at src + (8b+k)·sCol, and it becomes
// word k of each of the 8 rows dst + r·dRow + 32b (r = 0..7). dRow and sCol are in bytes and may
// be negative. Written in assembly with AVX: 8 loads, 24 shuffles and 8 stores per block.
//
//go:noescape
func transposeStrip32(dst, src unsafe.Pointer, blocks, dRow, sCol int)

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv0() (a, d uint32)
