package memory

import (
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// At returns the element of the host tensor t at idx, whatever t's dtype, converted to
// complex128 by Copy's rules: a real value has a zero imaginary part and true is 1. It needs no
// type parameter, so code that cannot instantiate generics (notebooks) can read any tensor;
// core.At is the typed, faster form.
func At(t *core.Tensor, idx ...int64) (complex128, error) {
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

// SetAt stores v at idx of the writable host tensor t, converted to t's dtype by Copy's rules:
// a real dtype keeps the real part (integers truncate it toward zero, saturate at their limits
// and take NaN as 0), and bool is "not zero". core.Set is the typed, faster form.
func SetAt(t *core.Tensor, v complex128, idx ...int64) error {
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
