package core

import (
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// view returns a tensor over t's memory, its first element off elements from t's first, with a
// hold of its own on t's owner that a collector cleanup lets go of. It copies shape and strides
// (callers may pass scratch).
func (t *Tensor) view(off int64, shape, strides []int64) (*Tensor, error) {
	return t.viewWith(off, shape, strides, true)
}

// viewWith is view, with the collector's cleanup (cleanup) or without it (ExplicitView).
func (t *Tensor) viewWith(off int64, shape, strides []int64, cleanup bool) (*Tensor, error) {
	if t.Released() {
		return nil, ErrReleased
	}
	if t.dtype.SubByte() && !contiguous(shape, strides, false) {
		// packed elements have no byte address of their own: a sub-byte tensor is compact in C
		// order (as validation demands of foreign ones, and ByteRange, CheckNoSelfOverlap and
		// export count on)
		return nil, errs.Errorf(ErrSubByte, "core: a view with strides %v for shape %v (sub-byte tensors are compact in C order)", slices.Clone(strides), slices.Clone(shape))
	}
	v, s, st := newMeta(len(shape))
	copy(s, shape)
	copy(st, strides)
	v.data, v.byteOffset, v.device, v.dtype, v.flags, v.keep = t.data, t.byteOffset, t.device, t.dtype, t.flags, t.keep
	if off != 0 && v.Len() > 0 {
		if t.dtype.SubByte() {
			return nil, errs.Errorf(ErrSubByte, "core: a view of a sub-byte tensor cannot move its first element")
		}
		b := off * int64(t.dtype.Size())
		if t.device.DeviceType.addressable() {
			v.data = unsafe.Add(t.data, b)
		} else {
			v.byteOffset = uint64(int64(t.byteOffset) + b)
		}
	}
	if o := t.hold.owner; o != nil {
		ok := o.tryRetain()
		runtime.KeepAlive(t) // t's cleanup must not let its hold go before o is retained
		if !ok {
			return nil, ErrReleased
		}
		if !cleanup {
			v.hold.owner = o // the view's own hold, in its allocation: released explicitly
			return v, nil
		}
		// a hold apart from v's allocation: a cleanup's argument inside it would keep v reachable
		v.hold = &hold{owner: o}
		runtime.AddCleanup(v, func(h *hold) { h.let() }, v.hold)
	}
	return v, nil
}

// Permute returns a view whose dimension i is t's dimension axes[i]; axes must be a permutation
// of 0..Ndim-1.
func (t *Tensor) Permute(axes ...int) (*Tensor, error) {
	if len(axes) != len(t.shape) {
		return nil, errs.Errorf(ErrArgument, "core: %d axes to permute %d dimensions", len(axes), len(t.shape))
	}
	var seen uint64 // len(axes) ≤ MaxNdim = 64
	var shape, strides [MaxNdim]int64
	for i, a := range axes {
		if a < 0 || a >= len(axes) || seen&(1<<a) != 0 {
			return nil, errs.Errorf(ErrArgument, "core: axes %v is not a permutation of 0..%d", slices.Clone(axes), len(axes)-1)
		}
		seen |= 1 << a
		shape[i], strides[i] = t.shape[a], t.strides[a]
	}
	return t.view(0, shape[:len(axes)], strides[:len(axes)])
}

// Transpose returns the view with all dimensions reversed (NumPy's a.T); for a matrix, the
// transpose.
func (t *Tensor) Transpose() (*Tensor, error) {
	nd := len(t.shape)
	var shape, strides [MaxNdim]int64
	for i := range nd {
		shape[i], strides[i] = t.shape[nd-1-i], t.strides[nd-1-i]
	}
	return t.view(0, shape[:nd], strides[:nd])
}

// Begin and End stand for Python's omitted slice bounds: Slice(axis, Begin, End, 1) is a[:] and
// Slice(axis, End, Begin, -1) is a[::-1].
const (
	Begin int64 = math.MinInt64
	End   int64 = math.MaxInt64
)

// Slice returns the view of elements start, start+step, ... before stop along axis, with Python's
// rules: negative start and stop count from the end, out-of-range bounds are clamped, step may be
// negative but not zero. The other dimensions are kept whole.
func (t *Tensor) Slice(axis int, start, stop, step int64) (*Tensor, error) {
	if axis < 0 || axis >= len(t.shape) {
		return nil, errs.Errorf(ErrArgument, "core: axis %d is out of range for ndim = %d", axis, len(t.shape))
	}
	if step == 0 || step == math.MinInt64 {
		return nil, errs.Errorf(ErrArgument, "core: slice step %d is not allowed (0 or MinInt64)", step)
	}
	n := t.shape[axis]
	clamp := func(i int64) int64 {
		if i < 0 {
			i += n
			if i < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		}
		if i >= n {
			if step < 0 {
				return n - 1
			}
			return n
		}
		return i
	}
	start, stop = clamp(start), clamp(stop)
	var count int64
	// ceil(distance / |step|), written so that a huge step cannot overflow
	if step > 0 && stop > start {
		count = (stop-start-1)/step + 1
	} else if step < 0 && start > stop {
		count = (start-stop-1)/(-step) + 1
	}
	var sbuf, stbuf [MaxNdim]int64
	shape, strides := sbuf[:len(t.shape)], stbuf[:len(t.shape)]
	copy(shape, t.shape)
	copy(strides, t.strides)
	shape[axis] = count
	off := int64(0)
	if count > 0 {
		off = start * t.strides[axis]
		if count > 1 {
			strides[axis] = t.strides[axis] * step // |step| < n here, so it cannot overflow the extent
		}
	}
	return t.view(off, shape, strides)
}

// Reverse returns the view with axis in reverse order (a[::-1] along that axis).
func (t *Tensor) Reverse(axis int) (*Tensor, error) { return t.Slice(axis, End, Begin, -1) }

// Index returns the view at position i of axis, with that dimension removed (a[i] for axis 0).
// A negative i counts from the end.
func (t *Tensor) Index(axis int, i int64) (*Tensor, error) {
	if axis < 0 || axis >= len(t.shape) {
		return nil, errs.Errorf(ErrArgument, "core: axis %d is out of range for ndim = %d", axis, len(t.shape))
	}
	n := t.shape[axis]
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil, errs.Errorf(ErrArgument, "core: index %d out of range for dimension %d of size %d", i, axis, n)
	}
	var sbuf, stbuf [MaxNdim]int64
	shape := append(append(sbuf[:0], t.shape[:axis]...), t.shape[axis+1:]...)
	strides := append(append(stbuf[:0], t.strides[:axis]...), t.strides[axis+1:]...)
	return t.view(i*t.strides[axis], shape, strides)
}

// Reshape returns a view with the given shape and the same elements in C order. One dimension
// may be -1, inferred from the others. It fails with ErrNotViewable when the strides do not allow
// the new shape without a copy (as NumPy would copy); copy with memory.Contiguous first then.
func (t *Tensor) Reshape(shape ...int64) (*Tensor, error) {
	if len(shape) > MaxNdim {
		return nil, errNdim(len(shape))
	}
	shape = append([]int64{}, shape...)
	n := t.Len()
	infer := -1
	known := int64(1)
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return nil, errs.Errorf(ErrShape, "core: shape[%d] = %d in reshape is negative (only -1 is inferred)", i, d)
		default:
			var ok bool
			if known, ok = mul(known, d); !ok {
				return nil, errs.Errorf(ErrOverflow, "core: reshape to %v: its size overflows int64", shape)
			}
		}
	}
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			return nil, errs.Errorf(ErrShape, "core: cannot reshape %d elements into %v", n, shape)
		}
		shape[infer] = n / known
		known = n
	}
	if known != n {
		return nil, errs.Errorf(ErrShape, "core: cannot reshape %d elements into %v", n, shape)
	}
	if _, err := numElements(shape); err != nil { // an empty shape's other dimensions too
		return nil, err
	}
	strides, ok := reshapeStrides(t.shape, t.strides, shape)
	if !ok {
		return nil, errs.Errorf(ErrNotViewable, "core: shape %v with strides %v cannot be viewed as %v", t.shape, t.strides, shape)
	}
	return t.view(0, shape, strides)
}

// reshapeStrides finds strides that present the elements of (shape, strides), in C order, with
// newShape, without moving them; it is NumPy's no-copy reshape. Sizes must match.
func reshapeStrides(shape, strides, newShape []int64) ([]int64, bool) {
	out := make([]int64, len(newShape))
	if slices.Contains(shape, 0) {
		return cStrides(newShape), true
	}
	// drop size-1 dimensions of the old layout: their strides mean nothing
	var os, ost []int64
	for i, d := range shape {
		if d != 1 {
			os, ost = append(os, d), append(ost, strides[i])
		}
	}
	oi, ni := 0, 0
	for ni < len(newShape) || oi < len(os) {
		if ni < len(newShape) && newShape[ni] == 1 {
			out[ni] = 1
			ni++
			continue
		}
		if oi >= len(os) || ni >= len(newShape) {
			return nil, false
		}
		// grow a group of old dims and a group of new dims until their products agree
		oj, nj := oi+1, ni+1
		op, np := os[oi], newShape[ni]
		for op != np {
			if op < np {
				if oj >= len(os) {
					return nil, false
				}
				op *= os[oj]
				oj++
			} else {
				if nj >= len(newShape) {
					return nil, false
				}
				np *= newShape[nj]
				nj++
			}
		}
		// the old group must be contiguous within itself
		for k := oi; k < oj-1; k++ {
			if ost[k] != ost[k+1]*os[k+1] {
				return nil, false
			}
		}
		// new strides from the last old stride, growing leftwards
		st := ost[oj-1]
		for k := nj - 1; k >= ni; k-- {
			out[k] = st
			st *= newShape[k]
		}
		oi, ni = oj, nj
	}
	return out, true
}

// BroadcastTo returns a view with the given shape in which t's dimensions of size 1 (and missing
// leading dimensions) repeat with stride 0, following NumPy's broadcasting rules. The view is
// read-only, since its elements alias each other.
func (t *Tensor) BroadcastTo(shape ...int64) (*Tensor, error) {
	if len(shape) < len(t.shape) || len(shape) > MaxNdim {
		return nil, errs.Errorf(ErrShape, "core: cannot broadcast %v to %v", t.shape, shape)
	}
	if _, err := numElements(shape); err != nil {
		return nil, err
	}
	lead := len(shape) - len(t.shape)
	strides := make([]int64, len(shape))
	for i := range shape {
		if i < lead {
			continue
		}
		d, s := t.shape[i-lead], t.strides[i-lead]
		switch {
		case d == shape[i]:
			strides[i] = s
		case d == 1:
			strides[i] = 0
		default:
			return nil, errs.Errorf(ErrShape, "core: cannot broadcast %v to %v", t.shape, shape)
		}
	}
	v, err := t.view(0, shape, strides)
	if err != nil {
		return nil, err
	}
	v.flags |= FlagReadOnly
	return v, nil
}

// AsReadOnly returns a view of the same elements that refuses writable access.
func (t *Tensor) AsReadOnly() (*Tensor, error) { return t.WithFlags(FlagReadOnly) }

// WithFlags returns a view of the same elements with the given flags added (FlagReadOnly to
// make it read-only, FlagIsCopied to say that nothing else aliases the memory). Tensors of
// sub-byte dtypes are packed: FlagIsSubbyteTypePadded on one fails with ErrSubByte.
func (t *Tensor) WithFlags(set Flags) (*Tensor, error) {
	if set&FlagIsSubbyteTypePadded != 0 && t.dtype.SubByte() {
		return nil, errs.Errorf(ErrSubByte, "core: %s is packed, FlagIsSubbyteTypePadded would say its elements take a byte each", t)
	}
	v, err := t.view(0, t.shape, t.strides)
	if err != nil {
		return nil, err
	}
	v.flags |= set
	return v, nil
}

// View returns a new tensor over the same elements with a hold of its own: releasing one does
// not affect the other.
func (t *Tensor) View() (*Tensor, error) { return t.view(0, t.shape, t.strides) }

// ExplicitView is View for bridges that release the view themselves on every path, such as a
// call that hands a registered function its own tensor over a handle's: the view holds t's memory
// like View's (t's Release no longer changes what the view sees, and the view's Release does not
// release t), but it carries no collector cleanup, and is one allocation (up to four dimensions).
// A view from ExplicitView that is never released holds the memory for good: Release it exactly
// when done. It fails with ErrReleased if t was released.
func (t *Tensor) ExplicitView() (*Tensor, error) { return t.viewWith(0, t.shape, t.strides, false) }
