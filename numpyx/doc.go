// Package numpyx reads and writes NumPy's .npy and .npz files as core tensors, byte-exact with
// NumPy: anything numpy.save and numpy.savez write is read exactly, and anything written here
// numpy.load reads exactly (the header is the one numpy.save writes, byte for byte).
//
// numpyx is the .npy/.npz codec only. Live Python objects (NumPy arrays, PyTorch tensors, any
// object with __dlpack__) cross to and from Go in process through package
// github.com/dlpack-go/dlpack/pyexchange and its Python half, dlpackgo. numpyx does not read
// pickled object arrays, structured dtypes, strings or datetimes: those are refused with
// ErrUnsupportedDType.
//
// # Overview
//
//   - .npy: ReadFile, Read (any io.Reader), WriteFile, Write (any io.Writer), ReadHeader,
//     ParseHeader and HeaderOf for headers alone.
//   - Memory maps: Map opens a file as a read-only tensor over the file's bytes, in constant
//     time, unmapped when released or unreachable.
//   - .npz: ReadNPZ and WriteNPZ (Compressed() deflates) for whole archives; Open (a file) and
//     NewReader (any io.ReaderAt) read member by member, lazily; NPZWriter writes member by
//     member.
//
// numpyx follows the file-format shape of the adapter contract (see package adapters): Read,
// ReadFile, Map, Write, WriteFile and the header functions for the one-tensor .npy, Open and
// NewReader for the many-tensor .npz, options as adapters.Option (MaxInflated and Compressed
// are such options).
//
// Format versions 1.0, 2.0 and 3.0 are read; dtypes b1, i1-i8, u1-u8, f2 (float16), f4, f8,
// c8 and c16 in either byte order, C or Fortran order, 0-d and empty arrays. Headers are
// written padded so that the data starts on a 64-byte boundary, as NumPy does.
//
// # Invariants
//
//   - Files are untrusted input. Every malformed file gets an error, never a panic, a hang or
//     an allocation the bytes present do not back: errors match ErrFormat (with ErrVersion,
//     ErrHeader or ErrTruncated) or ErrUnsupportedDType under errors.Is, and say what was
//     wrong. The header dict is parsed, never evaluated.
//   - Tensors read here are native-endian (DLPack memory is): big-endian files are swapped on
//     read. Fortran-order files become Fortran-strided tensors, never reordered.
//   - A read puts the data straight into the tensor's allocation: it needs the array's size in
//     memory, not twice that (except from readers that cannot tell their size, see Read).
//   - Inputs are never modified; a written tensor is read through its memory as it lies (C- or
//     Fortran-contiguous) or streamed in C order through a small buffer.
//
// # Zero-copy and copies
//
// ReadFile, Read and the .npz readers copy into memory of their own (a file is not memory):
// memory.NewUninit's, Go memory for arrays under 4 MiB and, under memory.DefaultAllocation, mapped
// memory from core's cache of blocks from 4 MiB up (foreign memory, given back when the tensor
// is released or collected: release it when done). Map shares the file's bytes instead: the
// tensor is the page cache, read-only, and its release unmaps. Data that cannot be used as it
// lies in the file (the other byte order, misaligned) cannot be mapped zero-copy; Map follows
// the copy policy of package adapters for it (read and swap by default, refuse under
// adapters.ZeroCopyOnly). Write hands contiguous tensors' memory to the io.Writer without an
// intermediate copy.
package numpyx
