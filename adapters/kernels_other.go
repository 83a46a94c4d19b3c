//go:build !amd64 || purego

package adapters

import "unsafe"

// No assembly kernels here: transpose32 and the float16 casts use their portable paths.
var haveStrip32, haveF16C = false, false

func transposeStrip32(dst, src unsafe.Pointer, blocks, dRow, sCol int) {
	panic("adapters: transposeStrip32 without an assembly kernel")
}

func cvtFloat32ToFloat16(dst *uint16, src *float32, n int) {
	panic("adapters: cvtFloat32ToFloat16 without an assembly kernel")
}

func cvtFloat16ToFloat32(dst *float32, src *uint16, n int) {
	panic("adapters: cvtFloat16ToFloat32 without an assembly kernel")
}
