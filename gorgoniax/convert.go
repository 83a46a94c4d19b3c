package gorgoniax

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// FromDense returns a tensor over d's memory, without copying: the shape and strides are the
// Dense's own, so Gorgonia's views (Slice), thunked transposes (T) and column-major tensors are
// exported as they lie in memory, and writes through either are seen by the other. A Dense with
// no elements gives an empty tensor (Dense.Data, which panics on those, is never called). The
// tensor keeps d alive.
//
// It refuses, with errors wrapping adapters.ErrUnsupported, dtypes DLPack has no type for
// (String, Uintptr, UnsafePointer), masked tensors, and memory the CPU cannot read; a Dense
// whose access pattern reaches outside its array is refused with core.ErrBounds.
//
// Sharing is always possible, so adapters.ZeroCopyOnly() changes nothing; adapters.AlwaysCopy()
// makes a C-order copy in Go memory, and adapters.ReportCopy reports which happened.
func FromDense(d *tensor.Dense, opts ...adapters.Option) (*core.Tensor, error) {
	t, err := fromDense(d)
	if err != nil {
		return nil, err
	}
	return adapters.Share(t, opts...)
}

func fromDense(d *tensor.Dense) (*core.Tensor, error) {
	if d == nil {
		return nil, errs.Errorf(core.ErrNil, "gorgoniax: nil *tensor.Dense")
	}
	dt, err := FromDType(d.Dtype())
	if err != nil {
		return nil, err
	}
	switch {
	case !d.IsNativelyAccessible():
		return nil, errs.Errorf(core.ErrNotHost, "%w", errs.Errorf(adapters.ErrUnsupported, "gorgoniax: the Dense's memory is not accessible to the CPU"))
	case len(d.Mask()) > 0 && d.IsMasked():
		return nil, errs.Errorf(adapters.ErrUnsupported, "gorgoniax: a masked Dense (DLPack has no mask; drop it with SetMask(nil))")
	}
	raw := d.Header.Raw
	n := len(raw) / dt.Size()
	gshape, gstrides := d.Shape(), d.Strides()
	ndim := len(gshape)
	if len(gstrides) != ndim && ndim > 0 {
		return nil, errs.Errorf(core.ErrStrides, "gorgoniax: %d strides %v for shape %v", len(gstrides), gstrides, gshape)
	}
	shape, strides := make([]int64, ndim), make([]int64, ndim)
	empty := false
	var hi int
	for i, s := range gshape {
		shape[i], strides[i] = int64(s), int64(gstrides[i])
		switch {
		case s < 0:
			return nil, errs.Errorf(core.ErrShape, "gorgoniax: shape %v has a negative dimension", gshape)
		case s == 0:
			empty = true
		case s == 1:
			strides[i] = 1 // any stride is right for a dimension of size 1; Gorgonia's may be stale
		case gstrides[i] < 0:
			return nil, errs.Errorf(core.ErrStrides, "gorgoniax: negative strides %v for shape %v", gstrides, gshape)
		case gstrides[i] > 0 && s-1 > (math.MaxInt-hi)/gstrides[i]:
			return nil, errs.Errorf(core.ErrOverflow, "gorgoniax: shape %v with strides %v overflows int", gshape, gstrides)
		default:
			hi += (s - 1) * gstrides[i]
		}
	}
	desc := core.Desc{Device: core.CPUDevice, DType: dt, Shape: shape, Strides: strides}
	if !empty {
		if hi >= n {
			return nil, errs.Errorf(core.ErrBounds, "gorgoniax: shape %v with strides %v reaches element %d of an array of %d", gshape, gstrides, hi, n)
		}
		desc.Data = unsafe.Pointer(unsafe.SliceData(raw))
	}
	return core.WrapKeep(desc, d)
}

// Shareable reports whether ToDense shares t's memory under the default policy, and if not,
// why: t must be a live, writable host tensor of a dtype Gorgonia has (see ToDType) whose
// strides are positive wherever the dimension has more than one element. This is the promise
// the adapter keeps and its tests check.
func Shareable(t *core.Tensor) (ok bool, why string) {
	switch {
	case t == nil:
		return false, "gorgoniax: nil tensor"
	case t.Released():
		return false, "gorgoniax: the tensor was released"
	case !t.HostAccessible():
		return false, fmt.Sprintf("gorgoniax: %s memory is not host memory", t.Device())
	case t.ReadOnly():
		return false, "gorgoniax: the tensor is read-only and Gorgonia has no read-only tensors"
	}
	if _, err := ToDType(t.DType()); err != nil {
		return false, err.Error()
	}
	if t.Empty() {
		return true, ""
	}
	for i, s := range t.Strides() {
		if t.Dim(i) > 1 && s <= 0 {
			return false, fmt.Sprintf("gorgoniax: strides %v for shape %v: Gorgonia has no negative or zero strides", t.Strides(), t.Shape())
		}
	}
	return true, ""
}

// ToDense returns a *tensor.Dense over t's memory when Gorgonia can describe it (see Shareable):
// a row-major Dense for C order, a column-major one (DataOrder ColMajor) for Fortran order, and
// a Gorgonia view (IsView, DataOrder NonContiguous) with t's strides for any other positive
// strides. Writes through either are seen by the other, and the Dense keeps t's memory alive
// (foreign memory included) while it is reachable.
//
// Otherwise (negative or zero strides, read-only memory) it copies into a compact row-major
// Dense, or refuses: adapters.ZeroCopyOnly() makes it return an error wrapping
// adapters.ErrCopyRequired. adapters.AlwaysCopy() forces a copy; adapters.ReportCopy(&b) says
// whether one was made. Device memory is refused (core.ErrNotHost), and dtypes Gorgonia has no
// type for with adapters.ErrUnsupported.
//
// What holds foreign memory is the Dense this function returns, not Gorgonia's values derived
// from it: d.Slice, views and materialised iterators share the memory but do not keep it alive.
// Keep the Dense (or the tensor) reachable while you use them (runtime.KeepAlive after the last
// use), or Clone what must outlive it.
func ToDense(t *core.Tensor, opts ...adapters.Option) (*tensor.Dense, error) {
	o := adapters.Apply(opts...)
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "gorgoniax: nil tensor")
	}
	if t.Released() {
		return nil, errs.Errorf(core.ErrReleased, "gorgoniax: the tensor was released")
	}
	gdt, err := ToDType(t.DType())
	if err != nil {
		return nil, err
	}
	copied, err := o.Choose(Shareable(t)) // reported once the Dense is made
	if err != nil {
		return nil, err
	}
	src := t
	if copied {
		if !t.HostAccessible() {
			return nil, errs.Errorf(core.ErrNotHost, "gorgoniax: cannot copy %s memory", t.Device())
		}
		if src, err = memory.Contiguous(t); err != nil {
			return nil, fmt.Errorf("gorgoniax: copy: %w", err)
		}
	}
	d, err := denseOver(src, gdt)
	if err != nil {
		return nil, err
	}
	if err := core.Attach(d, src); err != nil {
		return nil, fmt.Errorf("gorgoniax: %w", err)
	}
	o.Report(copied)
	return d, nil
}

// denseOver builds a Dense over the memory of src, whose strides Gorgonia can describe.
func denseOver(src *core.Tensor, gdt tensor.Dtype) (*tensor.Dense, error) {
	ndim := src.Ndim()
	shape := make([]int, ndim)
	for i := range shape {
		shape[i] = int(src.Dim(i))
	}
	if src.Empty() {
		return tensor.New(tensor.Of(gdt), tensor.WithShape(shape...), tensor.WithBacking(backing(gdt, nil, 0))), nil
	}
	if ndim == 0 {
		return tensor.New(tensor.Of(gdt), tensor.WithShape(), tensor.WithBacking(backing(gdt, src.Data(), 1))), nil
	}
	if src.IsContiguous() {
		n := int(src.Len())
		return tensor.New(tensor.Of(gdt), tensor.WithShape(shape...), tensor.WithBacking(backing(gdt, src.Data(), n))), nil
	}
	strides := make([]int, ndim)
	span := 1
	for i, s := range src.Strides() {
		strides[i] = int(s)
		if shape[i] == 1 {
			strides[i] = 1
		}
		span += (shape[i] - 1) * strides[i] // positive strides: the first element is the lowest
	}
	if src.IsFortranContiguous() {
		d := tensor.New(tensor.Of(gdt), tensor.WithShape(shape...), tensor.WithBacking(backing(gdt, src.Data(), span)))
		d.AP = tensor.MakeAP(tensor.Shape(shape), strides, tensor.ColMajor, tensor.NotTriangle)
		return d, nil
	}
	// A Gorgonia view: a flat parent over the span, sliced whole, with t's strides.
	parent := tensor.New(tensor.Of(gdt), tensor.WithShape(span), tensor.WithBacking(backing(gdt, src.Data(), span)))
	v, err := parent.Slice(nil)
	if err != nil {
		return nil, fmt.Errorf("gorgoniax: view of %v: %w", src, err)
	}
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("gorgoniax: Gorgonia's Slice returned %T", v)
	}
	d.AP = tensor.MakeAP(tensor.Shape(shape), strides, tensor.MakeDataOrder(tensor.NonContiguous), tensor.NotTriangle)
	// Gorgonia records a view's parent as a bare address; keep the parent alive with the view.
	runtime.AddCleanup(d, func(*tensor.Dense) {}, parent)
	return d, nil
}
