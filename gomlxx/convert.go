package gomlxx

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// ErrGoMLX is wrapped by the errors GoMLX itself reports (a tensor whose backend was finalized,
// a buffer the backend refuses to hand over), with GoMLX's message.
var ErrGoMLX = errors.New("gomlxx: GoMLX reported an error")

// ShareableFromTensor reports whether FromTensor shares t's memory under the default policy, and
// when it does not, why: t must be a live GoMLX tensor with local storage (a Go slice the tensor
// owns: made by FromShape, FromFlatDataAndDimensions, FromValue, LocalClone, ToLocal, or
// brought to the host by MutableFlatData) and no shared backend buffer. The memory of a shared
// or on-device buffer belongs to the backend, which reuses or frees it when the tensor is
// finalized or donated, and no view of it could survive that: FromTensor copies it, and Take
// moves it without a copy.
func ShareableFromTensor(t *tensors.Tensor) (ok bool, why string) {
	err := withState(t, func(st *state) error {
		if _, err := st.dtypeOf(); err != nil {
			return err
		}
		why = st.whyNotLocal()
		return nil
	})
	if err != nil {
		return false, err.Error()
	}
	return why == "", why
}

// FromTensor converts a GoMLX tensor to a core tensor.
//
// When t has local storage (see ShareableFromTensor) the result is a writable view of that memory,
// without a copy: the same Go slice GoMLX reads and writes, in C order with t's dimensions.
// FromTensor then drops any on-device copy (t.InvalidateOnDevice), so that the local storage is
// the tensor's only truth and writes through the view are what GoMLX computes on next. The view
// holds the slice: it stays valid whatever GoMLX later does to t. It aliases t as long as t keeps
// that storage; see the package documentation for what detaches them.
//
// Otherwise (a shared or on-device buffer: the results of a computation, a tensor once used as
// input on a backend that shares host memory) it copies the elements, read through
// t.ConstFlatData, into new Go memory flagged core.FlagIsCopied; adapters.ZeroCopyOnly() makes
// it fail with adapters.ErrCopyRequired instead, and adapters.AlwaysCopy() copies local storage
// too; adapters.ReportCopy(&b) says which happened. A nil tensor is refused with core.ErrNil, a
// finalized one with core.ErrReleased, and a dtype GoMLX v0.28 cannot hold on the host with
// adapters.ErrUnsupported.
//
// FromTensor reads t's state under GoMLX's lock of t (inside ConstFlatData), so it may race
// FinalizeAll on another goroutine: it then returns either a good result (the view or copy of
// the live tensor) or core.ErrReleased, never a torn state. (On a backend without shared buffers,
// XLA on a GPU, that read brings a tensor whose data is only on the device to local storage
// first, as any GoMLX read does; the view is then of that storage.)
func FromTensor(t *tensors.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	var c *core.Tensor
	var copied, onDevice bool
	err := withState(t, func(st *state) error {
		dt, err := st.dtypeOf()
		if err != nil {
			return err
		}
		why := st.whyNotLocal()
		if copied, err = o.Choose(why == "", why); err != nil {
			return err
		}
		if copied {
			c, err = copyOut(st, dt)
		} else {
			c, err = view(t, st, dt)
		}
		onDevice = !copied && st.backend != nil
		return err
	})
	if err != nil {
		return nil, err
	}
	if onDevice {
		// computations must read what is written through the view, not a device copy; if t was
		// finalized since, the view was made of it while it lived and is still good
		if err := gomlxErr(t.InvalidateOnDevice()); err != nil && !errors.Is(err, core.ErrReleased) {
			c.Release()
			return nil, fmt.Errorf("%w (dropping the device copy of the tensor viewed)", err)
		}
	}
	o.Report(copied)
	return c, nil
}

// view makes a writable core tensor over the local storage st read (under t's lock).
func view(t *tensors.Tensor, st *state, dt core.DLDataType) (*core.Tensor, error) {
	d, err := flatDesc(st.flat, dt, st.dims)
	if err != nil {
		return nil, err
	}
	c, err := core.WrapKeep(d, st.flat)
	if err != nil {
		return nil, errs.Wrap("gomlxx", err, "view of %s%v", st.dtype, st.dims)
	}
	remember(t, d.Data)
	return c, nil
}

// copyOut copies the elements st read (under the tensor's lock) into new Go memory.
func copyOut(st *state, dt core.DLDataType) (*core.Tensor, error) {
	shape := make([]int64, len(st.dims))
	for i, d := range st.dims {
		shape[i] = int64(d)
	}
	dst, err := core.New(dt, shape...)
	if err != nil {
		return nil, errs.Wrap("gomlxx", err, "copy of %s%v", st.dtype, st.dims)
	}
	d, err := flatDesc(st.flat, dt, st.dims)
	if err == nil {
		var src *core.Tensor
		if src, err = core.WrapKeep(d, st.flat); err == nil {
			err = memory.Copy(dst, src)
		}
	}
	if err != nil {
		dst.Release()
		return nil, errs.Wrap("gomlxx", err, "copy of %s%v", st.dtype, st.dims)
	}
	return dst.WithFlags(core.FlagIsCopied)
}

// flatDesc describes a GoMLX flat slice as C-order host memory of dtype dt and dimensions dims,
// after checking that the slice is what the shape says.
func flatDesc(flat any, dt core.DLDataType, dims []int) (core.Desc, error) {
	v := reflect.ValueOf(flat)
	if v.Kind() != reflect.Slice || int(v.Type().Elem().Size()) != dt.Size() {
		return core.Desc{}, errs.Errorf(ErrGoMLX, "gomlxx: GoMLX gave %T as the data of a %s tensor", flat, dt)
	}
	shape := make([]int64, len(dims))
	n := 1
	for i, d := range dims {
		if d < 0 || (d > 0 && n > math.MaxInt/d) {
			return core.Desc{}, errs.Errorf(core.ErrShape, "gomlxx: GoMLX dimensions %v are negative or overflow", dims)
		}
		shape[i] = int64(d)
		n *= d
	}
	if v.Len() != n {
		return core.Desc{}, errs.Errorf(ErrGoMLX, "gomlxx: GoMLX gave %d elements for dimensions %v", v.Len(), dims)
	}
	d := core.Desc{Device: core.CPUDevice, DType: dt, Shape: shape}
	if n > 0 {
		d.Data = v.UnsafePointer()
	}
	return d, nil
}

// Take moves a GoMLX tensor's data into a core tensor, and finalizes t: afterwards t is invalid
// (t.Ok() is false) and the core tensor is the data's only holder. It copies nothing when
//
//   - t has local storage: the core tensor holds the Go slice (as FromTensor's view does), or
//   - t's data is a buffer of the pure-Go backend (gobackend) — the results of a computation, or
//     a tensor once used as an input there: Take donates the buffer (t.DonateBuffer), wraps the
//     memory the backend reports for it (Buffer.Data, a Go slice), and hands the buffer back to
//     the backend's pool (Buffer.Finalize) exactly once, when the last holder of the core tensor
//     is released or collected. The memory stays valid even if the backend is finalized first.
//
// Buffers of other backends are copied (the copy is what ConstFlatData reads) and t is then
// finalized: on a device the host cannot read them, and the shared buffers of XLA on CPU are
// native memory that the backend frees when it is itself finalized, which a core tensor could
// not see. adapters.ZeroCopyOnly() makes Take fail with adapters.ErrCopyRequired instead, leaving
// t untouched; adapters.AlwaysCopy() copies in every case (and still finalizes t);
// adapters.ReportCopy(&b) says whether a copy was made. Errors are FromTensor's; on an error t is
// left as it was, except when GoMLX fails while giving up the buffer. Like FromTensor, Take reads
// t's state under GoMLX's lock of t, and may race FinalizeAll: a tensor finalized first is
// core.ErrReleased.
func Take(t *tensors.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	var c *core.Tensor
	var copied, donating bool
	var dt core.DLDataType
	var dims []int
	var b compute.Backend
	var dev compute.DeviceNum
	err := withState(t, func(st *state) error {
		var err error
		if dt, err = st.dtypeOf(); err != nil {
			return err
		}
		switch {
		case st.whyNotLocal() == "":
			copied, _ = o.Choose(true, "") // shareable: Choose cannot fail
			if copied {
				c, err = copyOut(st, dt)
			} else {
				c, err = view(t, st, dt)
			}
		case st.goBuffer():
			if copied, _ = o.Choose(true, ""); !copied {
				donating, dims, b, dev = true, st.dims, st.backend, st.device // DonateBuffer locks t: after
				return nil
			}
			c, err = copyOut(st, dt)
		default:
			why := fmt.Sprintf("gomlxx: the tensor's data is a buffer of backend %s, not Go memory of the pure-Go backend "+
				"(a device, or native memory the backend frees when it is itself finalized)", st.backendName())
			if copied, err = o.Choose(false, why); err != nil {
				return err
			}
			c, err = copyOut(st, dt)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if donating {
		if c, err = donate(t, b, dev, dt, dims); err != nil {
			return nil, err
		}
		o.Report(false)
		return c, nil
	}
	if err := t.FinalizeAll(); err != nil {
		c.Release()
		return nil, errs.Errorf(ErrGoMLX, "gomlxx: finalizing the tensor taken: %v", err)
	}
	o.Report(copied)
	return c, nil
}

// donate takes t's buffer of backend b and wraps its memory; the buffer goes back to the backend
// when the last holder lets go. dims are t's, read before (the shape is gone once t is donated).
func donate(t *tensors.Tensor, b compute.Backend, dev compute.DeviceNum, dt core.DLDataType, dims []int) (*core.Tensor, error) {
	buf, err := t.DonateBuffer(b, dev)
	if err != nil {
		if err = gomlxErr(err); errors.Is(err, core.ErrReleased) {
			return nil, err // finalized on another goroutine since its state was read
		}
		return nil, fmt.Errorf("%w (donating the buffer)", err)
	}
	// GoMLX may have kept another copy of the data (it should not have one here): let it go
	// (FinalizeAll does nothing to a tensor DonateBuffer finalized)
	_ = t.FinalizeAll()
	release := func() { _ = buf.Finalize() }
	flat, err := buf.Data()
	if err != nil {
		release()
		return nil, errs.Errorf(ErrGoMLX, "gomlxx: the data of the donated buffer: %v", err)
	}
	d, err := flatDesc(flat, dt, dims)
	if err != nil {
		release()
		return nil, err
	}
	c, err := core.Wrap(d, release) // runs release itself on an error
	if err != nil {
		return nil, errs.Wrap("gomlxx", err, "wrapping the donated buffer")
	}
	return c, nil
}

// Shareable reports whether ToTensor hands t to GoMLX without a copy, and when it does not,
// why. GoMLX v0.28 has no constructor over memory it did not allocate (FromFlatDataAndDimensions,
// FromValue and FromRaw copy), so the only tensors that go back without a copy are views that
// FromTensor made of a GoMLX tensor's local storage, whole: t must be writable, C-contiguous,
// of the GoMLX tensor's dtype and dimensions, start at its first element, and that GoMLX tensor
// must still be live and still keep its data in that storage (see Aliases). Everything else is
// copied.
func Shareable(t *core.Tensor) (ok bool, why string) {
	if t == nil {
		return false, "gomlxx: nil tensor"
	}
	if t.Released() {
		return false, "gomlxx: the tensor was released"
	}
	_, why = origin(t)
	return why == "", why
}

// ToTensor converts a core tensor to a GoMLX tensor. When t is a whole view of a live GoMLX
// tensor's local storage (see Shareable) it returns that GoMLX tensor itself, without a copy,
// after dropping any device copy GoMLX made of it since (InvalidateOnDevice), so that the next
// computation reads what was written through the view.
// Otherwise it copies t's elements (any strides: views, negative steps, broadcasts) in C order
// through the adapters kernels into a new GoMLX tensor with local storage (tensors.FromShape) of
// t's dimensions, which shares nothing with t: adapters.ZeroCopyOnly() makes it fail with
// adapters.ErrCopyRequired instead, adapters.AlwaysCopy() copies the views it could hand back
// too, and adapters.ReportCopy(&b) says which happened. (GoMLX v0.28 has no constructor over
// memory it did not allocate: FromFlatDataAndDimensions, FromValue and FromRaw copy, and the buffers
// FromBuffer adopts are the backend's own allocations.)
//
// A nil tensor is refused with core.ErrNil, a released one with core.ErrReleased, device memory
// with core.ErrNotHost, and a dtype GoMLX has no host storage for (float8, float4, int4, float6,
// complex32, ...) with adapters.ErrUnsupported.
func ToTensor(t *core.Tensor, opts ...adapters.Option) (*tensors.Tensor, error) {
	o := adapters.Apply(opts...)
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "gomlxx: nil tensor")
	}
	if t.Released() {
		return nil, fmt.Errorf("gomlxx: %w", core.ErrReleased)
	}
	gdt, err := ToDType(t.DType())
	if err != nil {
		return nil, err
	}
	if !storable(gdt) {
		return nil, errs.Errorf(adapters.ErrUnsupported, "gomlxx: GoMLX v0.28 has no host storage for dtype %s (%s)", gdt, t.DType())
	}
	gt, why := origin(t)
	copied, err := o.Choose(gt != nil, why)
	if err != nil {
		return nil, err
	}
	if !copied {
		// computations must read what the view holds, not a device copy made since
		if err := gt.InvalidateOnDevice(); err != nil {
			return nil, errs.Errorf(ErrGoMLX, "gomlxx: dropping the device copy of the tensor handed back: %v", err)
		}
		o.Report(false)
		return gt, nil
	}
	if !t.HostAccessible() {
		return nil, errs.Errorf(core.ErrNotHost, "gomlxx: cannot copy %s memory into GoMLX", t.Device())
	}
	if _, err := memory.AllocSize(t.DType(), t.Shape()...); err != nil {
		return nil, errs.Wrap("gomlxx", err, "copy of %s into GoMLX", t)
	}
	dims := make([]int, t.Ndim())
	for i := range dims {
		dims[i] = int(t.Dim(i))
	}
	out := tensors.FromShape(shapes.Make(gdt, dims...))
	var cerr error
	err = out.MutableFlatData(func(flat any) {
		d, err := flatDesc(flat, t.DType(), dims)
		if err != nil {
			cerr = err
			return
		}
		dst, err := core.WrapKeep(d, flat)
		if err != nil {
			cerr = err
			return
		}
		cerr = memory.Copy(dst, t)
	})
	if err != nil {
		return nil, errs.Errorf(ErrGoMLX, "gomlxx: %v", err)
	}
	if cerr != nil {
		return nil, errs.Wrap("gomlxx", cerr, "copy of %s into GoMLX", t)
	}
	o.Report(true)
	return out, nil
}

// Aliases reports whether c's elements lie in the memory where g keeps its data now: its local
// storage, or a backend buffer in host memory. It is false once g was finalized, or after GoMLX
// moved g's data elsewhere (see the package documentation), and for empty tensors. It reads g's
// state under GoMLX's lock of g (see FromTensor).
func Aliases(g *tensors.Tensor, c *core.Tensor) bool {
	if g == nil || c == nil || c.Released() || c.Empty() || !c.HostAccessible() {
		return false
	}
	var lo, hi uintptr
	err := withState(g, func(st *state) error {
		if (st.whyNotLocal() != "" && !st.sharesHost()) || !storable(st.dtype) {
			return nil
		}
		if v := reflect.ValueOf(st.flat); v.Kind() == reflect.Slice && v.Len() > 0 {
			lo = uintptr(v.UnsafePointer())
			hi = lo + uintptr(v.Len())*v.Type().Elem().Size()
		}
		return nil
	})
	if err != nil || lo == hi {
		return false
	}
	clo, chi := c.ByteRange()
	return clo < hi && lo < chi
}

// origin returns the GoMLX tensor whose local storage t is, whole, or why there is none.
func origin(t *core.Tensor) (*tensors.Tensor, string) {
	const noCtor = "gomlxx: GoMLX v0.28 has no tensor constructor over caller memory " +
		"(FromFlatDataAndDimensions and FromRaw copy); only a whole view FromTensor made of a GoMLX tensor's local storage goes back without a copy"
	switch {
	case !t.HostAccessible():
		return nil, fmt.Sprintf("gomlxx: %s memory is not host memory", t.Device())
	case t.ReadOnly():
		return nil, "gomlxx: the tensor is read-only and GoMLX tensors are mutable"
	case t.Empty():
		return nil, noCtor
	}
	g := recall(t.Data())
	if g == nil {
		return nil, noCtor
	}
	const moved = "gomlxx: the GoMLX tensor this memory came from was finalized or moved its data (a computation, MaterializeOnDevice)"
	why := ""
	err := withState(g, func(st *state) error {
		if st.whyNotLocal() != "" {
			why = moved
			return nil
		}
		if gdt, err := FromDType(st.dtype); err != nil || gdt != t.DType() || !storable(st.dtype) {
			why = fmt.Sprintf("gomlxx: dtype %s is not the GoMLX tensor's %s", t.DType(), st.dtype)
			return nil
		}
		same := len(st.dims) == t.Ndim() && t.IsContiguous()
		for i := 0; same && i < len(st.dims); i++ {
			same = int64(st.dims[i]) == t.Dim(i)
		}
		if !same {
			why = fmt.Sprintf("gomlxx: shape %v strides %v is not the whole C-order storage of the GoMLX tensor %s%v",
				t.Shape(), t.Strides(), st.dtype, st.dims)
			return nil
		}
		if v := reflect.ValueOf(st.flat); v.Kind() != reflect.Slice || v.Len() == 0 || v.UnsafePointer() != t.Data() {
			why = "gomlxx: the GoMLX tensor this memory came from keeps its data elsewhere now"
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, moved
	case why != "":
		return nil, why
	}
	return g, ""
}
