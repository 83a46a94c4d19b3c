package memory

import (
	"fmt"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// Part is one tensor of a block that NewUninitParts allocates: its element type, its C-order
// shape, its flags, and where its first byte lies in the block.
type Part = core.Part

// NewUninitParts allocates one block of size bytes whose contents are not initialised, as
// NewUninit allocates a tensor of that many bytes (mapped memory from Allocation.MappedMin up,
// zeroed Go memory below; 64-byte aligned either way), and makes a C-order tensor over it for
// each part, at the part's Offset, in a few allocations for them all rather than two or three
// each (core.WrapParts). It returns block, a 1-D Uint8 tensor of size elements over the whole
// block, and the parts' tensors in the order of parts.
//
// It is for readers that fill many tensors at once (a file's weights): the caller writes every
// byte of every part through block (core.Hold it, take its Bytes) before reading any or handing
// them out, then releases block. Parts may lie anywhere in the block, in any order, even
// overlapping; bytes of the block outside every part are never read by this package.
//
// Ownership: the block lives until block and every part (and every view of them, and every
// value attached to one) has been released or become unreachable; keeping one part keeps the
// whole block. Mapped memory is foreign memory, as NewUninit's: core.LiveForeign counts the
// block once, and it goes back to the cache exactly once, when the last of those holders lets
// go. Parts over Go memory keep the block alive as core.New's tensors keep theirs.
//
// Parts are checked as untrusted input (dtype, ndim, shape, and that the part lies inside the
// block) before anything is allocated; a bad part fails with an error that names its index.
func NewUninitParts(size int64, parts []Part) (*core.Tensor, []*core.Tensor, error) {
	if size < 0 || size > maxAlloc {
		return nil, nil, errs.Errorf(core.ErrOverflow, "memory: a block of %d bytes is outside [0, %d]", size, int64(maxAlloc))
	}
	if err := core.FitsMemory(size); err != nil {
		return nil, nil, fmt.Errorf("%w (a block for %d parts)", err, len(parts))
	}
	if err := core.CheckParts(size, parts); err != nil {
		return nil, nil, err
	}
	if b, ok := takeMapped(size); ok {
		whole, ts, err := core.WrapParts(b.base, size, func() { putBlock(b) }, parts)
		if err != nil { // not reached: the parts were checked
			putBlock(b)
		}
		return whole, ts, err
	}
	var base unsafe.Pointer
	if size > 0 {
		base = goAligned(size) // Go memory, as core.New's
	}
	return core.WrapParts(base, size, nil, parts)
}
