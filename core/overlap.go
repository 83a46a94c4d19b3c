package core

import (
	"errors"
	"slices"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// ErrOverlap: an operation that writes a tensor was given one whose elements alias each other
// (a zero stride over a dimension longer than 1, or strides that make two indices meet), so the
// result would depend on the order of the writes.
var ErrOverlap = errors.New("core: elements of a writable tensor alias each other")

// MayShareMemory reports whether the elements of a and b may lie in the same bytes: whether the
// byte ranges from their lowest to their highest element intersect, on the same device (like
// NumPy's may_share_memory, a bounds check: two interleaved views that never touch the same
// element still report true). Every host-accessible device (CPU, pinned, managed memory) counts
// as one: they address the process's memory, and the same bytes may be labelled kDLCPU in one
// tensor and kDLCUDAHost in another. Empty tensors share nothing.
func MayShareMemory(a, b *Tensor) bool {
	if a.Len() == 0 || b.Len() == 0 {
		return false
	}
	if a.device != b.device && !(a.HostAccessible() && b.HostAccessible()) {
		return false
	}
	if !a.device.DeviceType.addressable() && a.data != b.data {
		return false // distinct opaque buffers
	}
	alo, ahi := a.byteRange()
	blo, bhi := b.byteRange()
	return alo < bhi && blo < ahi
}

// ByteRange returns the addresses (or, on devices whose Data is an opaque handle, the byte
// offsets into it) of the first byte of t's lowest element and one past the last byte of its
// highest element: the bytes its elements may touch, whatever the strides' signs. Both are zero
// for a tensor without elements. Validation guarantees that neither wraps around. It reads no
// element, so it needs no hold; an adapter comparing the range with memory of its own does so
// while it holds t.
func (t *Tensor) ByteRange() (lo, hi uintptr) {
	if t.Len() == 0 {
		return 0, 0
	}
	return t.byteRange()
}

// byteRange is ByteRange of a non-empty tensor.
func (t *Tensor) byteRange() (lo, hi uintptr) {
	base := uintptr(t.data)
	if !t.device.DeviceType.addressable() {
		base = uintptr(t.byteOffset)
	}
	if t.dtype.SubByte() { // compact by validation
		return base, base + uintptr(t.NumBytes())
	}
	elo, ehi, _ := extent(t.shape, t.strides)
	size := int64(t.dtype.Size())
	return base + uintptr(elo*size), base + uintptr((ehi+1)*size)
}

// CheckNoSelfOverlap returns nil when no two indices of t address the same element, and
// otherwise an error wrapping ErrOverlap that names the dimension and stride at fault. Every
// operation of this module that writes a tensor element by element refuses such destinations:
// the result would depend on which write lands last.
//
// The test is exact: a fast sufficient condition (sorted by |stride|, each stride steps over
// everything the smaller ones reach) settles common layouts in O(ndim log ndim); layouts that
// fail it but have few elements are checked one element at a time; larger ones are refused as
// possibly aliasing, which the error says.
func (t *Tensor) CheckNoSelfOverlap() error {
	if t.Len() <= 1 || t.dtype.SubByte() { // sub-byte tensors are compact by validation
		return nil
	}
	type ax struct {
		dim     int
		n, step int64
	}
	axes := make([]ax, 0, len(t.shape))
	for i, n := range t.shape {
		if n <= 1 {
			continue
		}
		st := t.strides[i]
		if st == 0 {
			return errs.Errorf(ErrOverlap, "core: dimension %d has stride 0 over %d elements (a broadcast: make it read-only or copy it)", i, n)
		}
		axes = append(axes, ax{i, n, max(st, -st)})
	}
	slices.SortFunc(axes, func(a, b ax) int { return int(min(max(a.step-b.step, -1), 1)) })
	reach := int64(0) // the largest offset the smaller dimensions reach
	fast := true
	for _, a := range axes {
		if a.step <= reach {
			fast = false
			break
		}
		reach += (a.n - 1) * a.step // fits: validation bounded the extent
	}
	if fast {
		return nil
	}
	return t.checkOverlapByElement()
}

// maxOverlapScan bounds the elements and the extent that checkOverlapByElement walks.
const maxOverlapScan = 1 << 22

// checkOverlapByElement marks every element offset in a bitmap of the tensor's extent.
func (t *Tensor) checkOverlapByElement() error {
	lo, hi, _ := extent(t.shape, t.strides)
	if t.Len() > maxOverlapScan || hi-lo+1 > 8*maxOverlapScan {
		return errs.Errorf(ErrOverlap, "core: strides %v for shape %v may make two indices meet (too large to check exactly)", t.strides, t.shape)
	}
	seen := make([]uint64, (hi-lo+64)/64)
	var err error
	Indices(t.shape)(func(idx []int64) bool {
		off := -lo
		for i, x := range idx {
			off += x * t.strides[i]
		}
		if seen[off/64]&(1<<(off%64)) != 0 {
			err = errs.Errorf(ErrOverlap, "core: strides %v for shape %v address element offset %d twice (index %v)", t.strides, t.shape, off+lo, idx)
			return false
		}
		seen[off/64] |= 1 << (off % 64)
		return true
	})
	return err
}
