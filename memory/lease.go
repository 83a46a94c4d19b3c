package memory

import (
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// A Lease is a block of Go memory for the elements of one C-order tensor, lent out as one tensor
// at a time and taken back when that tensor and every holder made from it have been released: a
// producer that returns one result after another of the same dtype and shape reuses the block,
// and whatever it keeps over it (onnxx keeps an ORT value over each output's block), instead of
// allocating both for every result. Lending allocates only the tensor.
//
// The lent tensor is over Go memory (Foreign reports false, core.LiveForeign does not count it)
// and keeps the block alive, as a tensor from core.New does. Release gives the block back, to be lent
// again: a slice taken from the tensor must not be used after its Release. A tensor that becomes
// unreachable without Release never gives it back: the collector frees the block with it, and
// the lease is lost (Lost), for the producer to drop. A Lease is safe for concurrent use.
//
// A lent tensor attached to a value of another library (core.Attach: a *mat.Dense, a Gorgonia
// tensor, ...) forfeits the block: values derived from that one (a Gonum RowView, a slice of the
// Dense's data) read the memory without any holder this package can count, so the block is
// never lent again. The Go collector keeps it alive as long as anything points into it, and the
// lease is lost (Lost) at once, for the producer to replace; a result attached to a Gonum matrix
// costs the producer one new block.
type Lease struct {
	dtype          core.DLDataType
	shape, strides []int64 // shared by the lent tensors (their metadata never changes)
	off            int     // of the first element in mem, Alignment-aligned
	seen           weak.Pointer[byte]
	lent           atomic.Bool
	forfeited      atomic.Bool // the block escaped to a holder Attach cannot count (see Forfeit)
	mem            []byte      // the block while the lease is free (nil while it is lent)
	size           int         // len(mem)
}

// NewLease allocates a block for a C-order tensor of dtype and shape, which must have elements.
// It fails as core.New does on a bad dtype or shape, and with ErrInvalid for a shape without elements.
func NewLease(dtype core.DLDataType, shape ...int64) (*Lease, error) {
	n, err := AllocSize(dtype, shape...)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errs.Errorf(core.ErrInvalid, "memory: a lease of %v %s has no elements", shape, dtype)
	}
	mem := make([]byte, n+core.Alignment-1)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	l := &Lease{dtype: dtype, shape: append([]int64{}, shape...), strides: make([]int64, len(shape)),
		off: int((core.Alignment - base%core.Alignment) % core.Alignment), seen: weak.Make(&mem[0]), mem: mem, size: len(mem)}
	for i, s := len(shape)-1, int64(1); i >= 0; i-- { // C order
		l.strides[i] = s
		s *= max(shape[i], 1)
	}
	return l, nil
}

// Lend returns a writable tensor over the block, or nil while it is lent out (or lost). The
// elements are what the last holder left (zero the first time). Lending allocates only the
// tensor: the lease itself is the tensor's releaser (see lender).
func (l *Lease) Lend() *core.Tensor {
	if !l.lent.CompareAndSwap(false, true) {
		return nil
	}
	data := unsafe.Pointer(&l.mem[l.off])
	l.mem = nil // while lent, only the tensor keeps the block alive: dropped, it is collected
	return core.WrapLent(data, l.dtype, l.shape, l.strides, (*lender)(l))
}

// Lost reports whether the block was lent out and its tensor collected unreleased: the block is
// gone, and Lend returns nil from now on.
//
// A block forfeited by Attach is lost too: it stays lent out for good.
func (l *Lease) Lost() bool {
	return l.lent.Load() && (l.forfeited.Load() || l.seen.Value() == nil)
}

// lender is a Lease as the lender of the tensor it lent (core.Lender): one tensor is lent at a
// time, and core returns its block exactly once, so the lease needs no per-lend state.
type lender Lease

// Forfeit gives up the block of a lent tensor: core.Attach calls it, as the value it attaches
// (and whatever is derived from it) may read the memory past the tensor's last Release. The Go
// memory stays valid as long as anything points into it.
func (l *lender) Forfeit() { l.forfeited.Store(true) }

// Return takes the block back once the lent tensor's last holder has let go (a forfeited block
// never comes back). data, the tensor's first element, is off bytes into the block and keeps it
// alive: the block is found from it (no weak pointer to dereference) and written back before the
// flag, which Lend reads first.
func (l *lender) Return(data unsafe.Pointer) {
	if l.forfeited.Load() {
		return
	}
	l.mem = unsafe.Slice((*byte)(unsafe.Add(data, -l.off)), l.size)
	l.lent.Store(false)
}
