package gonumx

import (
	"fmt"
	"math"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
)

// element is the set of element types Gonum stores.
type element interface{ float32 | float64 | complex128 }

// wrapMatrix makes a [rows, cols] tensor with strides [stride, 1] over data, after checking that
// the description is one Gonum itself would accept and that every element lies inside data.
func wrapMatrix[T element](data []T, rows, cols, stride int, keep any, what string) (*core.Tensor, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("%w: gonumx: %s has %d rows and %d columns", core.ErrShape, what, rows, cols)
	}
	d := core.Desc{Device: core.CPUDevice, DType: core.DTypeOf[T](),
		Shape: []int64{int64(rows), int64(cols)}, Strides: []int64{int64(max(stride, cols)), 1}}
	if rows == 0 || cols == 0 {
		return core.WrapKeep(d, keep)
	}
	if stride < cols {
		return nil, fmt.Errorf("%w: gonumx: %s has stride %d < %d columns", core.ErrStrides, what, stride, cols)
	}
	if rows-1 > (math.MaxInt-cols)/stride {
		return nil, fmt.Errorf("%w: gonumx: %s of %d rows with stride %d", core.ErrOverflow, what, rows, stride)
	}
	if need := (rows-1)*stride + cols; len(data) < need {
		return nil, fmt.Errorf("%w: gonumx: %s of %d×%d with stride %d needs %d elements, has %d",
			core.ErrBounds, what, rows, cols, stride, need, len(data))
	}
	d.Strides[0] = int64(stride)
	d.Data = unsafe.Pointer(unsafe.SliceData(data))
	return core.WrapKeep(d, keep)
}

// wrapVector makes an [n] tensor with strides [inc] over data, after the same checks.
func wrapVector[T element](data []T, n, inc int, keep any, what string) (*core.Tensor, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: gonumx: %s has length %d", core.ErrShape, what, n)
	}
	d := core.Desc{Device: core.CPUDevice, DType: core.DTypeOf[T](), Shape: []int64{int64(n)},
		Strides: []int64{int64(max(inc, 1))}}
	if n == 0 {
		return core.WrapKeep(d, keep)
	}
	if inc <= 0 {
		return nil, fmt.Errorf("%w: gonumx: %s has increment %d (must be positive)", core.ErrStrides, what, inc)
	}
	if n-1 > (math.MaxInt-1)/inc {
		return nil, fmt.Errorf("%w: gonumx: %s of length %d with increment %d", core.ErrOverflow, what, n, inc)
	}
	if need := (n-1)*inc + 1; len(data) < need {
		return nil, fmt.Errorf("%w: gonumx: %s of length %d with increment %d needs %d elements, has %d",
			core.ErrBounds, what, n, inc, need, len(data))
	}
	d.Strides[0] = int64(inc)
	d.Data = unsafe.Pointer(unsafe.SliceData(data))
	return core.WrapKeep(d, keep)
}

// must is for Gonum values whose storage Gonum's own constructors made: it fails only when the
// value was corrupted through SetRaw* with fields Gonum itself would reject.
func must(t *core.Tensor, err error) *core.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

// FromDense returns a float64 tensor of shape [r, c] and strides [Stride, 1] over m's memory,
// without copying: writes through either are seen by the other. A sliced m (m.Slice) keeps its
// stride, so the tensor sees exactly m's elements. An empty m (the zero value, or a nil pointer)
// gives a [0, 0] tensor. The tensor keeps m alive.
//
// FromDense panics only if m's raw matrix breaks Gonum's invariants (a stride below the column
// count, or data too short), which Gonum's constructors never produce but SetRawMatrix does not
// check; FromGeneral reports the same problems as errors.
func FromDense(m *mat.Dense) *core.Tensor {
	if m == nil || m.IsEmpty() {
		return must(wrapMatrix[float64](nil, 0, 0, 0, m, "mat.Dense"))
	}
	g := m.RawMatrix()
	return must(wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, m, "mat.Dense"))
}

// FromGeneral returns a float64 tensor over g's storage, without copying, after checking g:
// non-negative sizes, Stride ≥ Cols, and Data long enough for every element. The tensor keeps g
// alive, and with it whatever memory g keeps alive (the blas values the To functions return
// hold the memory they were built over). The other blas From functions take their argument the
// same way.
func FromGeneral(g *blas64.General) (*core.Tensor, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: gonumx: nil *blas64.General", core.ErrNil)
	}
	return wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, g, "blas64.General")
}

// FromVecDense returns a float64 tensor of shape [n] and strides [Inc] over v's memory, without
// copying. An empty v gives a [0] tensor. The tensor keeps v alive. It panics only on a v whose
// raw vector breaks Gonum's invariants (see FromDense; FromVector reports errors).
func FromVecDense(v *mat.VecDense) *core.Tensor {
	if v == nil || v.IsEmpty() {
		return must(wrapVector[float64](nil, 0, 1, v, "mat.VecDense"))
	}
	r := v.RawVector()
	return must(wrapVector(r.Data, r.N, r.Inc, v, "mat.VecDense"))
}

// FromVector returns a float64 tensor over v's storage, without copying, after checking it:
// N ≥ 0, Inc > 0 and Data long enough.
func FromVector(v *blas64.Vector) (*core.Tensor, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: gonumx: nil *blas64.Vector", core.ErrNil)
	}
	return wrapVector(v.Data, v.N, v.Inc, v, "blas64.Vector")
}

// FromCDense returns a complex128 tensor of shape [r, c] and strides [Stride, 1] over m's
// memory, without copying. The tensor keeps m alive. It panics only on a corrupted m (see
// FromDense; FromCGeneral reports errors).
func FromCDense(m *mat.CDense) *core.Tensor {
	if m == nil || m.IsEmpty() {
		return must(wrapMatrix[complex128](nil, 0, 0, 0, m, "mat.CDense"))
	}
	g := m.RawCMatrix()
	return must(wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, m, "mat.CDense"))
}

// FromCGeneral returns a complex128 tensor over g's storage, without copying, after checking it.
func FromCGeneral(g *cblas128.General) (*core.Tensor, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: gonumx: nil *cblas128.General", core.ErrNil)
	}
	return wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, g, "cblas128.General")
}

// FromCVector returns a complex128 tensor of shape [N] and strides [Inc] over v's storage,
// without copying, after checking it.
func FromCVector(v *cblas128.Vector) (*core.Tensor, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: gonumx: nil *cblas128.Vector", core.ErrNil)
	}
	return wrapVector(v.Data, v.N, v.Inc, v, "cblas128.Vector")
}

// FromGeneral32 returns a float32 tensor over g's storage, without copying, after checking it.
// blas32 is Gonum's only float32 storage (mat has no float32 matrix type).
func FromGeneral32(g *blas32.General) (*core.Tensor, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: gonumx: nil *blas32.General", core.ErrNil)
	}
	return wrapMatrix(g.Data, g.Rows, g.Cols, g.Stride, g, "blas32.General")
}

// FromVector32 returns a float32 tensor of shape [N] and strides [Inc] over v's storage,
// without copying, after checking it.
func FromVector32(v *blas32.Vector) (*core.Tensor, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: gonumx: nil *blas32.Vector", core.ErrNil)
	}
	return wrapVector(v.Data, v.N, v.Inc, v, "blas32.Vector")
}

// FromSymDense exports the array a symmetric matrix stores, without copying: an N×N float64
// tensor with strides [Stride, 1] of which only the triangle uplo names is meaningful
// (blas.Upper: elements (i, j) with j ≥ i; blas.Lower: j ≤ i). The other triangle holds
// whatever the memory held and is not the matrix's; element (i, j) of the matrix is element
// (min(i,j), max(i,j)) of the array when uplo is Upper. Use Materialize for the full matrix.
func FromSymDense(s *mat.SymDense) (t *core.Tensor, uplo blas.Uplo) {
	if s == nil || s.IsEmpty() {
		return must(wrapMatrix[float64](nil, 0, 0, 0, s, "mat.SymDense")), blas.Upper
	}
	r := s.RawSymmetric()
	return must(wrapMatrix(r.Data, r.N, r.N, r.Stride, s, "mat.SymDense")), r.Uplo
}

// FromTriDense exports the array a triangular matrix stores, without copying: an N×N float64
// tensor with strides [Stride, 1] of which only the triangle uplo names is the matrix's; the
// elements of the other triangle are zero in the matrix whatever the array holds. When diag is
// blas.Unit the diagonal elements of the matrix are 1 and the array's diagonal is not read.
// Use Materialize for the full matrix.
func FromTriDense(m *mat.TriDense) (t *core.Tensor, uplo blas.Uplo, diag blas.Diag) {
	if m == nil || m.IsEmpty() {
		return must(wrapMatrix[float64](nil, 0, 0, 0, m, "mat.TriDense")), blas.Upper, blas.NonUnit
	}
	r := m.RawTriangular()
	return must(wrapMatrix(r.Data, r.N, r.N, r.Stride, m, "mat.TriDense")), r.Uplo, r.Diag
}

// FromBandDense exports a band matrix's band storage, without copying: a float64 tensor of
// shape [min(Rows, Cols+kl), kl+1+ku] and strides [Stride, 1]. Element (i, j) of the matrix,
// for -kl ≤ j-i ≤ ku, is element (i, j-i+kl) of the tensor; elements outside the band are zero
// and are not stored; the corners of the storage array hold nothing of the matrix. Use
// Materialize for the full matrix.
func FromBandDense(b *mat.BandDense) (t *core.Tensor, kl, ku int) {
	if b == nil || b.IsEmpty() {
		return must(wrapMatrix[float64](nil, 0, 0, 0, b, "mat.BandDense")), 0, 0
	}
	r := b.RawBand()
	rows := min(r.Rows, r.Cols+r.KL)
	return must(wrapMatrix(r.Data, rows, r.KL+1+r.KU, r.Stride, b, "mat.BandDense")), r.KL, r.KU
}

// FromDiagDense returns the diagonal of a diagonal matrix as a float64 tensor of shape [N] and
// strides [Inc], without copying. Every element is meaningful: element i is the matrix's
// element (i, i); all others are zero.
func FromDiagDense(d *mat.DiagDense) *core.Tensor {
	if d == nil || d.IsEmpty() {
		return must(wrapVector[float64](nil, 0, 1, d, "mat.DiagDense"))
	}
	r := d.RawBand()
	return must(wrapVector(r.Data, r.Rows, r.Stride, d, "mat.DiagDense"))
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
		return nil, fmt.Errorf("%w: gonumx: nil mat.Matrix", core.ErrNil)
	}
	var shared *core.Tensor
	var err error
	switch v := m.(type) {
	case *mat.Dense:
		shared = FromDense(v)
	case *mat.VecDense:
		shared, err = FromVecDense(v).Reshape(int64(v.Len()), 1)
	case mat.Untransposer:
		inner, err2 := FromMatrix(v.Untranspose(), adapters.ZeroCopyOnly())
		if err2 == nil {
			shared, err = inner.Transpose()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("gonumx: view of %T: %w", m, err)
	}
	copied, err := o.Decide(shared != nil, fmt.Sprintf("gonumx: %T has no dense float64 storage", m))
	if err != nil {
		return nil, err
	}
	if copied {
		return Materialize(m), nil
	}
	return shared, nil
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
