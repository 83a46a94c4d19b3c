package gonumx

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// element is the set of element types Gonum stores.
type element interface{ float32 | float64 | complex128 }

// wrapMatrix makes a [rows, cols] tensor with strides [stride, 1] over data, after checking that
// the description is one Gonum itself would accept and that every element lies inside data.
func wrapMatrix[T element](data []T, rows, cols, stride int, keep any, what string) (*core.Tensor, error) {
	if rows < 0 || cols < 0 {
		return nil, errs.Errorf(core.ErrShape, "gonumx: %s has %d rows and %d columns: a size is negative", what, rows, cols)
	}
	d := core.Desc{Device: core.CPUDevice, DType: core.DTypeOf[T](),
		Shape: []int64{int64(rows), int64(cols)}, Strides: []int64{int64(max(stride, cols)), 1}}
	if rows == 0 || cols == 0 {
		return core.WrapKeep(d, keep)
	}
	if stride < cols {
		return nil, errs.Errorf(core.ErrStrides, "gonumx: %s has stride %d < %d columns", what, stride, cols)
	}
	if rows-1 > (math.MaxInt-cols)/stride {
		return nil, errs.Errorf(core.ErrOverflow, "gonumx: %s of %d rows with stride %d overflows int", what, rows, stride)
	}
	if need := (rows-1)*stride + cols; len(data) < need {
		return nil, errs.Errorf(core.ErrBounds, "gonumx: %s of %d×%d with stride %d needs %d elements, has %d", what, rows, cols, stride, need, len(data))
	}
	d.Strides[0] = int64(stride)
	d.Data = unsafe.Pointer(unsafe.SliceData(data))
	return core.WrapKeep(d, keep)
}

// wrapVector makes an [n] tensor with strides [inc] over data, after the same checks.
func wrapVector[T element](data []T, n, inc int, keep any, what string) (*core.Tensor, error) {
	if n < 0 {
		return nil, errs.Errorf(core.ErrShape, "gonumx: %s has negative length %d", what, n)
	}
	d := core.Desc{Device: core.CPUDevice, DType: core.DTypeOf[T](), Shape: []int64{int64(n)},
		Strides: []int64{int64(max(inc, 1))}}
	if n == 0 {
		return core.WrapKeep(d, keep)
	}
	if inc <= 0 {
		return nil, errs.Errorf(core.ErrStrides, "gonumx: %s has increment %d (must be positive)", what, inc)
	}
	if n-1 > (math.MaxInt-1)/inc {
		return nil, errs.Errorf(core.ErrOverflow, "gonumx: %s of length %d with increment %d overflows int", what, n, inc)
	}
	if need := (n-1)*inc + 1; len(data) < need {
		return nil, errs.Errorf(core.ErrBounds, "gonumx: %s of length %d with increment %d needs %d elements, has %d", what, n, inc, need, len(data))
	}
	d.Strides[0] = int64(inc)
	d.Data = unsafe.Pointer(unsafe.SliceData(data))
	return core.WrapKeep(d, keep)
}

// shared finishes a From conversion: the error of wrapping, or the options applied to the
// tensor over the value's memory (adapters.Share).
func shared(t *core.Tensor, err error, opts []adapters.Option) (*core.Tensor, error) {
	if err != nil {
		return nil, err
	}
	return adapters.Share(t, opts...)
}

// FromDense returns a float64 tensor of shape [r, c] and strides [Stride, 1] over m's memory,
// without copying: writes through either are seen by the other. A sliced m (m.Slice) keeps its
// stride, so the tensor sees exactly m's elements. An empty m (the zero value, or a nil pointer)
// gives a [0, 0] tensor. The tensor keeps m alive.
//
// Like every From function of this package it can always share, so adapters.ZeroCopyOnly()
// changes nothing, adapters.AlwaysCopy() makes it copy into Go memory, and adapters.ReportCopy
// reports which happened. It fails only on an m whose raw matrix breaks Gonum's invariants (a
// stride below the column count, or data too short), which Gonum's constructors never produce
// but SetRawMatrix does not check.
func FromDense(m *mat.Dense, opts ...adapters.Option) (*core.Tensor, error) {
	if m == nil || m.IsEmpty() {
		t, err := wrapMatrix[float64](nil, 0, 0, 0, m, "mat.Dense")
		return shared(t, err, opts)
	}
	g := m.RawMatrix()
	t, err := wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, m, "mat.Dense")
	return shared(t, err, opts)
}

// FromGeneral returns a float64 tensor over g's storage, without copying, after checking g:
// non-negative sizes, Stride ≥ Cols, and Data long enough for every element. The tensor keeps g
// alive, and with it whatever memory g keeps alive (the blas values the To functions return
// hold the memory they were built over). The other blas From functions take their argument the
// same way.
func FromGeneral(g *blas64.General, opts ...adapters.Option) (*core.Tensor, error) {
	if g == nil {
		return nil, errs.Errorf(core.ErrNil, "gonumx: nil *blas64.General")
	}
	t, err := wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, g, "blas64.General")
	return shared(t, err, opts)
}

// FromVecDense returns a float64 tensor of shape [n] and strides [Inc] over v's memory, without
// copying. An empty v gives a [0] tensor. The tensor keeps v alive. Options and errors as
// FromDense.
func FromVecDense(v *mat.VecDense, opts ...adapters.Option) (*core.Tensor, error) {
	if v == nil || v.IsEmpty() {
		t, err := wrapVector[float64](nil, 0, 1, v, "mat.VecDense")
		return shared(t, err, opts)
	}
	r := v.RawVector()
	t, err := wrapVector(r.Data, r.N, r.Inc, v, "mat.VecDense")
	return shared(t, err, opts)
}

// FromVector returns a float64 tensor over v's storage, without copying, after checking it:
// N ≥ 0, Inc > 0 and Data long enough.
func FromVector(v *blas64.Vector, opts ...adapters.Option) (*core.Tensor, error) {
	if v == nil {
		return nil, errs.Errorf(core.ErrNil, "gonumx: nil *blas64.Vector")
	}
	t, err := wrapVector(v.Data, v.N, v.Inc, v, "blas64.Vector")
	return shared(t, err, opts)
}

// FromCDense returns a complex128 tensor of shape [r, c] and strides [Stride, 1] over m's
// memory, without copying. The tensor keeps m alive. Options and errors as FromDense.
func FromCDense(m *mat.CDense, opts ...adapters.Option) (*core.Tensor, error) {
	if m == nil || m.IsEmpty() {
		t, err := wrapMatrix[complex128](nil, 0, 0, 0, m, "mat.CDense")
		return shared(t, err, opts)
	}
	g := m.RawCMatrix()
	t, err := wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, m, "mat.CDense")
	return shared(t, err, opts)
}

// FromCGeneral returns a complex128 tensor over g's storage, without copying, after checking it.
func FromCGeneral(g *cblas128.General, opts ...adapters.Option) (*core.Tensor, error) {
	if g == nil {
		return nil, errs.Errorf(core.ErrNil, "gonumx: nil *cblas128.General")
	}
	t, err := wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, g, "cblas128.General")
	return shared(t, err, opts)
}

// FromCVector returns a complex128 tensor of shape [N] and strides [Inc] over v's storage,
// without copying, after checking it.
func FromCVector(v *cblas128.Vector, opts ...adapters.Option) (*core.Tensor, error) {
	if v == nil {
		return nil, errs.Errorf(core.ErrNil, "gonumx: nil *cblas128.Vector")
	}
	t, err := wrapVector(v.Data, v.N, v.Inc, v, "cblas128.Vector")
	return shared(t, err, opts)
}

// FromGeneral32 returns a float32 tensor over g's storage, without copying, after checking it.
// blas32 is Gonum's only float32 storage (mat has no float32 matrix type).
func FromGeneral32(g *blas32.General, opts ...adapters.Option) (*core.Tensor, error) {
	if g == nil {
		return nil, errs.Errorf(core.ErrNil, "gonumx: nil *blas32.General")
	}
	t, err := wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, g, "blas32.General")
	return shared(t, err, opts)
}

// FromVector32 returns a float32 tensor of shape [N] and strides [Inc] over v's storage,
// without copying, after checking it.
func FromVector32(v *blas32.Vector, opts ...adapters.Option) (*core.Tensor, error) {
	if v == nil {
		return nil, errs.Errorf(core.ErrNil, "gonumx: nil *blas32.Vector")
	}
	t, err := wrapVector(v.Data, v.N, v.Inc, v, "blas32.Vector")
	return shared(t, err, opts)
}

// FromSymDense exports the array a symmetric matrix stores, without copying: an N×N float64
// tensor with strides [Stride, 1] of which only the triangle uplo names is meaningful
// (blas.Upper: elements (i, j) with j ≥ i; blas.Lower: j ≤ i). The other triangle holds
// whatever the memory held and is not the matrix's; element (i, j) of the matrix is element
// (min(i,j), max(i,j)) of the array when uplo is Upper. Use Materialize for the full matrix.
func FromSymDense(s *mat.SymDense, opts ...adapters.Option) (t *core.Tensor, uplo blas.Uplo, err error) {
	if s == nil || s.IsEmpty() {
		t, err = wrapMatrix[float64](nil, 0, 0, 0, s, "mat.SymDense")
		t, err = shared(t, err, opts)
		return t, blas.Upper, err
	}
	r := s.RawSymmetric()
	t, err = wrapMatrix(r.Data, r.N, r.N, r.Stride, s, "mat.SymDense")
	t, err = shared(t, err, opts)
	return t, r.Uplo, err
}

// FromTriDense exports the array a triangular matrix stores, without copying: an N×N float64
// tensor with strides [Stride, 1] of which only the triangle uplo names is the matrix's; the
// elements of the other triangle are zero in the matrix whatever the array holds. When diag is
// blas.Unit the diagonal elements of the matrix are 1 and the array's diagonal is not read.
// Use Materialize for the full matrix.
func FromTriDense(m *mat.TriDense, opts ...adapters.Option) (t *core.Tensor, uplo blas.Uplo, diag blas.Diag, err error) {
	if m == nil || m.IsEmpty() {
		t, err = wrapMatrix[float64](nil, 0, 0, 0, m, "mat.TriDense")
		t, err = shared(t, err, opts)
		return t, blas.Upper, blas.NonUnit, err
	}
	r := m.RawTriangular()
	t, err = wrapMatrix(r.Data, r.N, r.N, r.Stride, m, "mat.TriDense")
	t, err = shared(t, err, opts)
	return t, r.Uplo, r.Diag, err
}

// FromBandDense exports a band matrix's band storage, without copying: a float64 tensor of
// shape [min(Rows, Cols+kl), kl+1+ku] and strides [Stride, 1]. Element (i, j) of the matrix,
// for -kl ≤ j-i ≤ ku, is element (i, j-i+kl) of the tensor; elements outside the band are zero
// and are not stored; the corners of the storage array hold nothing of the matrix. Use
// Materialize for the full matrix.
func FromBandDense(b *mat.BandDense, opts ...adapters.Option) (t *core.Tensor, kl, ku int, err error) {
	if b == nil || b.IsEmpty() {
		t, err = wrapMatrix[float64](nil, 0, 0, 0, b, "mat.BandDense")
		t, err = shared(t, err, opts)
		return t, 0, 0, err
	}
	r := b.RawBand()
	rows := min(r.Rows, r.Cols+r.KL)
	t, err = wrapMatrix(r.Data, rows, r.KL+1+r.KU, r.Stride, b, "mat.BandDense")
	t, err = shared(t, err, opts)
	return t, r.KL, r.KU, err
}

// FromDiagDense returns the diagonal of a diagonal matrix as a float64 tensor of shape [N] and
// strides [Inc], without copying. Every element is meaningful: element i is the matrix's
// element (i, i); all others are zero.
func FromDiagDense(d *mat.DiagDense, opts ...adapters.Option) (*core.Tensor, error) {
	if d == nil || d.IsEmpty() {
		t, err := wrapVector[float64](nil, 0, 1, d, "mat.DiagDense")
		return shared(t, err, opts)
	}
	r := d.RawBand()
	t, err := wrapVector(r.Data, r.Rows, r.Stride, d, "mat.DiagDense")
	return shared(t, err, opts)
}

// FromMatrix converts any mat.Matrix to a float64 tensor of shape [r, c]. It shares memory with
// a *mat.Dense (as FromDense), a *mat.VecDense (an [n, 1] column over its memory), and a
// mat.Transpose of either (the transposed view: a Fortran-order tensor over the same memory).
// Any other matrix has no storage that means what the matrix means, and is copied with
// Materialize, or refused with adapters.ErrCopyRequired under adapters.ZeroCopyOnly().
// adapters.AlwaysCopy() copies every matrix; adapters.ReportCopy says which happened.
func FromMatrix(m mat.Matrix, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	if m == nil {
		return nil, errs.Errorf(core.ErrNil, "gonumx: nil mat.Matrix")
	}
	var view *core.Tensor
	var err error
	switch v := m.(type) {
	case *mat.Dense:
		view, err = FromDense(v)
	case *mat.VecDense:
		var vec *core.Tensor
		if vec, err = FromVecDense(v); err == nil {
			view, err = vec.Reshape(int64(v.Len()), 1)
			vec.Release() // view holds the memory
		}
	case mat.Untransposer:
		// a matrix without dense storage under the transpose is copied below; a broken one fails
		inner, err2 := FromMatrix(v.Untranspose(), adapters.ZeroCopyOnly())
		switch {
		case err2 == nil:
			view, err = inner.Transpose()
		case !errors.Is(err2, adapters.ErrCopyRequired):
			return nil, fmt.Errorf("%w (the matrix under the transpose %T)", err2, m)
		}
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), "gonumx: ") {
			return nil, err
		}
		return nil, fmt.Errorf("gonumx: view of %T: %w", m, err)
	}
	copied, err := o.Choose(view != nil, fmt.Sprintf("gonumx: %T has no dense float64 storage", m))
	if err != nil {
		return nil, err
	}
	if copied {
		view = Materialize(m)
	}
	o.Report(copied)
	return view, nil
}

// Materialize copies the elements of any mat.Matrix, as the matrix means them (both triangles of
// a SymDense, the zeros of a TriDense or BandDense), into a new C-order float64 tensor in Go
// memory, flagged core.FlagIsCopied. It aliases nothing.
func Materialize(m mat.Matrix) *core.Tensor {
	r, c := m.Dims()
	data := make([]float64, r*c)
	if r > 0 && c > 0 {
		mat.NewDense(r, c, data).Copy(m)
	}
	t := core.MustFromSlice(data, int64(r), int64(c))
	t, _ = t.WithFlags(core.FlagIsCopied) // t is fresh and not released: WithFlags cannot fail
	return t
}
