package core

import "unsafe"

// The tensors of New are made in as few allocations as their size allows: the tensor, its hold
// and its shape and strides (up to inlineNdim dimensions) always in one, and small data in the
// same one, after them. A small tensor is then one allocation instead of three, which is most of
// what making it costs (and what the collector is left with). The data still holds no Go
// pointers, so the collector scans only the front of the allocation.

// inlineNdim is the most dimensions whose shape and strides are kept inside the tensor's
// allocation.
const inlineNdim = 4

// meta is a tensor, its hold, and room for its shape and strides.
type meta struct {
	th   tensorHold
	dims [2 * inlineNdim]int64
}

// compact is a tensor of New with its data, for which D has room.
type compact[D any] struct {
	meta
	data D
}

// The data sizes kept inline, each with room to align the data to Alignment.
type (
	inline64   = [64 + Alignment - 1]byte
	inline256  = [256 + Alignment - 1]byte
	inline1024 = [1024 + Alignment - 1]byte
)

// newCompact makes a zeroed C-order tensor of nbytes in Go memory, its data aligned to
// Alignment: what New returns once allocSize has checked dtype and shape.
func newCompact(dtype DLDataType, shape []int64, nbytes int64) *Tensor {
	var (
		t         *Tensor
		s, st     []int64
		data      unsafe.Pointer
		nd, small = len(shape), len(shape) <= inlineNdim
	)
	switch {
	case small && nbytes > 0 && nbytes <= 64:
		t, s, st, data = newInline[inline64](nd)
	case small && nbytes > 0 && nbytes <= 256:
		t, s, st, data = newInline[inline256](nd)
	case small && nbytes > 0 && nbytes <= 1024:
		t, s, st, data = newInline[inline1024](nd)
	default:
		t, s, st = newMeta(nd)
		if nbytes > 0 {
			data = alignedAlloc(nbytes)
		}
	}
	copy(s, shape)
	fillCStrides(st, s)
	t.data, t.device, t.dtype = data, CPUDevice, dtype
	return t
}

// newInline allocates a compact tensor whose data lives in D, with room for shape and strides of
// nd (≤ inlineNdim) dimensions, and returns its aligned data address beside what meta.tensor
// returns.
func newInline[D any](nd int) (t *Tensor, shape, strides []int64, data unsafe.Pointer) {
	c := new(compact[D])
	t, shape, strides = c.tensor(nd)
	return t, shape, strides, alignUp(unsafe.Pointer(&c.data))
}

// tensor ties m's tensor to its hold and to shape and strides of nd (≤ inlineNdim) dimensions in
// m, for the caller to fill in. (Field by field: m is new and zeroed, and assigning a whole
// Tensor would be a typed copy.)
func (m *meta) tensor(nd int) (t *Tensor, shape, strides []int64) {
	t = &m.th.t
	t.hold, t.shape, t.strides = &m.th.h, m.dims[:nd:nd], m.dims[nd:2*nd:2*nd]
	return t, t.shape, t.strides
}

// newMeta allocates a tensor with its hold and room for shape and strides of nd dimensions
// (inline up to inlineNdim), for the caller to fill in: what a tensor over memory that is not its
// own needs.
func newMeta(nd int) (t *Tensor, shape, strides []int64) {
	if nd <= inlineNdim {
		return new(meta).tensor(nd)
	}
	th := new(tensorHold)
	dims := make([]int64, 2*nd)
	t, shape, strides = &th.t, dims[:nd:nd], dims[nd:]
	t.hold, t.shape, t.strides = &th.h, shape, strides
	return t, shape, strides
}

// alignUp rounds p up to a multiple of Alignment.
func alignUp(p unsafe.Pointer) unsafe.Pointer {
	if mis := uintptr(p) % Alignment; mis != 0 {
		return unsafe.Add(p, Alignment-mis)
	}
	return p
}
