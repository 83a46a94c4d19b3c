package gpu

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/dlpack-go/dlpack/internal/copyplan"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// side is where a tensor's memory is, for a copy.
type side int

const (
	pageable side = iota // host memory the driver does not know: Go memory, C memory, a map
	pinned               // page-locked host memory (kDLCUDAHost)
	device               // device memory (kDLCUDA) or managed memory (kDLCUDAManaged)
)

func classify(t *core.Tensor) (side, int, error) {
	switch d := t.Device(); d.DeviceType {
	case core.CPU:
		return pageable, 0, nil
	case core.CUDAHost:
		return pinned, 0, nil
	case core.CUDA, core.CUDAManaged:
		return device, int(d.DeviceID), nil
	default:
		return 0, 0, errs.Errorf(ErrUnsupportedDevice, "gpu: %s memory is not CUDA memory", d)
	}
}

func (s side) kind() cuda.Kind {
	if s == device {
		return cuda.Device
	}
	return cuda.Host
}

// Copy writes src's elements into dst, synchronously: when it returns, dst holds them. Either
// may be on the host (kDLCPU, kDLCUDAHost) or a CUDA device (kDLCUDA, kDLCUDAManaged), with any
// strides (offsets, Fortran order, permutations, negative and zero strides in src); shapes must
// match and dst must be writable and must not overlap itself (ErrOverlap). dst and src may
// overlap: src is then read whole into Go memory before dst is written. Different dtypes are
// converted as memory.Copy converts them, on the host, under package adapters' cast rule:
// a cast that keeps every value (adapters.Preserves) by default, any other only with
// adapters.AllowCast() among opts (otherwise an error wrapping adapters.ErrCast). No other
// option applies to a copy into a given destination.
//
// How the elements travel (the copy is correct for every layout; these are the fast paths):
//   - same dtype and layouts that line up as rectangles (both compact in the same order, or
//     rows of at least 512 bytes): one cuMemcpy (compact) or cuMemcpy2D per rectangle, no
//     staging;
//   - device to host otherwise: the source's whole span, when it is at most about twice the
//     elements' bytes (transposes, reversals, broadcasts), else only its elements gathered by
//     rectangles into a compact buffer of the same order, then memory.Copy on the host;
//   - host to device otherwise: the elements are arranged on the host in the destination's own
//     order (its exact layout when that layout has no gaps, else a compact one of the same order)
//     and sent in one copy or by rectangles, so that bytes between the destination's elements
//     are never written;
//   - device to device between layouts that do not line up (or different dtypes): through
//     the host.
//
// Pageable host memory is copied with the synchronous driver calls, which the driver stages
// through its own pinned buffers; pinned memory (AllocPinned) is copied directly and fastest.
func Copy(dst, src *core.Tensor, opts ...adapters.Option) error {
	return copyTensors(dst, src, Stream{}, false, opts)
}

// CopyOn is Copy ordered on stream s: the copy starts after the work queued on s so far and,
// when it only involves device and pinned memory along a fast path, it is queued on s and
// CopyOn returns at once: dst holds the elements once s has reached that point (synchronise
// s, or hand s to the consumer). Both tensors must stay reachable (and unreleased) until then.
// A copy that involves pageable host memory, a staging buffer or a dtype conversion first
// waits for s, then completes before CopyOn returns. NoSync and a closed stream are refused
// (ErrStream). opts are Copy's.
func CopyOn(dst, src *core.Tensor, s Stream, opts ...adapters.Option) error {
	if s.noSync {
		return errs.Errorf(ErrStream, "gpu: copy on the no-sync stream")
	}
	if err := s.usable(); err != nil {
		return inOp("copy", err)
	}
	return copyTensors(dst, src, s, true, opts)
}

// spanSlack is how many bytes beyond twice the elements' own a device source's span may have
// for gather to copy the span whole rather than gather the elements by rectangles.
var spanSlack int64 = 1 << 20

// mover carries out driver copies for one copy operation.
type mover struct {
	dev         int
	stream      Stream
	async       bool
	wroteDevice bool // a synchronous copy wrote device memory: wait for it before returning
}

// settle turns an asynchronous mover into a synchronous one, after waiting for its stream.
func (m *mover) settle() error {
	if !m.async {
		return nil
	}
	m.async = false
	return m.stream.sync(m.dev)
}

// memcpy carries out one rectangle copy; the tests of the copy planning replace it with a copy
// in host memory where no GPU exists.
var memcpy = cuda.Memcpy

// syncLegacy waits for the legacy default stream of device dev: the synchronous driver copies
// into device memory (and memsets) may return before the device has finished writing. The tests
// of the copy planning replace it where no GPU exists.
var syncLegacy = func(dev int) error { return cuda.StreamSynchronize(dev, cuda.StreamLegacy) }

// run copies the rectangles of p from src (first element at srcFirst) to dst.
func (m *mover) run(p rectPlan, dst uintptr, dk cuda.Kind, src uintptr, sk cuda.Kind) error {
	if dk == cuda.Device && !m.async {
		m.wroteDevice = true
	}
	h := cuda.Stream(m.stream.Handle())
	return p.each(func(d, s int64) error {
		return memcpy(m.dev, cuda.Copy2D{
			Dst: uintptr(int64(dst) + d), DstKind: dk, DstPitch: p.dpitch,
			Src: uintptr(int64(src) + s), SrcKind: sk, SrcPitch: p.spitch,
			Width: p.width, Height: p.height,
		}, h, m.async)
	})
}

func copyTensors(dst, src *core.Tensor, s Stream, async bool, opts []adapters.Option) error {
	if dst == nil || src == nil {
		return errs.Errorf(core.ErrNil, "gpu: copy of a nil tensor")
	}
	if err := adapters.Apply(opts...).CheckCast(src.DType(), dst.DType(), "the destination"); err != nil {
		return inOp("copy", err)
	}
	if err := copyChecked(dst, src, s, async); err != nil {
		return inOp(fmt.Sprintf("copy %s to %s", src.Device(), dst.Device()), err)
	}
	return nil
}

func copyChecked(dst, src *core.Tensor, s Stream, async bool) error {
	switch {
	case src.Released() || dst.Released():
		return core.ErrReleased
	case dst.ReadOnly():
		return core.ErrReadOnly
	case !slices.Equal(dst.Shape(), src.Shape()):
		return errs.Errorf(core.ErrShape, "gpu: cannot copy shape %v into shape %v", src.Shape(), dst.Shape())
	}
	dside, ddev, err := classify(dst)
	if err != nil {
		return err
	}
	sside, sdev, err := classify(src)
	if err != nil {
		return err
	}
	// every fast path writes dst directly, a host dst included: refuse aliasing elements before
	if err := dst.CheckNoSelfOverlap(); err != nil {
		return err
	}
	if src.Len() == 0 {
		return nil
	}
	// held until the copy is done (for an asynchronous copy, until it is queued: the caller
	// keeps the operands until the stream has run it, see CopyOn)
	h, err := core.Hold(dst, src)
	if err != nil {
		return err
	}
	defer h.Release()
	dev := sdev
	if dside == device {
		dev = ddev
	}
	m := &mover{dev: dev, stream: s, async: async && dside != pageable && sside != pageable}
	if overlaps(dst, src) && (dside == device || sside == device || dst.Device() != src.Device()) {
		// dst's writes could land on elements of src not read yet, and the driver's copies do
		// not promise memmove semantics (memory.Copy handles overlap on one host device
		// only): read src whole into Go memory first
		if err := m.settle(); err != nil {
			return err
		}
		tmp, err := core.New(src.DType(), src.Shape()...)
		if err != nil {
			return err
		}
		defer runtime.KeepAlive(tmp) // the driver reads it through an address only
		if err := m.copy(tmp, src, pageable, sside, false); err != nil {
			return err
		}
		src, sside, async = tmp, pageable, false
	}
	if err := m.copy(dst, src, dside, sside, async); err != nil {
		return err
	}
	if m.wroteDevice {
		return syncLegacy(dev)
	}
	return nil
}

// overlaps reports whether the bytes of a's and b's elements may intersect, whatever their
// devices: CUDA's unified address space gives host, pinned, device and managed memory distinct
// addresses, so equal addresses are the same memory.
func overlaps(a, b *core.Tensor) bool {
	alo, ahi := a.ByteRange()
	blo, bhi := b.ByteRange()
	return alo < bhi && blo < ahi
}

// copy picks the path of one copy; async is whether the caller asked for a stream-ordered copy.
func (m *mover) copy(dst, src *core.Tensor, dside, sside side, async bool) error {
	s, dev := m.stream, m.dev
	if async && !m.async {
		if err := s.sync(dev); err != nil {
			return err
		}
	}
	if dside != device && sside != device {
		if err := m.settle(); err != nil {
			return err
		}
		return memory.Copy(dst, src)
	}
	if dst.DType().SubByte() || src.DType().SubByte() {
		if dst.DType() != src.DType() || !dst.IsContiguous() || !src.IsContiguous() {
			return errs.Errorf(adapters.ErrUnsupported, "gpu: sub-byte %s copies only between C-contiguous tensors of the same dtype", src.DType())
		}
		n := src.NumBytes()
		return m.run(rectPlan{width: n, height: 1, dpitch: n, spitch: n}, address(dst), dside.kind(), address(src), sside.kind())
	}
	same := dst.DType() == src.DType()
	size := int64(src.DType().Size())
	if same {
		p, ok := planRects(dst.Shape(), dst.Strides(), src.Strides(), size)
		if ok && (p.efficient() || (dside == device && sside == device)) {
			return m.run(p, address(dst), dside.kind(), address(src), sside.kind())
		}
	}
	if err := m.settle(); err != nil {
		return err
	}
	switch {
	case sside == device && dside == device:
		h, err := core.New(src.DType(), src.Shape()...)
		if err != nil {
			return err
		}
		if err := gather(m, h, src); err != nil {
			return err
		}
		err = scatter(m, dst, h)
		runtime.KeepAlive(h)
		return err
	case sside == device:
		return gather(m, dst, src)
	default:
		return scatter(m, dst, src)
	}
}

// gather copies device tensor src into host tensor dst through a staging buffer in Go memory.
func gather(m *mover, dst, src *core.Tensor) error {
	shape, st := src.Shape(), src.Strides()
	size := int64(src.DType().Size())
	lo, hi := copyplan.Extent(shape, st)
	span := (hi - lo + 1) * size
	var view *core.Tensor
	if span <= 2*src.NumBytes()+spanSlack {
		// the whole span in one copy; the host picks the elements out of it
		buf, err := core.New(core.DTypeOf[uint8](), span)
		if err != nil {
			return err
		}
		p := rectPlan{width: span, height: 1, dpitch: span, spitch: span}
		if err := m.run(p, address(buf), cuda.Host, uintptr(int64(address(src))+lo*size), cuda.Device); err != nil {
			return err
		}
		if view, err = overBuffer(buf, -lo*size, src.DType(), shape, st); err != nil {
			return err
		}
	} else {
		// a sparse view: only its elements, by rectangles, into a compact buffer of the same
		// order; broadcast (stride 0) dimensions are read once and broadcast again on the host
		read := append([]int64{}, shape...)
		for i := range read {
			if st[i] == 0 {
				read[i] = 1
			}
		}
		cst := compactLike(read, st)
		clo, chi := copyplan.Extent(read, cst)
		buf, err := core.New(core.DTypeOf[uint8](), (chi-clo+1)*size)
		if err != nil {
			return err
		}
		first := uintptr(int64(address(buf)) - clo*size)
		p, ok := planRects(read, cst, st, size)
		if !ok {
			// rows of src overlap (a sliding window): copy them an element at a time
			p, ok = planElements(read, cst, st, size)
		}
		if !ok {
			return errs.Errorf(core.ErrStrides, "gpu: no copy plan for strides %v", st)
		}
		if err := m.run(p, first, cuda.Host, address(src), cuda.Device); err != nil {
			return err
		}
		vst := append([]int64{}, cst...)
		for i := range vst {
			if st[i] == 0 {
				vst[i] = 0
			}
		}
		if view, err = overBuffer(buf, -clo*size, src.DType(), shape, vst); err != nil {
			return err
		}
	}
	return memory.Copy(dst, view)
}

// scatter copies host tensor src into device tensor dst through a staging buffer in Go
// memory laid out in dst's order, so that only dst's elements are written on the device.
func scatter(m *mover, dst, src *core.Tensor) error {
	shape, st := dst.Shape(), dst.Strides()
	size := int64(dst.DType().Size())
	lay, exact := st, dense(shape, st)
	if !exact {
		lay = compactLike(shape, st)
	}
	lo, hi := copyplan.Extent(shape, lay)
	span := (hi - lo + 1) * size
	buf, err := core.New(core.DTypeOf[uint8](), span)
	if err != nil {
		return err
	}
	view, err := overBuffer(buf, -lo*size, dst.DType(), shape, lay)
	if err != nil {
		return err
	}
	if err := memory.Copy(view, src); err != nil {
		return err
	}
	defer runtime.KeepAlive(buf) // the driver reads it through an address only
	first := uintptr(int64(address(buf)) - lo*size)
	if exact {
		p := rectPlan{width: span, height: 1, dpitch: span, spitch: span}
		return m.run(p, uintptr(int64(address(dst))+lo*size), cuda.Device, address(buf), cuda.Host)
	}
	p, ok := planRects(shape, st, lay, size)
	if !ok {
		return errs.Errorf(core.ErrStrides, "gpu: no copy plan for strides %v", st)
	}
	return m.run(p, address(dst), cuda.Device, first, cuda.Host)
}

// overBuffer is a host tensor over the bytes of buf, its first element off bytes in.
func overBuffer(buf *core.Tensor, off int64, dtype core.DLDataType, shape, strides []int64) (*core.Tensor, error) {
	return core.WrapKeep(core.Desc{Data: buf.Data(), ByteOffset: uint64(off), Device: core.CPUDevice,
		DType: dtype, Shape: shape, Strides: strides}, buf)
}
