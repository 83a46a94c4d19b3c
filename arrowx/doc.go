// Package arrowx converts between Apache Arrow data (github.com/apache/arrow-go/v18) and
// core.Tensor, sharing memory wherever the layouts agree: fixed-width primitive arrays,
// FixedSizeLists of them (nested for more dimensions), arrow-go's strided tensors (package
// arrow/tensor) and record batches of equal-length columns.
//
// It is pure Go and builds with CGO_ENABLED=0. The Arrow C Data Interface (arrays from C, C++
// or pyarrow) is in package arrowx/cdatax, which needs cgo; tensors between processes and
// machines over Arrow Flight are in package arrowx/flightx. This package is not an Arrow
// library: it does no compute, and it maps only the fixed-width numeric types (not strings,
// temporal, decimal or variable-size lists).
//
// # Zero-copy and copies
//
//	conversion                                         shares memory when                    else
//	FromArray: primitive array → 1-D tensor            no nulls                              nulls: refused, or copied with FillNulls
//	FromArray: FixedSizeList<…<T>> → N-D tensor        no nulls at any level                 as above
//	FromArray: boolean array → bool tensor             never (Arrow packs bits)              copied
//	FromArray: arrow.bool8 array → bool tensor         every byte 0 or 1                     copied (other bytes become 1)
//	ToArray: tensor → primitive / nested FixedSizeList C-contiguous, Arrow dtype, not bool   copied once into C order (bool: bit-packed)
//	FromTensor: arrow-go tensor → tensor               always (strides, row or column major) refused if malformed
//	ToTensor: tensor → arrow-go tensor                 strides ≥ 0, dtype in arrow/tensor     copied into C order
//	FromArray: arrow.fixed_shape_tensor → [N, S...]    no nulls (a permutation is strides)   as above
//	FromArray: arrow.variable_shape_tensor → [N, S...] one shape S, elements adjacent, no nulls copied (not adjacent); refused (shapes differ)
//	ToFixedShapeTensor: [N, S...] → fixed_shape_tensor C order of S in any order, not bool  copied once into C order
//	FromRecord: record batch → [rows, cols] tensor     columns equally spaced in one buffer  copied once into C order
//	ToRecord: [rows, cols] tensor → record batch       each column compact (Fortran order)   copied once into Fortran order
//
// Shareable, ShareableAsTensor and ShareableAsRecord tell in advance (and why not). Every
// conversion takes the adapters options: adapters.ZeroCopyOnly refuses a copy with
// adapters.ErrCopyRequired, adapters.AlwaysCopy copies anyway, adapters.ReportCopy says which
// happened; copies carry core.FlagIsCopied. FillNulls is this package's own option.
//
// Dtypes: int8 to int64, uint8 to uint64, float16, float32, float64 map to Arrow's primitives,
// bool to Arrow's boolean (FromDType, ToDType); Arrow's canonical arrow.bool8 (a byte per
// value) reads as bool too. bfloat16, complex, float8 and sub-byte types
// have no Arrow primitive and are refused with adapters.ErrUnsupported (package flightx carries
// them as fixed-size binary). arrow-go's tensor package has no float16 or bool. A 0-d tensor
// has no array form (an array has a length); an N-D tensor with an empty inner dimension
// ([3 0]) has none either, because arrow-go cannot make a FixedSizeList of size 0.
//
// # Arrow's canonical tensor type
//
// Importing this package registers arrow.fixed_shape_tensor, one of Arrow's canonical
// extension types, with arrow-go (FixedShapeTensorType): an array of N tensors of one shape S,
// stored as FixedSizeList<T>[prod(S)] with S (and optional dimension names and permutation)
// as JSON in the field's ARROW:extension:metadata. pyarrow (FixedShapeTensorArray), Ray Data,
// Lance and Daft read and write it, and readers that do not know it still see the
// FixedSizeList and the metadata. FromArray gives the [N, S...] tensor over the array's memory,
// ToFixedShapeTensor makes such an array of a tensor; element i of the array is Index(0, i) of
// the tensor, and a single tensor of shape S is the array of t reshaped to [1, S...].
//
// arrow.variable_shape_tensor (VariableShapeTensorType, registered too) holds tensors of one
// rank and element type but their own shapes: a struct of the data (a List<T>) and the shape
// (a FixedSizeList<int32>). VariableShapeTensorArray.Tensor(i) is a view of element i's data
// (a permutation as strides), and NewVariableShapeTensorArray copies a list of tensors into
// one array. cdatax carries fixed_shape_tensor arrays with their shape, flightx sends every
// tensor as a fixed_shape_tensor column, and arrowx/parquetx stores them in Parquet files.
//
// # Ownership
//
// A tensor made of Arrow memory holds the Arrow buffer it uses: it takes a reference (Retain)
// and gives it back (Release) exactly once, when the last holder of the tensor or its views
// lets go (core.Wrap). So a tensor keeps an Arrow buffer alive after the array is released, and
// Arrow's allocator frees the buffer only after the tensor is gone: with a
// memory.CheckedAllocator, releasing the array and then the tensor brings it back to zero.
// Such tensors count in core.LiveForeign.
//
// An Arrow value made of a tensor's memory (ToArray, ToTensor, ToRecord) holds that memory for
// as long as its buffer is reachable (core.Attach on the buffer), so releasing the tensor early
// is safe, and foreign memory under the tensor (a C or Python producer's) is released only
// after the Arrow value is gone.
//
// # Aliasing and mutability
//
// Arrow arrays are immutable by convention. A tensor over an Arrow buffer is writable only when
// the buffer is mutable in arrow-go's terms (the buffers of its builders and allocators); over
// buffers that wrap bytes from elsewhere (IPC, Flight, the C Data Interface, ToArray's own) it
// is read-only. Writes through a writable tensor are seen by the array, and the other way round.
//
// # Invariants
//
// Arrow data is untrusted input: lengths, offsets, list sizes and buffer sizes are checked
// with overflow-safe arithmetic before any memory is touched, and inconsistencies are reported
// with ErrMalformed (FromArrayData accepts data that arrow-go's own constructors never saw).
// Every error wraps a sentinel of this package, of package adapters or of package core, and
// says what was wrong. Nothing here panics on bad input.
package arrowx
