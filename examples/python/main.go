// Command python is a Go library for Python: built with -buildmode=c-shared, it registers two Go
// functions that example.py calls on NumPy arrays and PyTorch tensors, without copying:
//
//	go build -buildmode=c-shared -o /tmp/libexample.so ./examples/python
//	PYTHONPATH=pyexchange/python python3 examples/python/example.py /tmp/libexample.so
//
// (python3: any interpreter with NumPy and PyTorch.) Each function is an ordinary Go function
// registered once, in init, with pyexchange.Register: no //export, no C types, no handles.
// Python passes any object with __dlpack__ where a *core.Tensor is expected, and gets tensor
// results back as NumPy arrays (or torch tensors) over Go's memory. Go errors become Python
// exceptions; ErrSingular becomes a ValueError through pyexchange.MapError.
package main

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// ErrSingular is returned by solve for a matrix Gonum cannot solve with; Python sees a
// ValueError (see init).
var ErrSingular = errors.New("example: matrix is singular")

func init() {
	pyexchange.MapError(ErrSingular, pyexchange.ValueError)
	pyexchange.MustRegister("solve", solve, `solve(a, b)

Solves a·x = b with Gonum (LU with partial pivoting) and returns x: a is an n×n float64 matrix,
b a float64 vector of n elements or an n×k matrix. a and b are read in place (a copy is made
only for layouts Gonum cannot read, such as Fortran order); x is Gonum's memory, handed to
Python without a copy.`)
	pyexchange.MustRegister("scale", scale, `scale(x, factor)

Multiplies every element of x (float32 or float64, any strides) by factor, in place.`)
}

func main() {
	fmt.Println("build me with -buildmode=c-shared and load me from Python: see example.py")
}

// solve solves a·x = b with Gonum.
func solve(a, b *core.Tensor) (*core.Tensor, error) {
	am, err := gonumx.ToDense(a) // zero-copy for a C-order float64 matrix
	if err != nil {
		return nil, fmt.Errorf("example: solve: a: %w", err)
	}
	if r, c := am.Dims(); r != c {
		return nil, fmt.Errorf("example: solve: a is %d×%d, want a square matrix (%w)", r, c, core.ErrArgument)
	}
	var lu mat.LU
	lu.Factorize(am)
	if b.Ndim() == 1 {
		bv, err := gonumx.ToVecDense(b)
		if err != nil {
			return nil, fmt.Errorf("example: solve: b: %w", err)
		}
		var x mat.VecDense
		if err := lu.SolveVecTo(&x, false, bv); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSingular, err)
		}
		return gonumx.FromVecDense(&x) // a tensor over x's memory: no copy
	}
	bm, err := gonumx.ToDense(b)
	if err != nil {
		return nil, fmt.Errorf("example: solve: b: %w", err)
	}
	var x mat.Dense
	if err := lu.SolveTo(&x, false, bm); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	return gonumx.FromDense(&x)
}

// scale multiplies x by factor in place, whatever its strides.
func scale(x *core.Tensor, factor float64) error {
	switch x.DType() {
	case core.Float64:
		return each(x, func(p *float64) { *p *= factor })
	case core.Float32:
		return each(x, func(p *float32) { *p *= float32(factor) })
	}
	return fmt.Errorf("example: scale: dtype %v, want float32 or float64 (%w)", x.DType(), core.ErrTypeMismatch)
}

// each calls f with the address of every element of t, in C order, whatever the strides. The
// tensor's memory is held by the caller (pyexchange holds every argument for the whole call).
func each[T float32 | float64](t *core.Tensor, f func(*T)) error {
	span, first, err := core.Span[T](t) // refuses read-only tensors
	if err != nil {
		return err
	}
	strides := t.Strides()
	for idx := range core.Indices(t.Shape()) {
		off := first
		for i, x := range idx {
			off += x * strides[i]
		}
		f(&span[off])
	}
	return nil
}
