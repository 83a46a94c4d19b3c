package core

import (
	"runtime"
	"sync/atomic"
)

// owner is the memory that foreign producers hand over: it counts the holders (tensors, views and
// values attached to them) and calls release exactly once, when the last holder lets go.
type owner struct {
	refs     atomic.Int64
	release  func()
	releaser Releaser // instead of release (WrapExplicitWith, WrapLent)
}

// lent reports whether the owner's memory is Go memory a Lender lent out (its release gives the
// block back): not foreign, and not counted by liveOwners.
func (o *owner) lent() bool {
	_, ok := o.releaser.(*lentTensor)
	return ok
}

// liveOwners counts owners whose release has not run yet.
var liveOwners atomic.Int64

func newOwner(release func()) *owner {
	liveOwners.Add(1)
	return &owner{release: release}
}

func (o *owner) retain() { o.refs.Add(1) }

// tryRetain takes another reference unless the memory is already gone.
func (o *owner) tryRetain() bool {
	for {
		n := o.refs.Load()
		if n <= 0 {
			return false
		}
		if o.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (o *owner) drop() {
	switch n := o.refs.Add(-1); {
	case n == 0:
		if o.release != nil {
			o.release()
		} else if o.releaser != nil {
			o.releaser.Release()
		}
		if !o.lent() {
			liveOwners.Add(-1)
		}
	case n < 0:
		panic("core: owner released more often than retained")
	}
}

// LiveForeign returns how many blocks of foreign memory (wrapped, imported, mapped or device
// memory with a release function) are still held. Tests use it to prove nothing leaked: after the
// last holder is released or collected (runtime.GC, then waiting for cleanups), it returns to the
// value it had before.
func LiveForeign() int64 { return liveOwners.Load() }

// hold is one holder's reference on an owner. It is dropped at most once, by an explicit Release
// or by the cleanup that runs when its holder becomes unreachable, whichever comes first.
type hold struct {
	owner   *owner
	dropped atomic.Bool
}

func newHold(o *owner) *hold {
	if o != nil {
		o.retain()
	}
	return &hold{owner: o}
}

func (h *hold) let() bool {
	if !h.dropped.CompareAndSwap(false, true) {
		return false
	}
	if h.owner != nil {
		h.owner.drop()
	}
	return true
}

// Attach ties the memory of t to the lifetime of obj: the memory stays valid at least as long as
// obj is reachable, whatever happens to t (a Release of t then only lets go of t's own hold).
// Adapters call it on the values they build over a tensor's memory (a *mat.Dense, a
// *tensor.Dense, an ORT value), so that a value in another library keeps foreign memory alive,
// and so does whatever value t itself was built over (see WrapKeep). For tensors over plain Go
// memory it does nothing: the garbage collector already sees obj's pointer into that memory.
// A tensor WrapLent made is over Go memory too: Attach forfeits its block (Lender.Forfeit),
// which its allocator then never lends again. Attach to a released tensor returns ErrReleased.
func Attach[T any](obj *T, t *Tensor) error {
	if t.hold.dropped.Load() {
		return ErrReleased
	}
	a := attachment{keep: t.keep}
	if o := t.hold.owner; o != nil {
		ok := o.tryRetain()
		runtime.KeepAlive(t) // t's cleanup must not let its hold go before o is retained
		if !ok {
			return ErrReleased
		}
		a.hold = &hold{owner: o}
		if x, ok := o.releaser.(*lentTensor); ok {
			x.l.Forfeit() // a lent block is never lent again
		}
	}
	if a.hold == nil && a.keep == nil {
		return nil
	}
	runtime.AddCleanup(obj, func(a attachment) {
		runtime.KeepAlive(a.keep)
		if a.hold != nil {
			a.hold.let()
		}
	}, a)
	return nil
}

// attachment is what a value made over a tensor's memory holds on to.
type attachment struct {
	hold *hold
	keep any
}
