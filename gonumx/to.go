package gonumx

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// matrixFits reports whether a 2-D tensor's strides fit Gonum's row-major storage (unit column
// stride, row stride ≥ columns), ignoring the strides of dimensions that do not need one.
func matrixFits(t *core.Tensor) bool {
	if t.Ndim() != 2 || t.Empty() {
		return t.Ndim() == 2
	}
	r, c := t.Dim(0), t.Dim(1)
	return (c == 1 || t.Stride(1) == 1) && (r == 1 || t.Stride(0) >= c)
}

// vectorFits reports whether a 1-D tensor's stride is positive (or irrelevant).
func vectorFits(t *core.Tensor) bool {
	return t.Ndim() == 1 && (t.Dim(0) <= 1 || t.Stride(0) > 0)
}

// whyNot names what stops a tensor from being shared, or "" when nothing does.
func whyNot(t *core.Tensor, dt core.DLDataType, fits bool, target string) string {
	switch {
	case !t.HostAccessible():
		return fmt.Sprintf("gonumx: %s memory is not host memory", t.Device())
	case t.DType() != dt:
		return fmt.Sprintf("gonumx: dtype %s is not %s's %s", t.DType(), target, dt)
	case t.ReadOnly():
		return fmt.Sprintf("gonumx: the tensor is read-only and %s is mutable", target)
	case !fits:
		return fmt.Sprintf("gonumx: strides %v for shape %v do not fit %s", t.Strides(), t.Shape(), target)
	}
	return ""
}

// Shareable reports whether the conversion of t to the Gonum type for its element type and
// rank shares memory under the default policy, and if not, why: float64 2-D (ToMatrix:
// row-major, or Fortran order as a mat.Transpose; ToDense shares row-major only), float64 1-D
// (ToVecDense), complex128 2-D and 1-D (ToCDense, ToCVector), float32 2-D and 1-D (ToGeneral32,
// ToVector32). It is true when the tensor is on the host, writable, of that element type, and
// its strides fit the target's storage. This is the promise the adapter keeps and its tests
// check.
func Shareable(t *core.Tensor) (ok bool, why string) {
	switch {
	case t == nil:
		return false, "gonumx: nil tensor"
	case t.Released():
		return false, "gonumx: the tensor was released"
	}
	dt := t.DType()
	if dt != core.Float64 && dt != core.Float32 && dt != core.Complex128 {
		return false, fmt.Sprintf("gonumx: Gonum has no storage of %s", dt)
	}
	fits := matrixFits(t) || vectorFits(t)
	if !fits && dt == core.Float64 && t.Ndim() == 2 {
		tr, err := t.Transpose()
		fits = err == nil && matrixFits(tr)
	}
	reason := whyNot(t, dt, fits, "gonum")
	return reason == "", reason
}

// prepared is a tensor ready to lend its memory to Gonum: the input itself when it can be
// shared, a fresh copy otherwise.
type prepared[T element] struct {
	src    *core.Tensor // what the Gonum value is built over
	span   []T          // the memory from the first element on
	shape  []int64
	inc    []int64 // strides to give Gonum
	copied bool    // src is a copy, which done reports
	o      adapters.Options
}

// prepare decides, under the options, whether t can lend its memory as rank-dimensional T
// storage, copies (casting) when it cannot and copying is allowed, and returns the memory. The
// decision is reported by done, once the Gonum value is made.
func prepare[T element](t *core.Tensor, rank int, o adapters.Options, target string) (prepared[T], error) {
	var p prepared[T]
	dt := core.DTypeOf[T]()
	if t == nil {
		return p, errs.Errorf(core.ErrNil, "gonumx: nil tensor")
	}
	if t.Released() {
		return p, errs.Errorf(core.ErrReleased, "gonumx: the tensor for %s was released", target)
	}
	if t.Ndim() != rank {
		return p, errs.Errorf(adapters.ErrUnsupported, "gonumx: %s needs %d dimensions, the tensor has shape %v", target, rank, t.Shape())
	}
	if err := o.CheckCast(t.DType(), dt, target); err != nil {
		return p, fmt.Errorf("gonumx: %w", err)
	}
	fits := matrixFits(t)
	if rank == 1 {
		fits = vectorFits(t)
	}
	reason := whyNot(t, dt, fits, target)
	copied, err := o.Choose(reason == "", reason)
	if err != nil {
		return p, err
	}
	src := t
	if copied {
		if !t.HostAccessible() {
			return p, errs.Errorf(core.ErrNotHost, "gonumx: cannot copy %s memory to %s", t.Device(), target)
		}
		if src, err = memory.Cast(t, dt); err != nil {
			return p, fmt.Errorf("gonumx: copy to %s: %w", target, err)
		}
	}
	p.src, p.shape, p.copied, p.o = src, src.Shape(), copied, o
	if src.Empty() {
		return p, nil
	}
	span, first, err := core.Span[T](src)
	if err != nil {
		return p, fmt.Errorf("gonumx: memory for %s: %w", target, err)
	}
	p.span = span[first:]
	p.inc = src.Strides()
	return p, nil
}

// general is the blas General description of p's 2-D memory.
func (p prepared[T]) general() (rows, cols, stride int, data []T) {
	rows, cols = int(p.shape[0]), int(p.shape[1])
	stride = max(cols, 1)
	if rows == 0 || cols == 0 {
		return rows, cols, stride, nil
	}
	if rows > 1 {
		stride = int(p.inc[0])
	}
	return rows, cols, stride, p.span[: (rows-1)*stride+cols : (rows-1)*stride+cols]
}

// vector is the blas Vector description of p's 1-D memory.
func (p prepared[T]) vector() (n, inc int, data []T) {
	n, inc = int(p.shape[0]), 1
	if n > 1 {
		inc = int(p.inc[0])
	}
	if n == 0 {
		return 0, 1, nil
	}
	return n, inc, p.span[: (n-1)*inc+1 : (n-1)*inc+1]
}

// done ties the memory of p.src to v's lifetime and, once it has, reports whether p copied:
// a conversion that fails leaves the caller's adapters.ReportCopy flag as it was.
func done[V any, T element](v *V, p prepared[T]) (*V, error) {
	if err := core.Attach(v, p.src); err != nil {
		return v, fmt.Errorf("gonumx: %w", err)
	}
	p.o.Report(p.copied)
	return v, nil
}

// ToDense returns a *mat.Dense over t's memory when t is a writable float64 2-D host tensor with
// unit column stride and row stride ≥ columns (a sliced matrix included): writes through either
// are seen by the other, and the Dense keeps t's memory alive (foreign memory included) while
// it is reachable. Otherwise it copies into a new Dense, casting the dtype when it differs and
// the cast keeps every value (adapters.Preserves: float32, integers up to 32 bits), or refuses:
// a cast that can change values (complex128, int64, ...) only with adapters.AllowCast(), else
// an error wrapping adapters.ErrCast; with adapters.ZeroCopyOnly() it returns an
// error wrapping adapters.ErrCopyRequired, and device memory is refused (core.ErrNotHost).
// adapters.AlwaysCopy() forces a copy and adapters.ReportCopy(&b) reports whether one was
// made. A tensor that is not 2-D is refused with adapters.ErrUnsupported; a Fortran-order
// tensor is copied here (ToMatrix shares it).
//
// A tensor with zero rows and zero columns gives Gonum's empty Dense (IsEmpty); one with zero
// rows or columns but not both gives a Dense whose Dims say so and which holds no elements.
//
// What holds foreign memory is the Dense this function returns, not Gonum's values derived from
// it: m.Slice, m.RowView, m.ColView and m.T() share the memory but do not keep it alive. Keep
// the Dense (or the tensor) reachable while you use them (runtime.KeepAlive after the last use),
// or copy what must outlive it (mat.DenseCopyOf).
func ToDense(t *core.Tensor, opts ...adapters.Option) (*mat.Dense, error) {
	p, err := prepare[float64](t, 2, adapters.Apply(opts...), "*mat.Dense")
	if err != nil {
		return nil, err
	}
	return denseOf(p)
}

func denseOf(p prepared[float64]) (*mat.Dense, error) {
	m := &mat.Dense{}
	rows, cols, stride, data := p.general()
	if rows == 0 && cols == 0 {
		p.o.Report(p.copied)
		return m, nil
	}
	m.SetRawMatrix(blas64.General{Rows: rows, Cols: cols, Stride: stride, Data: data})
	return done(m, p)
}

// ToMatrix is ToDense that also shares a Fortran-order float64 2-D tensor (unit row stride,
// column stride ≥ rows): the result is then a mat.Transpose whose Matrix is a *mat.Dense over
// the same memory (the [c, r] row-major view of it), so Gonum reads and writes t's elements in
// place. Every other case is ToDense's, and the result is then a *mat.Dense.
func ToMatrix(t *core.Tensor, opts ...adapters.Option) (mat.Matrix, error) {
	o := adapters.Apply(opts...)
	if t != nil && t.Ndim() == 2 && !matrixFits(t) && o.Policy != adapters.CopyAlways {
		if tr, err := t.Transpose(); err == nil && matrixFits(tr) {
			p, err := prepare[float64](tr, 2, o, "*mat.Dense")
			if err != nil {
				return nil, err
			}
			d, err := denseOf(p)
			if err != nil {
				return nil, err
			}
			return mat.Transpose{Matrix: d}, nil
		}
	}
	return ToDense(t, opts...)
}

// ToVecDense returns a *mat.VecDense over t's memory when t is a writable float64 1-D host
// tensor with a positive stride, and otherwise copies or refuses exactly as ToDense does.
func ToVecDense(t *core.Tensor, opts ...adapters.Option) (*mat.VecDense, error) {
	p, err := prepare[float64](t, 1, adapters.Apply(opts...), "*mat.VecDense")
	if err != nil {
		return nil, err
	}
	v := &mat.VecDense{}
	n, inc, data := p.vector()
	v.SetRawVector(blas64.Vector{N: n, Inc: inc, Data: data})
	return done(v, p)
}

// ToCDense returns a *mat.CDense over t's memory when t is a writable complex128 2-D host
// tensor with unit column stride and row stride ≥ columns, and otherwise copies or refuses
// exactly as ToDense does.
func ToCDense(t *core.Tensor, opts ...adapters.Option) (*mat.CDense, error) {
	p, err := prepare[complex128](t, 2, adapters.Apply(opts...), "*mat.CDense")
	if err != nil {
		return nil, err
	}
	m := &mat.CDense{}
	rows, cols, stride, data := p.general()
	if rows == 0 && cols == 0 {
		p.o.Report(p.copied)
		return m, nil
	}
	m.SetRawCMatrix(cblas128.General{Rows: rows, Cols: cols, Stride: stride, Data: data})
	return done(m, p)
}

// ToCVector returns a *cblas128.Vector over t's memory when t is a writable complex128 1-D host
// tensor with a positive stride, and otherwise copies or refuses exactly as ToDense does. The
// returned pointer keeps t's memory alive; its Data alone does not.
func ToCVector(t *core.Tensor, opts ...adapters.Option) (*cblas128.Vector, error) {
	p, err := prepare[complex128](t, 1, adapters.Apply(opts...), "*cblas128.Vector")
	if err != nil {
		return nil, err
	}
	v := &cblas128.Vector{}
	v.N, v.Inc, v.Data = p.vector()
	return done(v, p)
}

// ToGeneral32 returns a *blas32.General over t's memory when t is a writable float32 2-D host
// tensor with unit column stride and row stride ≥ columns, and otherwise copies (a float64
// tensor is rounded to float32) or refuses exactly as ToDense does. blas32 is Gonum's float32
// storage, used by its blas32 routines (blas32.Gemm, ...). The returned pointer keeps t's memory
// alive; its Data alone does not.
func ToGeneral32(t *core.Tensor, opts ...adapters.Option) (*blas32.General, error) {
	p, err := prepare[float32](t, 2, adapters.Apply(opts...), "*blas32.General")
	if err != nil {
		return nil, err
	}
	g := &blas32.General{}
	g.Rows, g.Cols, g.Stride, g.Data = p.general()
	return done(g, p)
}

// ToVector32 returns a *blas32.Vector over t's memory when t is a writable float32 1-D host
// tensor with a positive stride, and otherwise copies or refuses exactly as ToDense does. The
// returned pointer keeps t's memory alive; its Data alone does not.
func ToVector32(t *core.Tensor, opts ...adapters.Option) (*blas32.Vector, error) {
	p, err := prepare[float32](t, 1, adapters.Apply(opts...), "*blas32.Vector")
	if err != nil {
		return nil, err
	}
	v := &blas32.Vector{}
	v.N, v.Inc, v.Data = p.vector()
	return done(v, p)
}
