// Package gonumx converts between Gonum matrices and vectors (gonum.org/v1/gonum/mat and its
// blas64, blas32 and cblas128 storage types) and core.Tensor, sharing memory whenever the layout
// allows.
//
// It is not a linear-algebra package and not a general tensor library: it only describes Gonum's
// storage to DLPack and DLPack memory to Gonum.
//
// # Zero-copy and copies
//
// Gonum to tensor: always zero-copy.
//
// Every From function makes a tensor over the memory Gonum already holds, with Gonum's real
// strides; none of them copies an element:
//
//   - *mat.Dense, blas64.General: float64 [Rows, Cols], strides [Stride, 1] (a sliced Dense
//     keeps its larger stride);
//   - *mat.VecDense, blas64.Vector: float64 [N], strides [Inc];
//   - *mat.CDense, cblas128.General: complex128 [Rows, Cols], strides [Stride, 1];
//     cblas128.Vector: complex128 [N], strides [Inc];
//   - blas32.General and blas32.Vector (Gonum's only float32 storage): float32, as above;
//   - a mat.Transpose of a *mat.Dense or *mat.VecDense (FromMatrix): the transposed view, strides
//     [1, Stride].
//
// The structured matrices export the array they store, not the matrix they mean; the godoc of
// each function says how to read the elements: FromSymDense and FromTriDense (an N×N array of
// which one triangle is meaningful), FromBandDense (band storage: element (i, j) of the matrix
// is element (i, j-i+KL) of the array), FromDiagDense (the diagonal, exactly). Materialize copies
// any mat.Matrix into a full dense tensor when the meaning, not the storage, is wanted.
//
// The tensor holds the Gonum value (core.WrapKeep), so the value, and any foreign memory it
// keeps alive, lives at least as long as the tensor or any view of it.
//
// Tensor to Gonum: zero-copy when the layout fits.
//
// ToDense, ToMatrix, ToVecDense, ToCDense, ToCVector, ToGeneral32 and ToVector32 share memory
// when the tensor is on the host, writable, of the target's element type, and its strides fit
// Gonum's storage:
//
//   - float64 2-D with unit column stride and row stride ≥ columns → *mat.Dense (ToDense);
//   - float64 2-D in Fortran order (row stride 1, column stride ≥ rows) → a mat.Transpose of a
//     *mat.Dense over the same memory (ToMatrix);
//   - 1-D with a positive stride → *mat.VecDense, *cblas128.Vector or *blas32.Vector;
//   - complex128 2-D → *mat.CDense; float32 2-D → *blas32.General.
//
// Anything else (another dtype, negative or zero strides, a read-only tensor, device memory)
// needs a copy. The adapters options choose what happens: by default the adapter copies into
// fresh Go memory, casting the dtype when the cast keeps every value (float32, float16, integers
// of up to 32 bits; adapters.Preserves) and refusing any other cast (complex128 to a real matrix
// would drop the imaginary parts, int64 would round above 2^53) with an error wrapping
// adapters.ErrCast unless adapters.AllowCast() is given; adapters.ZeroCopyOnly() refuses with an
// error wrapping adapters.ErrCopyRequired; adapters.AlwaysCopy() copies even when it could share;
// adapters.ReportCopy(&copied) tells the caller which happened. Device memory cannot be copied
// by the CPU and is refused (core.ErrNotHost). Shareable reports in advance whether a tensor
// will be shared.
//
// A value built over a tensor's memory keeps that memory alive while the value is reachable
// (core.Attach): a *mat.Dense over a tensor imported from C keeps the C memory, even after the
// tensor is released. Slices taken out of such a value (RawMatrix().Data) do not: keep the value
// reachable while using them.
//
// Gonum's SetRawMatrix and SetRawVector check nothing; this package validates every stride and
// length before it builds a Gonum value, and every blas structure before it builds a tensor, and
// reports bad input with errors wrapping core.ErrInvalid, FromDense and its siblings included on
// a Gonum value whose storage breaks Gonum's own invariants (see FromDense). Never a panic, except
// in Materialize, and FromMatrix when it copies, which read such a value with Gonum's own code.
package gonumx
