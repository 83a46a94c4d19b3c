//go:build !amd64 || purego

package adapters

import "unsafe"

// haveStrip32 is false where there is no assembly kernel: transpose32 uses its portable path.
var haveStrip32 = false

func transposeStrip32(dst, src unsafe.Pointer, blocks, dRow, sCol int) {
	panic("adapters: transposeStrip32 without an assembly kernel")
}
