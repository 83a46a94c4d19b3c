package core

// Releaser is a value whose Release lets go of memory: WrapExplicitWith's form of a release
// function.
type Releaser interface{ Release() }

// explicitWith is what WrapExplicitWith allocates: the tensor, its owner and hold, the arrays of
// its shape and strides, and the release state.
type explicitWith[R any] struct {
	explicitTensor
	r R
}

// WrapExplicitWith is WrapExplicit for bridges that make one small tensor per call and per
// argument, such as a registered function called from Python: the tensor, its owner, its shape
// and strides (up to 4 dimensions) and r, the state its release needs, are one allocation
// instead of four. r is copied into that allocation; the returned P points at the copy (nil on
// error), so that the caller reaches the state it shares with Release.
//
// The ownership is WrapExplicit's: d is validated as untrusted input, and Release of the copy
// runs exactly once, when the tensor and every holder made from it have let go, or before
// WrapExplicitWith returns an error. The tensor carries no collector cleanup, and it is new on
// every call: a function that kept it sees it released, never reused for other memory.
func WrapExplicitWith[R any, P interface {
	*R
	Releaser
}](d Desc, r R) (*Tensor, P, error) {
	x := &explicitWith[R]{r: r}
	return finishWith[R, P](x, &d)
}

// ImportExplicitWith is WrapExplicitWith of DescOf(dl) with flags: the import of a producer's
// DLTensor by a bridge that releases it itself, as a call imports its arguments. dl is read
// (as untrusted input: see DescOf and ValidateDesc) only before ImportExplicitWith returns.
// Release of the copy of r runs exactly once, as WrapExplicitWith's, also when dl is refused.
func ImportExplicitWith[R any, P interface {
	*R
	Releaser
}](dl *DLTensor, flags Flags, r R) (*Tensor, P, error) {
	x := &explicitWith[R]{r: r}
	var d Desc
	if err := descOf(dl, &d); err != nil {
		P(&x.r).Release()
		return nil, nil, err
	}
	d.Flags = flags
	return finishWith[R, P](x, &d)
}

// finishWith validates d into x and makes x's tensor, or runs x's release and fails.
func finishWith[R any, P interface {
	*R
	Releaser
}](x *explicitWith[R], d *Desc) (*Tensor, P, error) {
	p := P(&x.r)
	if err := validateDesc(d, x.room[:]); err != nil {
		p.Release()
		return nil, nil, err
	}
	x.oh.o.releaser = p
	x.oh.init()
	x.t.set(d, &x.oh.h)
	return &x.t, p, nil
}
