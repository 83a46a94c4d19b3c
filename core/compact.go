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

// compact is a tensor of New with its shape and strides, and its data when D has room for it.
type compact[D any] struct {
	th   tensorHold
	dims [2 * inlineNdim]int64
	data D
}

// The data sizes kept inline, each with room to align the data to Alignment.
type (
	inline64   = [64 + Alignment - 1]byte
	inline256  = [256 + Alignment - 1]byte
	inline1024 = [1024 + Alignment - 1]byte
)

// newCompact makes a zeroed C-order tensor of nbytes (allocSize's, so shape and dtype are valid)
// in Go memory: what New returns, without the checks of ValidateDesc, which the shape passed.
func newCompact(dtype DLDataType, shape []int64, nbytes int64) *Tensor {
	nd := len(shape)
	if nd > inlineNdim {
		return nil
	}
	switch {
	case nbytes == 0:
		c := new(compact[struct{}])
		return c.init(dtype, shape, nil)
	case nbytes <= 64:
		c := new(compact[inline64])
		return c.init(dtype, shape, alignUp(unsafe.Pointer(&c.data)))
	case nbytes <= 256:
		c := new(compact[inline256])
		return c.init(dtype, shape, alignUp(unsafe.Pointer(&c.data)))
	case nbytes <= 1024:
		c := new(compact[inline1024])
		return c.init(dtype, shape, alignUp(unsafe.Pointer(&c.data)))
	}
	c := new(compact[struct{}])
	return c.init(dtype, shape, alignedAlloc(nbytes))
}

// init fills in c's tensor over data (nil when the tensor has no elements) and returns it.
func (c *compact[D]) init(dtype DLDataType, shape []int64, data unsafe.Pointer) *Tensor {
	nd := len(shape)
	s, st := c.dims[:nd:nd], c.dims[nd:2*nd:2*nd]
	copy(s, shape)
	fillCStrides(st, s)
	// field by field: c is new and zeroed, and a whole-struct assignment would be a typed copy
	t := &c.th.t
	t.data, t.device, t.dtype, t.shape, t.strides, t.hold = data, CPUDevice, dtype, s, st, &c.th.h
	return t
}

// alignUp rounds p up to a multiple of Alignment.
func alignUp(p unsafe.Pointer) unsafe.Pointer {
	if mis := uintptr(p) % Alignment; mis != 0 {
		return unsafe.Add(p, Alignment-mis)
	}
	return p
}
