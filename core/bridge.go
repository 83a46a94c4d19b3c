package core

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// This file holds the primitives of the doc's "For bridges and allocators": what package memory
// needs of core's internals to make tensors over its blocks and to size them.

// CompactSize returns the bytes a C-order tensor of dtype and shape takes, its dtype and shape
// checked as untrusted input: a bad dtype or shape, or a size past what Go can allocate
// (ErrOverflow), fails. Unlike New it does not ask whether this machine has the memory (see
// SetMemoryLimit).
func CompactSize(dtype DLDataType, shape ...int64) (int64, error) {
	if len(shape) > MaxNdim {
		return 0, errNdim(len(shape))
	}
	return allocSize(dtype, shape)
}

// memoryLimit returns the bytes of memory and swap this process may have; nil until an
// allocator (package memory) says.
var memoryLimit atomic.Pointer[func() int64]

// SetMemoryLimit tells New (and CompactSize's callers that check it, as package memory's
// allocations) how many bytes this process may have, as a function called when needed; New
// refuses a tensor larger than that with ErrTooLarge, instead of letting Go's allocator end the
// process. Package memory sets it when it is initialised, from the machine's memory and swap and
// the control group's limit; until then New is bounded by what Go can allocate alone.
func SetMemoryLimit(limit func() int64) {
	if limit == nil {
		memoryLimit.Store(nil)
		return
	}
	memoryLimit.Store(&limit)
}

// FitsMemory refuses an allocation of n bytes that this machine could never give: more than the
// limit SetMemoryLimit set (ErrTooLarge). Without one, it refuses nothing.
func FitsMemory(n int64) error {
	if f := memoryLimit.Load(); f != nil {
		if m := (*f)(); m > 0 && n > m {
			return errs.Errorf(ErrTooLarge, "core: %d bytes asked for, the process may have %d bytes of memory and swap", n, m)
		}
	}
	return nil
}

// Part is one tensor of a block that WrapParts (and package memory's NewUninitParts) makes
// tensors over: its element type, its C-order shape, its flags, and where its first byte lies in
// the block.
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

// partsChunk is how many tensors of WrapParts share one allocation of tensors (and one of
// holds): a tensor kept alive keeps its chunk's tensors' metadata, at most partsChunk of them.
const partsChunk = 1024

// CheckParts checks parts as untrusted input against a block of size bytes (dtype, ndim, shape,
// and that each part lies inside the block), with an error that names the bad part's index.
func CheckParts(size int64, parts []Part) error {
	if size < 0 || size > maxAlloc {
		return errs.Errorf(ErrOverflow, "core: a block of %d bytes is outside [0, %d]", size, int64(maxAlloc))
	}
	for i, p := range parts {
		if len(p.Shape) > MaxNdim {
			return errs.Errorf(ErrNdim, "core: part %d has ndim = %d, more than %d", i, len(p.Shape), MaxNdim)
		}
		n, err := allocSize(p.DType, p.Shape)
		if err != nil {
			return fmt.Errorf("%w, in part %d", err, i)
		}
		if p.Offset < 0 || p.Offset > size-n {
			return errs.Errorf(ErrBounds, "core: part %d's %d bytes at offset %d fall outside a block of %d bytes", i, n, p.Offset, size)
		}
	}
	return nil
}

// WrapParts makes, over the block of size bytes at base, a 1-D Uint8 tensor of the whole block
// and a C-order tensor for each part (checked first, as CheckParts does), in a few allocations
// for them all rather than two or three each. With a release, the block is foreign memory with
// one owner shared by all the tensors (and their views, and the values attached to them):
// release runs exactly once, when the last of them lets go, and LiveForeign counts the block
// once. Without one (nil), base must be Go memory (from make), which the tensors' data pointers
// keep alive as New's do. On error, release is not called: the caller still owns the block.
func WrapParts(base unsafe.Pointer, size int64, release func(), parts []Part) (*Tensor, []*Tensor, error) {
	if err := CheckParts(size, parts); err != nil {
		return nil, nil, err
	}
	ndims := 0
	for _, p := range parts {
		ndims += len(p.Shape)
	}
	var o *owner
	if release != nil {
		o = newOwner(release)
	}
	// the block's own tensor: a hold of its own, watched by a cleanup when the memory is foreign
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

// allocSize is the size in bytes of a compact tensor of dtype and shape, checked as untrusted
// input (New and CompactSize; New adds the machine's memory: FitsMemory).
func allocSize(dtype DLDataType, shape []int64) (int64, error) {
	if err := dtype.Validate(); err != nil {
		return 0, err
	}
	n, err := numElements(shape)
	if err != nil {
		return 0, err
	}
	nbits, ok := mul(n, int64(dtype.Bits)*int64(dtype.Lanes))
	if !ok || nbits > 1<<62 {
		return 0, errs.Errorf(ErrOverflow, "core: the bits of %d elements of %s overflow int64", n, dtype)
	}
	nbytes := bitsToBytes(nbits)
	if nbytes > maxAlloc {
		return 0, errs.Errorf(ErrOverflow, "core: %d bytes for %d elements of %s exceed what Go can allocate", nbytes, n, dtype)
	}
	return nbytes, nil
}

// A Lender lends out a block of Go memory one tensor at a time and takes it back (package
// memory's Lease). The tensors WrapLent makes over it are not foreign (Foreign reports false,
// LiveForeign does not count them); Return runs when their last holder lets go, and Attach calls
// Forfeit first, as the value it attaches (and whatever is derived from it) may read the memory
// without any holder core can count: the block must then never be lent again.
type Lender interface {
	// Return takes the block back. data is the data pointer of the tensor that was lent over it:
	// it keeps the block alive for the call, so the lender need not keep a reference of its own
	// while the block is lent (which would keep a block dropped unreleased from being collected).
	Return(data unsafe.Pointer)
	// Forfeit gives the block up for good: it stays lent out.
	Forfeit()
}

// lentTensor is what WrapLent allocates: the tensor, its owner and hold, and its lender. It is
// its owner's releaser: the release returns the block with the tensor's data pointer.
type lentTensor struct {
	t  Tensor
	oh ownedHold
	l  Lender
}

// Release returns the block to the lender.
func (x *lentTensor) Release() { x.l.Return(x.t.data) }

// WrapLent makes a writable tensor on the CPU over data, Go memory that l lends, in one
// allocation. The allocator made shape and strides (compact, checked) and never changes them:
// they are used as given, neither copied nor validated, and shared by every tensor lent over the
// block; data must stay reachable from l until its Release.
func WrapLent(data unsafe.Pointer, dtype DLDataType, shape, strides []int64, l Lender) *Tensor {
	x := &lentTensor{l: l}
	x.oh.o.releaser = x
	x.oh.init()
	t := &x.t
	t.data, t.device, t.dtype = data, CPUDevice, dtype
	t.shape, t.strides, t.hold = shape, strides, &x.oh.h
	return t
}
