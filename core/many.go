package core

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Part is one tensor of a block that NewUninitParts allocates: its element type, its C-order
// shape, its flags, and where its first byte lies in the block.
type Part struct {
	// Offset is the position of the tensor's first byte in the block, in bytes.
	Offset int64
	// DType is the element type.
	DType DLDataType
	// Shape is the C-order shape; empty for a 0-d tensor. It is copied.
	Shape []int64
	// Flags are the tensor's flags (FlagReadOnly, FlagIsCopied, ...).
	Flags Flags
}

// partsChunk is how many tensors of NewUninitParts share one allocation of tensors (and one of
// holds): a tensor kept alive keeps its chunk's tensors' metadata, at most partsChunk of them.
const partsChunk = 1024

// NewUninitParts allocates one block of size bytes whose contents are not initialised, as
// NewUninit allocates a tensor of that many bytes (mapped memory from Allocation.MappedMin up,
// zeroed Go memory below; 64-byte aligned either way), and makes a C-order tensor over it for
// each part, at the part's Offset, in a few allocations for them all rather than two or three
// each. It returns block, a 1-D Uint8 tensor of size elements over the whole block, and the
// parts' tensors in the order of parts.
//
// It is for readers that fill many tensors at once (a file's weights): the caller writes every
// byte of every part through block (core.Hold it, take its Bytes) before reading any or handing
// them out, then releases block. Parts may lie anywhere in the block, in any order, even
// overlapping; bytes of the block outside every part are never read by this package.
//
// Ownership: the block lives until block and every part (and every view of them, and every
// value attached to one) has been released or become unreachable; keeping one part keeps the
// whole block. Mapped memory is foreign memory, as NewUninit's: LiveForeign counts the block
// once, and it goes back to the cache exactly once, when the last of those holders lets go.
// Parts over Go memory keep the block alive as New's tensors keep theirs.
//
// Parts are checked as untrusted input (dtype, ndim, shape, and that the part lies inside the
// block) before anything is allocated; a bad part fails with an error that names its index.
func NewUninitParts(size int64, parts []Part) (*Tensor, []*Tensor, error) {
	if size < 0 || size > maxAlloc {
		return nil, nil, errs.Errorf(ErrOverflow, "core: a block of %d bytes is outside [0, %d]", size, int64(maxAlloc))
	}
	if err := fitsMemory(size); err != nil {
		return nil, nil, fmt.Errorf("%w (a block for %d parts)", err, len(parts))
	}
	ndims := 0
	for i, p := range parts {
		if len(p.Shape) > MaxNdim {
			return nil, nil, errs.Errorf(ErrNdim, "core: part %d has ndim = %d, more than %d", i, len(p.Shape), MaxNdim)
		}
		n, err := allocSize(p.DType, p.Shape)
		if err != nil {
			return nil, nil, fmt.Errorf("%w, in part %d", err, i)
		}
		if p.Offset < 0 || p.Offset > size-n {
			return nil, nil, errs.Errorf(ErrBounds, "core: part %d's %d bytes at offset %d fall outside a block of %d bytes", i, n, p.Offset, size)
		}
		ndims += len(p.Shape)
	}

	pool.mu.Lock()
	cfg := pool.cfg
	pool.mu.Unlock()
	var base unsafe.Pointer
	var o *owner
	if cfg.MappedMin > 0 && size >= cfg.MappedMin && canMap {
		if b, ok := takeBlock(size, cfg.HugePages && size >= hugeMin); ok {
			base = b.base
			o = newOwner(func() { putBlock(b) })
		}
	}
	if o == nil && size > 0 {
		// Go memory: the tensors' data pointers keep it alive, as New's do
		base = alignedAlloc(size)
	}

	// the block's own tensor: a hold of its own, watched by a cleanup when the memory is mapped
	bd := Desc{Data: base, Device: CPUDevice, DType: Uint8, Shape: []int64{size}, Strides: []int64{1}}
	var whole *Tensor
	if o != nil {
		oh := &hold{owner: o}
		o.retain()
		whole = new(Tensor)
		whole.set(&bd, oh)
		runtime.AddCleanup(whole, func(h *hold) { h.let() }, oh)
	} else {
		th := new(tensorHold)
		th.t.set(&bd, &th.h)
		whole = &th.t
	}

	ts := make([]*Tensor, len(parts))
	// every part's shape and strides, shared by parts of the same shape in a row (a tensor's
	// shape and strides are never written after it is made)
	var dims []int64
	var shape, strides []int64
	for start := 0; start < len(parts); start += partsChunk {
		chunk := parts[start:min(start+partsChunk, len(parts))]
		tensors := make([]Tensor, len(chunk))
		holds := make([]hold, len(chunk))
		for k := range chunk {
			p := &chunk[k]
			if nd := len(p.Shape); shape == nil || !slices.Equal(shape, p.Shape) {
				if len(dims) < 2*nd || dims == nil {
					dims = make([]int64, max(2*nd, min(2*ndims, 1024)))
				}
				shape, strides = dims[:nd:nd], dims[nd:2*nd:2*nd]
				dims = dims[2*nd:]
				copy(shape, p.Shape)
				fillCStrides(strides, shape)
			}
			// field by field: the tensors are new and zero
			t := &tensors[k]
			t.device, t.dtype, t.flags = CPUDevice, p.DType, p.Flags
			t.shape, t.strides, t.hold = shape, strides, &holds[k]
			if !slices.Contains(shape, 0) { // an empty tensor has no data pointer
				t.data = unsafe.Add(base, p.Offset)
			}
			holds[k].owner = o
			ts[start+k] = t
		}
		if o != nil {
			o.refs.Add(int64(len(chunk)))
			// one cleanup for the chunk, on its first tensor (the start of the allocation, which
			// any of its tensors keeps reachable); its argument, the holds, is an allocation of
			// its own, so that it does not keep the tensors reachable
			runtime.AddCleanup(&tensors[0], func(hs []hold) {
				for i := range hs {
					hs[i].let()
				}
			}, holds)
		}
	}
	return whole, ts, nil
}
