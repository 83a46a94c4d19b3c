// Package core is DLPack in Go: the dlpack.h v1.3 ABI, a Go-native Tensor that describes memory
// the way DLPack does, validation of tensors that come from elsewhere, and the ownership rules
// that let memory cross library and language boundaries without copies.
//
// It is pure Go and builds with CGO_ENABLED=0. The C side of the exchange (exporting a tensor as
// a DLManagedTensorVersioned that C code may hold, importing one from a C pointer and calling its
// deleter) lives in package core/cdlpack, which needs cgo. Allocation beyond plain Go memory
// (mapped blocks, their cache, uninitialised tensors) and the strided-copy and cast kernels live
// one floor up, in package memory; conversions to and from other libraries live in the adapter
// packages above it.
//
// This package is not an array library: it has no arithmetic. It describes, validates, views
// and shares memory. Showing tensors to people (a NumPy-style repr, HTML, pictures) is package
// display's; a Tensor keeps only SimpleRender, the method the notebook kernel looks for, which
// delegates to that package once it is imported.
//
// # Generic functions and their non-generic twins
//
// The notebook kernel (gophernotes, whose interpreter is gomacro) cannot instantiate generic
// functions. Each generic function a notebook needs has a non-generic twin that does the same
// at about the same cost (BENCHMARKS.md):
//
//	generic                                 non-generic twin
//	FromSlice(xs, 2, 3), MustFromSlice      FromFloat64s(xs, 2, 3), FromFloat32s, FromInt64s, FromUint8s,
//	                                        FromBools, FromFloat16s, FromBF16s, ... (twins.go)
//	Elements[float32](t)                    t.Float32s(), t.Float64s(), t.Int64s(), ...
//	ReadOnlyElements[float32](t)            t.ReadOnlyFloat32s(), ... (memory maps, read-only tensors)
//	At[float64](t, i, j)                    memory.At(t, i, j): a complex128, for any dtype
//	Set(t, 2.5, i, j)                       memory.SetAt(t, 2.5, i, j): converted to t's dtype
//	Scalar(2.5)                             FromFloat64s([]float64{2.5}), then Reshape() (0-d)
//	DTypeOf[float32]()                      the dtype values Float32, Int64, ...
//	Span, FromSliceStrided, Attach          no twin: write that step in a Go package and import it
//
// In the kernel a generic call fails with an error of the interpreter's own, which does not say
// "generic": "repl.go:1:11: unimplemented type: core.Elements[float32] <*ast.IndexExpr>" means
// that the interpreter cannot instantiate core.Elements[float32]; call the twin instead.
//
// # Overview
//
// A *Tensor is the address of its first element, a device (DLDevice), an element type
// (DLDataType), a shape and strides counted in elements (as in DLPack: never bytes), and flags
// (read-only, copied). It is made
//
//   - over a Go slice, without copying: FromSlice, FromSliceStrided (and, for the notebook
//     kernel, which cannot call generic functions, the twins of twins.go such as FromFloat32s);
//   - as a new zeroed allocation in Go memory, 64-byte aligned: New;
//   - lent out of a block of Go memory that a producer reuses for one result after another,
//     given back when the result is released: a Lease;
//   - over foreign memory with a release function: Wrap, or ImportVersioned and ImportLegacy
//     for DLPack managed tensors;
//   - over memory another Go value owns: WrapKeep.
//
// Views share memory and never copy: Permute, Transpose, Slice (with steps, negative too),
// Reverse, Index, Reshape (when the strides allow, else ErrNotViewable), BroadcastTo (stride 0),
// AsReadOnly. A view of a packed sub-byte tensor (int4, float4) must keep it compact in C order
// with its first element in place, or fails with ErrSubByte. Elements, Span and At give typed
// access to host memory.
//
// # Invariants
//
//   - A Tensor's metadata never changes after construction; a view is a new Tensor.
//   - Strides always have one entry per dimension (NULL strides of legacy producers become C
//     order on import), and every element offset of a tensor fits in an int64.
//   - A dimension of size 1 may carry any stride, and a tensor with a 0 in its shape is empty:
//     contiguity queries ignore both, and empty tensors may have a nil data pointer.
//   - On host and CUDA-like devices Data is the address of the first element (a foreign
//     byte_offset is folded in); ByteOffset is non-zero only for devices whose data is an
//     opaque handle (OpenCL, Vulkan, ...).
//   - Everything that comes from outside Go (a DLTensor, a Desc given to Wrap) is untrusted: it
//     is validated before its memory is touched, and every refusal is an error that wraps
//     ErrInvalid and a more specific sentinel (ErrNdim, ErrShape, ErrStrides, ErrOverflow,
//     ErrNullData, ErrDType, ErrDevice, ErrVersion, ErrBounds) and names the field and value.
//     Nothing here panics on bad input.
//
// # Ownership
//
// Go memory (FromSlice, New) is kept alive by the tensors that point into it, like any slice.
// Memory an allocator maps (package memory) is foreign memory like any other, made a tensor by
// Wrap, or by WrapParts for many tensors over one block that share one owner. A Lease's block is
// Go memory too: its tensor keeps it alive, and the release of the tensor's last holder (an
// explicit Release, or the collection of a view) gives it back to the lease instead of freeing
// it; a lent tensor collected unreleased takes the block with it.
//
// Foreign memory has an owner: a release function (for an import, the producer's deleter) that
// runs exactly once. Every tensor over that memory, every view of it, and every value an adapter
// attached to it (Attach) is a holder. The release runs when the last holder lets go, which a
// holder does once: on Release, or when it becomes unreachable, whichever comes first (the
// garbage collector's cleanups do the latter). So:
//
//   - Release frees early but never under a live view: it lets go of one holder only.
//   - Forgetting Release leaks nothing: unreachable holders let go by themselves.
//   - A failed import still runs the deleter, exactly once, before the error is returned.
//   - LiveForeign counts foreign memory not yet released; tests assert it returns to zero.
//
// Holders are safe to use and release from any goroutine.
//
// # Aliasing
//
// Tensors and views over the same memory alias it: a write through one is seen through all.
// Slices returned by Elements and Span alias the tensor's memory, and are not holders: take a Hold
// on the tensor for as long as they are in use (h, err := core.Hold(t); defer h.Release()), or
// foreign memory may be released under them by a Release on another goroutine or by the
// collector's cleanup of the last tensor over it. Every function of this module that reads or
// writes a tensor's memory does exactly that for its operands, for its whole duration. A
// read-only tensor (FlagReadOnly: an import so flagged, a memory-mapped file, a
// broadcast view) refuses writable access (ErrReadOnly); ReadOnlyElements and ReadOnlySpan read it,
// and writing through them is a bug (for a memory map, a fault). Conversions that must copy say
// so (see package adapters), and copies carry FlagIsCopied.
//
// # For bridges and allocators
//
// A few functions serve the packages that allocate tensors or bring them across a boundary
// rather than everyday use: CompactSize (the bytes of a C-order tensor, checked as untrusted
// input), SetMemoryLimit and FitsMemory (the bound New and package memory refuse to exceed,
// which package memory sets from the machine and its control group), and Part, CheckParts and
// WrapParts (one block as many tensors sharing one owner, package memory's NewUninitParts).
package core
