package core

// ExplicitView is View for bridges that release the view themselves on every path, such as a
// call that hands a registered function its own tensor over a handle's: the view holds t's memory
// like View's (t's Release no longer changes what the view sees, and the view's Release does not
// release t), but it carries no collector cleanup, and is one allocation (up to four dimensions).
// A view from ExplicitView that is never released holds the memory for good: Release it exactly
// when done. It fails with ErrReleased if t was released.
func (t *Tensor) ExplicitView() (*Tensor, error) {
	if t.Released() {
		return nil, ErrReleased
	}
	v, s, st := newMeta(len(t.shape))
	copy(s, t.shape)
	copy(st, t.strides)
	v.data, v.byteOffset, v.device, v.dtype, v.flags, v.keep = t.data, t.byteOffset, t.device, t.dtype, t.flags, t.keep
	if o := t.hold.owner; o != nil {
		if !o.tryRetain() {
			return nil, ErrReleased
		}
		v.hold.owner = o
	}
	return v, nil
}
