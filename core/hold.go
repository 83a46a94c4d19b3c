package core

import "runtime"

// Held is a hold on the memory of one or more tensors for the length of an operation, taken by
// Hold and let go by Release. While it is held, nothing frees that memory: not a Release of the
// tensors on another goroutine, not the garbage collector's cleanup of a tensor that became
// unreachable, not the release of the last view. It is how every function of this module that
// reads or writes a tensor's memory keeps the promise of the ownership rules.
//
// The zero Held holds nothing; Release on it does nothing.
type Held struct {
	ts     [heldInline]*Tensor
	owners [heldInline]*owner
	more   []*Tensor // beyond heldInline tensors
	moreO  []*owner
}

// heldInline is how many tensors a Held keeps without allocating: the operations of this module
// take one or two operands.
const heldInline = 2

// Hold takes a hold on the memory of every tensor in ts (nil entries are skipped) and returns it,
// or fails with ErrReleased, holding nothing, if any of them was already released (its memory
// may be gone). Call Release when the operation is over, typically with defer:
//
//	h, err := core.Hold(dst, src)
//	if err != nil {
//		return err
//	}
//	defer h.Release()
//	// read src's memory and write dst's, through addresses or slices taken from them
//
// For memory Go allocated, the hold keeps the tensors (and so the memory) reachable; for foreign
// memory it also counts as one more holder of the owner, so that a concurrent Release of the
// tensor, or of its last view, cannot run the producer's release until the hold is let go.
// Release exactly once.
func Hold(ts ...*Tensor) (Held, error) {
	var h Held
	for i, t := range ts {
		if t == nil {
			continue
		}
		if t.hold.dropped.Load() {
			h.Release()
			return Held{}, ErrReleased
		}
		var o *owner
		if t.hold.owner != nil {
			if o = t.hold.owner; !o.tryRetain() {
				h.Release()
				return Held{}, ErrReleased
			}
		}
		if i < heldInline {
			h.ts[i], h.owners[i] = t, o
		} else {
			h.more, h.moreO = append(h.more, t), append(h.moreO, o)
		}
	}
	return h, nil
}

// Release lets go of the hold: foreign memory whose other holders are all gone is released now.
func (h *Held) Release() {
	for i, o := range h.owners {
		if o != nil {
			o.drop()
		}
		h.owners[i] = nil
	}
	for i, o := range h.moreO {
		if o != nil {
			o.drop()
		}
		h.moreO[i] = nil
	}
	// the tensors (their Go memory, their keep values) are reachable up to here
	runtime.KeepAlive(h.ts)
	runtime.KeepAlive(h.more)
	h.ts, h.more, h.moreO = [heldInline]*Tensor{}, nil, nil
}
