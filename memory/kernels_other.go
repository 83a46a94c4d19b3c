//go:build !amd64 || purego

package memory

import "unsafe"

// No assembly kernels here: the transposes, contiguous copies and float casts use their
// portable paths.
var haveStrip32, haveF16C, haveAVX512 = false, false, false

// downWalk is false here: only the assembly tile kernels walk down the columns (see walkDown).
var downWalk = false

// preZen4 is false here: it steers the assembly kernels only (see cachedMax).
const preZen4 = false

// avx512Available: no AVX-512 kernels here.
const avx512Available = false

func transposeStrip32(dst, src unsafe.Pointer, blocks, dRow, sCol int) {
	panic("memory: transposeStrip32 without an assembly kernel")
}

func cvtFloat32ToFloat16(dst *uint16, src *float32, n int) {
	panic("memory: cvtFloat32ToFloat16 without an assembly kernel")
}

func cvtFloat16ToFloat32(dst *float32, src *uint16, n int) {
	panic("memory: cvtFloat16ToFloat32 without an assembly kernel")
}

func transposeTiles32(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles32 without an assembly kernel")
}

func transposeTiles32NT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles32NT without an assembly kernel")
}

func transposeTiles64(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles64 without an assembly kernel")
}

func transposeTiles64NT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles64NT without an assembly kernel")
}

func transposeTiles64L(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles64L without an assembly kernel")
}

func copyRowsNT(dst, src unsafe.Pointer, rows, n, dRow, sRow int) {
	panic("memory: copyRowsNT without an assembly kernel")
}

func copyCached(dst, src unsafe.Pointer, n int) {
	panic("memory: copyCached without an assembly kernel")
}

func cvtFloat64ToFloat32(dst *float32, src *float64, n int) {
	panic("memory: cvtFloat64ToFloat32 without an assembly kernel")
}

func cvtFloat32ToFloat64(dst *float64, src *float32, n int) {
	panic("memory: cvtFloat32ToFloat64 without an assembly kernel")
}

func cvtFloat64ToFloat32NT(dst *float32, src *float64, n int) {
	panic("memory: cvtFloat64ToFloat32NT without an assembly kernel")
}

func cvtFloat32ToFloat64NT(dst *float64, src *float32, n int) {
	panic("memory: cvtFloat32ToFloat64NT without an assembly kernel")
}

func cvtFloat32ToFloat16NT(dst *uint16, src *float32, n int) {
	panic("memory: cvtFloat32ToFloat16NT without an assembly kernel")
}

func cvtFloat16ToFloat32NT(dst *float32, src *uint16, n int) {
	panic("memory: cvtFloat16ToFloat32NT without an assembly kernel")
}

// lastLevelCache is unknown here (it only steers the assembly kernels).
const lastLevelCache = 0

func storeFence() {}

func gather2x64(dst, src unsafe.Pointer, n int) {
	panic("memory: gather2x64 without an assembly kernel")
}

func gather2x32(dst, src unsafe.Pointer, n int) {
	panic("memory: gather2x32 without an assembly kernel")
}

func transposeTiles32Z(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles32Z without an assembly kernel")
}

func transposeTiles32ZNT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles32ZNT without an assembly kernel")
}

func transposeTiles64Z(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles64Z without an assembly kernel")
}

func transposeTiles64ZNT(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int) {
	panic("memory: transposeTiles64ZNT without an assembly kernel")
}
