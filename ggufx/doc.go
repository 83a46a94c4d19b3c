// Package ggufx reads and writes GGUF files (the model file format of llama.cpp and ggml) as
// core tensors: by memory map, with every plain tensor a read-only view of the file's bytes,
// quantized tensors shared as their blocks or dequantized exactly as ggml computes them, and
// typed metadata.
//
// It is not a model loader: it knows nothing of architectures, tokenizers or the meaning of
// metadata keys beyond general.alignment and the split.* keys, and it does not run ggml's
// kernels. OpenSplit opens a model split into shards by llama.cpp's gguf-split
// (PREFIX-00001-of-NNNNN.gguf) as one index of tensors.
//
// # Format
//
// A file is, little-endian: the magic "GGUF", a version (3, or 2, which differs in nothing
// read here; version 1, with 32-bit counts, is refused), the tensor count and the metadata
// count (uint64), the metadata key/value pairs (a string key, a value type, the value:
// integers of 8 to 64 bits, float32, float64, bool, strings, and arrays of any of these,
// arrays of arrays included), one info per tensor (name, rank, dimensions innermost first, ggml
// type, offset in the data section), padding to the alignment (general.alignment, a uint32
// multiple of 8, or 32), and the data section: each tensor's bytes at its offset, a multiple of
// the alignment.
//
// # Overview
//
//   - Open maps a file and reads its header only (Header, Metadata, Tensors, Info, Names).
//   - File.Tensor takes a plain tensor (F32, F16, BF16, F64, I8, I16, I32, I64) as a core tensor
//     over the mapping; File.Blocks takes any tensor's blocks as a uint8 [blocks, block bytes]
//     tensor over the mapping; File.Dequantize converts Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1,
//     Q2_K to Q6_K and Q8_K (and the float types) to float32 or float16.
//   - ParseHeader and ReadHeader parse and check headers of bytes and readers.
//   - NewReader reads the header of any io.ReaderAt and returns a File that reads each tensor
//     into memory of its own when asked for it.
//   - Write and WriteFile write metadata and tensors (plain types, and Q8_0 and Q4_0 quantized
//     from float32); Metadata.Set and ValueOf make metadata values.
//
// ggufx follows the file-format shape of the adapter contract (see package adapters) for a
// many-tensor file: Open (mapped) and NewReader (any io.ReaderAt) return a File, OpenSplit a
// Split; Write, WriteFile and the header functions; options are adapters.Option. It has no Read,
// ReadFile or Map returning tensors by name: a GGUF file is mostly quantized tensors, which have
// no DLPack element type, so each is taken from the File as a tensor, as blocks or dequantized.
// ReadHeader takes the size of what r holds, which bounds the counts the header declares.
//
// # Zero-copy and copies
//
//	operation                       elements                  result
//	Open + File.Tensor              shared with the mapping   read-only view, O(1) in file size
//	Open + File.Blocks              shared with the mapping   read-only uint8 [blocks, bytes]
//	  Open(..., AlwaysCopy())       copied (FlagIsCopied)     writable, memory of its own
//	File.Dequantize                 computed                  writable float32/float16, FlagIsCopied
//	Write, WriteFile                plain: written from the tensor's memory (any layout streamed
//	                                in C order through a 1 MiB buffer); Q8_0, Q4_0: quantized
//	                                from a C-order float32 view
//
// Dimensions: ggml numbers a tensor's dimensions innermost first (ne[0] is the length of a
// row), so a weight of ne [4096, 32000] is a core tensor of shape [32000, 4096]: the same
// bytes, in C order. The field TensorInfo.Dims is the file's order, the method
// TensorInfo.Shape() the tensor's.
//
// # Dequantization
//
// File.Dequantize computes every element as ggml's reference dequantize_row_* (ggml-quants.c)
// does, in float32, every product rounded before a sum as its scalar code does, so the results
// are bit for bit those of the reference (the tests check them against two independent
// readings of the block layouts, one of them NumPy's). float16 results are those float32
// values rounded to the nearest half. Tensors of 2^18 elements and more are converted on up to
// GOMAXPROCS goroutines; the result comes from core's large-allocation path (mapped memory from
// 4 MiB up: release it when done). The IQ and TQ families and MXFP4 are not converted (ErrType);
// File.Blocks hands their blocks to code that knows them.
//
// # Ownership
//
// A File holds one reference to its mapping; every tensor over it holds one more (through
// core.Wrap, released when the tensor and all its views are released or unreachable). The
// mapping is unmapped exactly once, when the count drops to zero: closing the File early does
// not invalidate its tensors, and releasing the tensors early does not invalidate the File.
// Dequantize holds the mapping only while it reads it. Writing to the file on disk while it is
// mapped shows through the tensors; truncating it faults them, so WriteFile never truncates: it
// writes a new file and renames it.
//
// # Invariants
//
//   - Files are untrusted input. A malformed file gets an error matching ErrFormat (with
//     ErrHeader, ErrVersion, ErrLayout or ErrTruncated) or ErrType, never a panic or a hang,
//     and the error names the value at fault. Every count, string length, array length,
//     dimension, type and offset is checked against the bytes left before anything is
//     allocated for it or read; arrays of strings and of arrays grow as their elements arrive,
//     so a header that lies costs no more memory than a small multiple of the bytes it has.
//     Arrays nest at most MaxDepth deep, tensors have at most MaxDims dimensions.
//   - Every tensor's data lies inside the file at a multiple of the alignment from the data
//     section's start, and no two tensors' bytes overlap (gaps and any order are allowed, as
//     the specification allows them); a row is a whole number of blocks of its type.
//   - Every tensor over the mapping is aligned to the file's alignment (at least 8 bytes).
//   - Inputs are never modified.
package ggufx
