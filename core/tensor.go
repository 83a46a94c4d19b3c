package core

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Tensor is an n-dimensional array described the way DLPack describes one: the address of its
// first element, a device, an element type, a shape and strides counted in elements. It does not
// own a copy of its elements: it refers to memory that is either a Go allocation (kept alive by
// the Tensor itself) or foreign memory held through an owner whose release runs exactly once.
//
// A Tensor's metadata is immutable; views (Permute, Slice, Reshape, ...) are new Tensors over
// the same memory. See the package documentation for the ownership and aliasing rules.
type Tensor struct {
	data       unsafe.Pointer // first element (ByteOffset folded in on addressable devices)
	byteOffset uint64         // kept only for devices whose Data is an opaque handle
	device     DLDevice
	dtype      DLDataType
	shape      []int64
	strides    []int64
	flags      Flags
	hold       *hold
	keep       any // a Go value that owns or keeps the memory alive (WrapKeep)
}

// Desc describes memory to wrap as a Tensor: the fields of a DLTensor, in Go form.
type Desc struct {
	// Data is the base address (or opaque handle) of the memory.
	Data unsafe.Pointer
	// ByteOffset is added to Data to reach the first element.
	ByteOffset uint64
	// Device is where the memory lives.
	Device DLDevice
	// DType is the element type.
	DType DLDataType
	// Shape is the size of each dimension; len(Shape) is the number of dimensions.
	Shape []int64
	// Strides, in elements, one per dimension; nil means compact row-major (C order).
	Strides []int64
	// Flags carries FlagReadOnly, FlagIsCopied and FlagIsSubbyteTypePadded.
	Flags Flags
}

// Wrap makes a Tensor over memory that Go did not allocate: C memory, a memory map, device
// memory, a buffer another library owns. It validates d as untrusted input (see ValidateDesc).
// release, if not nil, is called exactly once: when the last holder of the memory (the tensor,
// its views and the values attached to them) is released or becomes unreachable, or before
// Wrap returns an error. With a nil release the caller keeps the memory alive itself.
func Wrap(d Desc, release func()) (*Tensor, error) { return wrap(d, release, true) }

// WrapExplicit is Wrap for bridges that always release the tensor they make, such as a call that
// imports its arguments and releases them when it returns, or a registry of handles whose entries
// are released by their owner: release runs exactly once, when the tensor and every holder made
// from it have let go, as with Wrap, but the tensor itself carries no garbage-collector cleanup.
// A WrapExplicit tensor that becomes unreachable without Release keeps its memory forever (views
// and attached values made from it still let go of theirs when collected). Registering that cleanup
// is most of the cost of Wrap for small tensors; use Wrap unless every path releases.
func WrapExplicit(d Desc, release func()) (*Tensor, error) { return wrap(d, release, false) }

// wrap is Wrap, with the collector's cleanup or without it.
func wrap(d Desc, release func(), cleanup bool) (*Tensor, error) {
	if release == nil {
		return fromDesc(d)
	}
	var (
		t    *Tensor
		oh   *ownedHold
		room []int64 // for the copies of shape and strides
	)
	if cleanup {
		// the cleanup's argument, the hold, must be an allocation of its own: one inside the
		// tensor's would keep the tensor reachable
		m := new(meta)
		t, oh, room = &m.th.t, &ownedHold{o: owner{release: release}}, m.dims[:]
	} else {
		r := &explicitTensor{oh: ownedHold{o: owner{release: release}}} // one allocation
		t, oh, room = &r.t, &r.oh, r.room[:]
	}
	if err := validateDesc(&d, room); err != nil {
		release()
		return nil, err
	}
	oh.init()
	t.set(&d, &oh.h)
	if cleanup {
		runtime.AddCleanup(t, func(h *hold) { h.let() }, t.hold)
	}
	return t, nil
}

// ownedHold is a new owner with its first hold, allocated together.
type ownedHold struct {
	o owner
	h hold
}

func (oh *ownedHold) init() {
	if !oh.o.lent() {
		liveOwners.Add(1)
	}
	oh.o.retain()
	oh.h.owner = &oh.o
}

// explicitTensor is what WrapExplicit allocates: the tensor, its owner and its hold, and room for
// its shape and strides up to inlineNdim dimensions.
type explicitTensor struct {
	t    Tensor
	oh   ownedHold
	room [2 * inlineNdim]int64
}

// WrapKeep makes a Tensor over memory that a Go value owns or keeps alive (a *mat.Dense's slice,
// a *tensor.Dense's array, an ORT value): the tensor and all its views hold keep, so the memory
// lives as long as any of them is reachable. If keep itself holds foreign memory through Attach,
// the chain is complete: foreign memory outlives every tensor and value built over it. d is
// validated like Wrap's.
func WrapKeep(d Desc, keep any) (*Tensor, error) {
	t, err := fromDesc(d)
	if err != nil {
		return nil, err
	}
	t.keep = keep
	return t, nil
}

// fromDesc validates d and builds a tensor with a hold on no owner, in one allocation with it and
// with its shape and strides up to inlineNdim dimensions.
func fromDesc(d Desc) (*Tensor, error) {
	m := new(meta)
	if err := validateDesc(&d, m.dims[:]); err != nil {
		return nil, err
	}
	t := &m.th.t
	t.set(&d, &m.th.h)
	return t, nil
}

// tensorHold is a tensor and its hold in one allocation, for the tensors no cleanup watches (over
// Go memory, or foreign memory the caller keeps alive). A tensor whose cleanup lets go of its hold
// (Wrap with a release) must have a hold of its own: a cleanup whose argument lies in the
// tensor's allocation keeps the tensor reachable, and never runs.
type tensorHold struct {
	t Tensor
	h hold
}

// set fills in t from a validated d, whose Shape and Strides t now shares, with hold h. (Field by
// field: t is new and zeroed, and assigning a whole Tensor would be a typed copy through the
// stack.)
func (t *Tensor) set(d *Desc, h *hold) {
	t.data, t.byteOffset, t.device, t.dtype = d.Data, d.ByteOffset, d.Device, d.DType
	t.shape, t.strides, t.flags, t.hold = d.Shape, d.Strides, d.Flags, h
}

func errNdim(nd int) error { return errs.Errorf(ErrNdim, "core: ndim = %d exceeds %d", nd, MaxNdim) }

// ValidateDesc checks a description of memory as untrusted input and returns it normalised:
// strides filled in (C order when nil), ByteOffset folded into Data on devices whose Data is an
// address, shapes and slices copied. It refuses, with errors wrapping ErrInvalid that name the
// field and value: too many dimensions, negative sizes, sizes or element offsets that overflow
// int64, unknown dtypes or devices, strides of the wrong length, NULL data with elements, and
// memory ranges that wrap around the address space (on devices whose Data is an opaque handle,
// byte offsets into its buffer below 0 or from 2^64).
func ValidateDesc(d Desc) (Desc, error) {
	err := validateDesc(&d, nil)
	return d, err
}

// validateDesc is ValidateDesc in place, copying shape and strides into buf where it has room for
// both (WrapExplicitWith's inline arrays), or else into a new allocation.
func validateDesc(d *Desc, buf []int64) error {
	if len(d.Shape) > MaxNdim {
		return errNdim(len(d.Shape))
	}
	if err := d.DType.Validate(); err != nil {
		return err
	}
	if d.Flags&FlagIsSubbyteTypePadded != 0 && d.DType.SubByte() {
		return errs.Errorf(ErrSubByte, "core: %s elements padded to a byte each (FlagIsSubbyteTypePadded); only packed ones are read", d.DType)
	}
	if !d.Device.DeviceType.Known() {
		return errs.Errorf(ErrDevice, "core: device_type = %d is not a DLPack device", d.Device.DeviceType)
	}
	if d.Device.DeviceID < 0 {
		return errs.Errorf(ErrDevice, "core: device_id = %d is negative", d.Device.DeviceID)
	}
	n, err := numElements(d.Shape)
	if err != nil {
		return err
	}
	if d.Strides != nil && len(d.Strides) != len(d.Shape) {
		return errs.Errorf(ErrStrides, "core: %d strides for ndim = %d", len(d.Strides), len(d.Shape))
	}
	nd := len(d.Shape)
	if buf == nil || len(buf) < 2*nd {
		buf = make([]int64, 2*nd) // the copies of shape and strides, in one allocation
	}
	shape, strides := buf[:nd:nd], buf[nd:2*nd:2*nd]
	copy(shape, d.Shape)
	if d.Strides == nil {
		fillCStrides(strides, shape)
	} else {
		copy(strides, d.Strides)
	}
	d.Shape, d.Strides = shape, strides
	if n == 0 {
		// empty: data and strides are irrelevant; an offset is dropped rather than folded, so
		// that no address is computed from a pointer that need not point anywhere
		if d.Device.DeviceType.addressable() {
			d.ByteOffset = 0
		}
		return nil
	}
	if d.Data == nil {
		return errs.Errorf(ErrNullData, "core: data is NULL for %d elements", n)
	}
	var blo, bhi int64 // the bytes the elements span, relative to the first element: [blo, bhi)
	if d.DType.SubByte() {
		if !contiguous(shape, strides, false) {
			return errs.Errorf(ErrStrides, "core: sub-byte dtype %s needs compact C-order strides, got %v", d.DType, strides)
		}
		nbits, ok := mul(n, int64(d.DType.Bits)*int64(d.DType.Lanes))
		if !ok {
			return errs.Errorf(ErrOverflow, "core: the bits of %d elements of %s overflow int64", n, d.DType)
		}
		bhi = bitsToBytes(nbits)
	} else {
		lo, hi, err := extent(shape, strides)
		if err != nil {
			return err
		}
		size := int64(d.DType.Size())
		var ok1, ok2, ok3 bool
		blo, ok1 = mul(lo, size)
		bhi, ok2 = mul(hi, size)
		bhi, ok3 = add(bhi, size)
		if !ok1 || !ok2 || !ok3 {
			return errs.Errorf(ErrOverflow, "core: the byte extent of shape %v, strides %v, itemsize %d overflows int64", shape, strides, size)
		}
	}
	// the first element, as an address (or, for an opaque handle, as an offset into its buffer),
	// plus the byte extent must stay within [0, 2^64)
	base, first := uint64(0), d.ByteOffset
	if d.Device.DeviceType.addressable() {
		base = uint64(uintptr(d.Data))
		first = base + d.ByteOffset
	}
	if first < base || (blo < 0 && uint64(-blo) > first) || first+uint64(bhi) < first {
		if !d.Device.DeviceType.addressable() {
			return errs.Errorf(ErrBounds, "core: byte_offset %d with byte extent [%d, %d) reaches outside [0, 2^64) of the buffer %#x", d.ByteOffset, blo, bhi, uintptr(d.Data))
		}
		return errs.Errorf(ErrBounds, "core: data %#x + byte_offset %d with byte extent [%d, %d) wraps around the address space", base, d.ByteOffset, blo, bhi)
	}
	if d.Device.DeviceType.addressable() && d.ByteOffset != 0 {
		d.Data = unsafe.Add(d.Data, d.ByteOffset)
		d.ByteOffset = 0
	}
	return nil
}

// Data returns the address of the first element (for device memory, a device address; for
// devices whose memory is an opaque handle, that handle, with ByteOffset beside it).
func (t *Tensor) Data() unsafe.Pointer { return t.data }

// ByteOffset is 0 except on devices whose Data is an opaque handle (OpenCL, Vulkan, ...), where
// the first element lies ByteOffset bytes into the buffer.
func (t *Tensor) ByteOffset() uint64 { return t.byteOffset }

// Device returns where the memory lives.
func (t *Tensor) Device() DLDevice { return t.device }

// DType returns the element type.
func (t *Tensor) DType() DLDataType { return t.dtype }

// Ndim returns the number of dimensions (0 for a scalar).
func (t *Tensor) Ndim() int { return len(t.shape) }

// Shape returns a copy of the sizes of the dimensions.
func (t *Tensor) Shape() []int64 { return append([]int64{}, t.shape...) }

// Strides returns a copy of the strides, in elements.
func (t *Tensor) Strides() []int64 { return append([]int64{}, t.strides...) }

// Dim returns the size of dimension i.
func (t *Tensor) Dim(i int) int64 { return t.shape[i] }

// Stride returns the stride of dimension i, in elements.
func (t *Tensor) Stride(i int) int64 { return t.strides[i] }

// Flags returns the DLPack flags (FlagReadOnly, FlagIsCopied, FlagIsSubbyteTypePadded).
func (t *Tensor) Flags() Flags { return t.flags }

// ReadOnly reports whether the memory must not be written through this tensor.
func (t *Tensor) ReadOnly() bool { return t.flags&FlagReadOnly != 0 }

// Len returns the number of elements (1 for a scalar, 0 for an empty tensor).
func (t *Tensor) Len() int64 {
	n := int64(1)
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// Empty reports whether the tensor has no elements.
func (t *Tensor) Empty() bool { return t.Len() == 0 }

// IsContiguous reports whether the elements are compact in row-major (C) order. Dimensions of
// size 1 may carry any stride; an empty tensor is always contiguous.
func (t *Tensor) IsContiguous() bool { return contiguous(t.shape, t.strides, false) }

// IsFortranContiguous reports whether the elements are compact in column-major (Fortran) order.
func (t *Tensor) IsFortranContiguous() bool { return contiguous(t.shape, t.strides, true) }

// NumBytes returns the bytes the elements occupy when compact: Len times the element size, or
// the packed size for sub-byte dtypes. A view that repeats elements (BroadcastTo, zero strides)
// may have more elements than memory can hold: where that count of bytes does not fit in an
// int64, NumBytes returns math.MaxInt64.
func (t *Tensor) NumBytes() int64 {
	if !t.dtype.SubByte() {
		// in bytes, not bits: for a compact tensor this is its validated byte extent, which
		// counting bits first could overflow
		if n, ok := mul(t.Len(), int64(t.dtype.Size())); ok {
			return n
		}
		return math.MaxInt64
	}
	return bitsToBytes(t.Len() * int64(t.dtype.Bits) * int64(t.dtype.Lanes)) // fits: validated
}

// bitsToBytes is the bytes that nbits packed bits take: nbits/8 rounded up (nbits+7 could
// overflow).
func bitsToBytes(nbits int64) int64 { return nbits/8 + min(nbits%8, 1) }

// HostAccessible reports whether the CPU can address the elements directly.
func (t *Tensor) HostAccessible() bool { return t.device.DeviceType.HostAccessible() }

// Released reports whether Release was called on this tensor.
func (t *Tensor) Released() bool { return t.hold.dropped.Load() }

// Foreign reports whether the memory has an owner whose release this tensor's holders share:
// memory from Wrap or WrapExplicit with a release function, an import, memory.NewUninit's mapped blocks
// (and the memory maps and device buffers that readers and adapters wrap that way). Memory that
// Go allocated (a Lease's included), and memory wrapped without a release (Wrap with a nil
// release, WrapKeep), is not foreign here, even where it lies outside Go's heap.
func (t *Tensor) Foreign() bool { return t.hold.owner != nil && !t.hold.owner.lent() }

// Release lets go of this tensor's hold on its memory. Foreign memory is freed (its producer's
// release or deleter runs) once every holder, this tensor's views and attached values included,
// has let go. Release is idempotent and safe to call from any goroutine; after it, the typed
// accessors return ErrReleased. Tensors that are not released are let go when unreachable.
func (t *Tensor) Release() { t.hold.let() }

// String describes the tensor in one line, like "Tensor(float32, [2 3], cpu:0)".
func (t *Tensor) String() string {
	s := fmt.Sprintf("Tensor(%s, %v, %s", t.dtype, t.shape, t.device)
	if !t.IsContiguous() {
		s += fmt.Sprintf(", strides=%v", t.strides)
	}
	if t.ReadOnly() {
		s += ", read-only"
	}
	if t.Released() {
		s += ", released"
	}
	return s + ")"
}
