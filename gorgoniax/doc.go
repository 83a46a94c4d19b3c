// Package gorgoniax converts between Gorgonia tensors (*tensor.Dense of gorgonia.org/tensor)
// and core.Tensor, sharing memory whenever Gorgonia can describe the layout.
//
// It is not an array library: it describes a *tensor.Dense's memory to DLPack and DLPack memory
// to Gorgonia, and copies only what Gorgonia cannot represent.
//
// # Zero-copy and copies
//
// Gorgonia to tensor: always zero-copy.
//
// FromDense makes a tensor over the *tensor.Dense's array with the Dense's own shape and
// strides: contiguous tensors, Gorgonia's views (Slice: a sub-array with the parent's strides),
// thunked transposes (T: permuted strides, data unmoved) and column-major tensors (AsFortran)
// are all exported as they lie in memory, without copying and without materializing. Every
// Gorgonia dtype that DLPack has is supported: Bool, Int8…Int64, Uint8…Uint64, Int and Uint (as
// the 64-bit DLPack integers), Float32, Float64, Complex64, Complex128, and this package's
// Float16 and BFloat16. String, Uintptr and UnsafePointer tensors, masked tensors (DLPack has no
// mask) and tensors whose memory the CPU cannot read are refused with adapters.ErrUnsupported.
// The tensor holds the Dense (core.WrapKeep).
//
// Tensor to Gorgonia: zero-copy when Gorgonia can describe it.
//
// ToDense shares memory for every writable host tensor of a supported dtype whose strides are
// all positive (dimensions of size 0 or 1 aside): C order becomes a plain row-major Dense,
// Fortran order a column-major Dense (DataOrder ColMajor, as AsFortran makes), and any other
// positive strides (offsets, steps, transposes, permutations) a Gorgonia view (IsView is true,
// DataOrder NonContiguous) over the memory the elements span, which Gorgonia reads through its
// iterators and Materialize copies correctly. Gorgonia cannot describe negative or zero strides
// nor read-only memory: those are copied into a compact C-order Dense, or refused with
// adapters.ErrCopyRequired under adapters.ZeroCopyOnly(). adapters.AlwaysCopy() copies every
// tensor and adapters.ReportCopy says which happened; Shareable predicts it. Device memory is
// refused (core.ErrNotHost). float16 and bfloat16 travel through the registered Gorgonia dtypes
// Float16 and BFloat16 (element types float16.Float16 and core.BF16), zero-copy: Gorgonia
// stores, slices, transposes and copies them, though its arithmetic does not cover them and its
// At and Get return their bits as uint16.
//
// A *tensor.Dense made over a tensor's memory keeps that memory (foreign memory included) alive
// while it is reachable (core.Attach), even after the tensor is released. Views Gorgonia makes of
// that Dense (Slice, and T before Materialize) share its memory but do not keep it: a Slice of
// memory imported from C, used after the tensor is released and the Dense ToDense returned is
// unreachable, reads freed memory. Keep that Dense reachable (runtime.KeepAlive) while its views
// are in use, or take a copy (Clone, Materialize) of what must outlive it.
//
// # The existing bridge
//
// This package does not repeat the defects of tensor.FromMat64 and tensor.ToMat64: see package
// gonumx for Gonum matrices, which shares sliced matrices (FromMat64 panics on them) and
// column-major tensors (ToMat64 returns them transposed); and FromDense never calls
// Dense.Data, which panics on tensors with no elements.
package gorgoniax
