// Package safetensorsx reads and writes safetensors files (the Hugging Face format for model
// weights) as core tensors: by memory map, with every tensor a read-only view of the file's
// bytes; into memory of its own; and from any io.Reader or io.ReaderAt.
// What it writes is byte for byte what the reference writer (huggingface/safetensors)
// writes for the same tensors.
//
// It is not a model loader: it knows nothing of architectures, sharded index files
// (model.safetensors.index.json) or quantisation schemes beyond their element types.
//
// # Format
//
// A file is an 8-byte little-endian header length N, N bytes of UTF-8 JSON, then the data
// section. The JSON is an object mapping each tensor name to {"dtype", "shape",
// "data_offsets": [begin, end]} (byte offsets into the data section, C order, little-endian),
// with an optional "__metadata__" object of strings. Every dtype the format names is read and
// written: BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, C64, the float8
// kinds F8_E5M2, F8_E4M3 (DLPack's float8_e4m3fn), F8_E4M3FNUZ, F8_E5M2FNUZ, F8_E8M0, and the
// packed sub-byte F4, F6_E2M3, F6_E3M2 (see FromDType for the mapping).
//
// # Overview
//
//   - Memory maps: Open maps a file and lists its tensors (Names, Info, Metadata); File.Tensor
//     and File.Tensors take tensors over the mapping; Map does it all in one call.
//   - Reading: ReadFile and Read read every tensor; NewReader reads the header of an
//     io.ReaderAt and then single tensors by name; ReadHeader and ParseHeader read headers.
//   - Writing: Write (any io.Writer) and WriteFile; HeaderOf says what would be written.
//
// safetensorsx follows the file-format shape of the adapter contract (see package adapters):
// Read, ReadFile, Map, Open, NewReader, Write, WriteFile and the header functions, every one
// taking adapters.Option where it reads.
//
// # Zero-copy and copies
//
//	operation                          elements                 result
//	Open + File.Tensor, Map            shared with the mapping  read-only view, O(1) in file size
//	  misaligned range / big-endian    copied (flagged)         or adapters.ErrCopyRequired under ZeroCopyOnly
//	  Open(..., AlwaysCopy())          copied (flagged)         nothing mapped, read per tensor
//	ReadFile, Read, Reader.Tensor      read into slabs          writable, FlagIsCopied; ZeroCopyOnly refuses
//	  ReadFile, Reader.ReadAll,        tensors under 4 MiB      one read call and one slab for many tensors
//	  sized Read                       share slabs              (see Memory)
//	Write, WriteFile                   C-contiguous: written from the tensor's memory;
//	                                   other layouts: streamed through a 1 MiB buffer
//
// Files the reference writer and this package write are aligned: the data starts on an
// 8-byte boundary (Alignment) and tensors come in order of decreasing element size, so every
// tensor can be mapped as it lies. Files of older writers that ordered tensors by name alone
// may have misaligned tensors; those are copied by default.
//
// # Memory
//
// ReadFile, Reader.ReadAll and Read from a reader that knows its size read the tensors into
// slabs (memory.NewUninitParts): a tensor of 4 MiB or more into a slab of its own, each run of
// adjacent smaller ones into a slab they share, closed once it holds 4 MiB (when less than
// 4 MiB of tensors would be left after it, it takes those too: a slab of small tensors holds
// under 12 MiB). Each slab is read with one call, each tensor in a 64-byte-aligned slot of its
// own (its bytes rounded up to 64: tensors the file has misaligned, as older writers left
// them, are moved into place). Reader.Tensor, File.Tensor's copies and Read from a stream of
// unknown length give each tensor a slab of its own.
//
// What memory a slab is: core's, as NewUninit allocates it. Under memory.DefaultAllocation, a
// slab of 4 MiB or more (Allocation.MappedMin) is mapped memory taken from core's cache of
// blocks: not zeroed (the read writes every byte of every tensor), in huge pages, and without
// page faults when a block released earlier is reused; smaller slabs (files under 4 MiB) are
// Go memory. Mapped slabs are foreign memory: their tensors report Foreign, core.LiveForeign
// counts each slab once, and a slab goes back to core's cache exactly once, when the last of
// its tensors (and their views, and values attached to them) is released or collected. On an
// error, every slab the read took goes back before it returns.
//
// The price of sharing: a slab stays as long as any of its tensors, or a view of one, is held,
// so keeping one tensor of a file and dropping the rest keeps its slab (up to 12 MiB) alive;
// clone a tensor (memory.Clone) to keep it alone. Release the tensors of a file when done
// with them: their slabs then go back at once, instead of when the collector finds them
// unreachable (mapped memory is outside Go's heap; core runs a collection itself when what it
// has mapped under tensors has doubled since the last one, and grown by at least 256 MiB). The
// header's tensor names are cut out of shared 16 KiB blocks, its shapes out of blocks of up to
// 4096 dimensions; buffers for headers (up to 16 MiB) and for slab descriptions are reused from
// read to read.
//
// # Ownership
//
// A File holds one reference to its mapping; every tensor over it holds one more (through
// core.Wrap, released when the tensor and all its views are released or unreachable). The
// mapping is unmapped exactly once, when the count drops to zero: closing the File early
// does not invalidate its tensors, and releasing the tensors early does not invalidate the
// File. Writing to the file on disk while it is mapped shows through the tensors; truncating
// it faults them, so WriteFile never truncates: it writes a new file and renames it.
//
// # Invariants
//
//   - Files are untrusted input. A malformed file gets an error matching ErrFormat (with
//     ErrHeader, ErrLayout or ErrTruncated) or ErrUnsupportedDType, never a panic or a hang,
//     and allocations are bounded by the bytes present: the header length is checked against
//     MaxHeaderLen and the file's size before it is read, every tensor's range against the
//     data section before anything is allocated, shapes with checked arithmetic.
//   - The byte ranges of a file must tile its data section exactly, as the reference reader
//     requires: no gaps, no overlaps, nothing past the end or after the last tensor.
//   - Bool bytes read (ReadFile, Read, Reader, copies) are normalised to 0 and 1; mapped ones
//     lie as they are.
//   - core.FlagIsCopied marks exactly the tensors the file's bytes were copied into: every
//     tensor read (ReadFile, Read, Reader) or copied (File.Tensor) except those without
//     elements, which are fresh empty tensors, shared with nothing and copied from nothing, on
//     every path. File.Tensor reports them to adapters.ReportCopy as no copy, under every
//     policy; ReadFile and Read report for the whole call, which is a copy.
//   - Inputs are never modified.
package safetensorsx
