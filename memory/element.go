package memory

import (
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/x448/float16"
)

// At returns the element of the host tensor t at idx, whatever t's dtype, converted to
// complex128 by Copy's rules: a real value has a zero imaginary part and true is 1. It needs no
// type parameter, so code that cannot instantiate generics (notebooks) can read any tensor. It
// holds t while it reads and allocates nothing; it costs about what core.At does.
func At(t *core.Tensor, idx ...int64) (complex128, error) {
	p, ok := elementAddr(t, idx, false)
	if !ok {
		return slowAt(t, idx)
	}
	h, err := core.Hold(t)
	if err != nil {
		return slowAt(t, idx) // released since: the slow path says so
	}
	v, ok := load(p, t.DType())
	h.Release()
	if !ok {
		return slowAt(t, idx)
	}
	return v, nil
}

// SetAt stores v at idx of the writable host tensor t, converted to t's dtype by Copy's rules:
// a real dtype keeps the real part (integers truncate it toward zero, saturate at their limits
// and take NaN as 0), and bool is "not zero". It holds t while it writes and allocates nothing;
// it costs about what core.Set does.
func SetAt(t *core.Tensor, v complex128, idx ...int64) error {
	p, ok := elementAddr(t, idx, true)
	if !ok {
		return slowSetAt(t, v, idx)
	}
	h, err := core.Hold(t)
	if err != nil {
		return slowSetAt(t, v, idx) // released since: the slow path says so
	}
	ok = store(p, t.DType(), v)
	h.Release()
	if !ok {
		return slowSetAt(t, v, idx)
	}
	return nil
}

// elementAddr is the address of t's element at idx, when t is a live host tensor (writable if
// write) and idx is in range; otherwise ok is false and the slow path says what is wrong.
func elementAddr(t *core.Tensor, idx []int64, write bool) (p unsafe.Pointer, ok bool) {
	if t == nil || t.Released() || !t.HostAccessible() || (write && t.ReadOnly()) {
		return nil, false
	}
	off, err := t.Offset(idx...)
	if err != nil {
		return nil, false
	}
	dt := t.DType()
	if dt.Lanes != 1 || dt.Bits%8 != 0 || dt.Bits == 0 {
		return nil, false
	}
	return unsafe.Add(t.Data(), off*int64(dt.Bits/8)), true
}

// load reads the element at p as complex128, as Copy into a complex128 tensor does (the
// loaders of cast.go); ok is false for a dtype it does not know.
func load(p unsafe.Pointer, dt core.DLDataType) (complex128, bool) {
	switch dt {
	case core.Float64:
		return complex(*(*float64)(p), 0), true
	case core.Float32:
		return complex(float64(*(*float32)(p)), 0), true
	case core.Complex128:
		return *(*complex128)(p), true
	case core.Complex64:
		return complex128(*(*complex64)(p)), true
	case core.Float16:
		return complex(float64((*(*float16.Float16)(p)).Float32()), 0), true
	case core.BFloat16:
		return complex(float64((*(*core.BF16)(p)).Float32()), 0), true
	case core.Int8:
		return complex(float64(*(*int8)(p)), 0), true
	case core.Int16:
		return complex(float64(*(*int16)(p)), 0), true
	case core.Int32:
		return complex(float64(*(*int32)(p)), 0), true
	case core.Int64:
		return complex(float64(*(*int64)(p)), 0), true
	case core.Uint8:
		return complex(float64(*(*uint8)(p)), 0), true
	case core.Uint16:
		return complex(float64(*(*uint16)(p)), 0), true
	case core.Uint32:
		return complex(float64(*(*uint32)(p)), 0), true
	case core.Uint64:
		return complex(float64(*(*uint64)(p)), 0), true
	case core.Bool:
		if *(*uint8)(p) != 0 {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// store writes v at p converted to dt, as Copy from a complex128 tensor does (the storers of
// cast.go); ok is false for a dtype it does not know.
func store(p unsafe.Pointer, dt core.DLDataType, v complex128) bool {
	switch dt {
	case core.Float64:
		*(*float64)(p) = real(v)
	case core.Float32:
		*(*float32)(p) = float32(real(v))
	case core.Complex128:
		*(*complex128)(p) = v
	case core.Complex64:
		*(*complex64)(p) = complex64(v)
	default:
		st, ok := storers[dt]
		if !ok {
			return false
		}
		st(unsafe.Slice((*byte)(p), dt.Size()), fromComplex(v))
	}
	return true
}

// slowAt is At through Copy, for what the fast path does not take: it says what is wrong.
func slowAt(t *core.Tensor, idx []int64) (complex128, error) {
	if t == nil {
		return 0, errs.Errorf(core.ErrArgument, "memory: At of a nil tensor")
	}
	e, err := element(t, idx)
	if err != nil {
		return 0, err
	}
	defer release(e, t)
	out := core.Scalar(complex128(0))
	if err := Copy(out, e); err != nil {
		return 0, err
	}
	return core.At[complex128](out)
}

// slowSetAt is SetAt through Copy, for what the fast path does not take.
func slowSetAt(t *core.Tensor, v complex128, idx []int64) error {
	if t == nil {
		return errs.Errorf(core.ErrArgument, "memory: SetAt of a nil tensor")
	}
	e, err := element(t, idx)
	if err != nil {
		return err
	}
	defer release(e, t)
	return Copy(e, core.Scalar(v))
}

// element returns the 0-d view of t at idx.
func element(t *core.Tensor, idx []int64) (*core.Tensor, error) {
	if len(idx) != t.Ndim() {
		return nil, errs.Errorf(core.ErrArgument, "memory: %d indices for ndim = %d", len(idx), t.Ndim())
	}
	e := t
	for _, i := range idx {
		v, err := e.Index(0, i)
		release(e, t)
		if err != nil {
			return nil, err
		}
		e = v
	}
	return e, nil
}

// release lets go of a view made on the way to an element (never of t itself).
func release(v, t *core.Tensor) {
	if v != t {
		v.Release()
	}
}
