// Package memory allocates the memory of new tensors, one floor above package core and below
// the adapters, as arrow-go's memory package sits below its arrays: core describes, validates
// and shares memory; this package decides where new memory comes from.
//
// # What it holds
//
// Allocation: memory for new tensors.
//
//   - NewUninit: a C-order tensor whose elements the caller overwrites whole. Small tensors get
//     zeroed Go memory (core.New); large ones get anonymous memory mapped from the operating
//     system, unzeroed, with transparent huge pages, which Go neither zeroes nor counts in its
//     heap. NewUninitBytes is the same tensor, made with flags, and its writable bytes, for a
//     writer that fills it through them (a file reader, a decoder).
//   - NewUninitParts: one such block as many tensors (a file's weights), made in a few
//     allocations for them all, sharing one owner (core.WrapParts).
//   - AllocSize: what a new tensor would take, or why this process could never have it
//     (core.ErrTooLarge, from the machine's memory and swap and its control group's limit).
//
// Leases: a block lent again and again.
//
//   - Lease (NewLease): Go memory for one C-order tensor, lent as one tensor at a time (Lend) and
//     taken back when that tensor and every holder made from it have let go, so that a producer
//     of one result after another (onnxx's outputs) allocates only the tensor. A lent tensor
//     attached to another library's value forfeits the block (Lost).
//
// Copies and casts: the module's only copy loops; every adapter that must copy calls them.
//
//   - Copy writes one tensor's elements into another of the same shape, converting the dtype when
//     they differ. Clone (in the Order asked), Contiguous (C order), Cast and CastOrder make the
//     destination first, with NewUninit.
//   - WriteTo writes a tensor's elements to an io.Writer in C order, whatever its layout, through
//     a buffer of GatherBytes (the writers of .npy, safetensors and GGUF use it); CBytes is what
//     it writes, SwapBytes reverses byte order in place.
//
// Element access: At and SetAt read and write one element of any dtype as a complex128, for code
// that cannot instantiate generics (notebooks); core.At and core.Set are the typed forms.
//
// # Rules of the copies
//
// Copy, Clone, Contiguous, Cast and CastOrder are exact for every stride pattern (negative, zero,
// steps, offsets, transposes) and every overlap of source and destination: the result is as if
// the source were read whole before the destination is written (a temporary is used only when
// their byte ranges intersect). A destination whose elements alias each other (a zero stride) is
// refused with core.ErrOverlap. Conversions follow Go's, except float to integer, which
// truncates toward zero, maps NaN to 0 and saturates at the integer's limits (see Copy);
// conversions a target cannot hold are refused with ErrUnsupported. Every function that reads or
// writes a tensor holds it (core.Hold) for the whole time, so a tensor passed inline as the only
// holder of foreign memory is safe. Clone's results, and so Contiguous's and Cast's, are flagged
// core.FlagIsCopied and alias nothing. On amd64 the kernels use AVX, AVX2 or AVX-512 where the
// processor has them; -tags purego keeps to Go.
//
// # Allocation policy
//
// Allocation says which tensors are mapped (from MappedMin up), whether with huge pages, and how
// many bytes of released blocks stay cached (CacheBytes) and for how long (CacheIdle);
// SetAllocation changes it for the process, DefaultAllocation is the setting in force until then.
// A mapped block is foreign memory in every respect (core.LiveForeign counts it) and goes back
// to the cache exactly once, when its last holder lets go; a block idle for CacheIdle is
// unmapped by a timer this package runs. Because the collector does not see mapped memory, the
// allocator runs a collection when what is mapped under tensors has doubled since the last one,
// so that tensors dropped without Release give their blocks back. Outside Linux everything is Go
// memory.
//
// Importing this package also tells core.New the machine's limit (core.SetMemoryLimit), so that
// a tensor larger than this process may ever have fails with core.ErrTooLarge instead of ending
// the process.
package memory
