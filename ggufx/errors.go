package ggufx

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
)

// Errors returned by this package. A message leads with what was wrong and the values at fault
// ("ggufx: tensor "w" is Q4_0, which has no DLPack element type: ..."), without the sentinel's
// own text; test them with errors.Is. A sentinel that refines another wraps it: an ErrHeader
// error also matches ErrFormat, an ErrQuantized one ErrType.
var (
	// ErrFormat: the bytes are not a well-formed GGUF file. ErrHeader, ErrLayout, ErrTruncated
	// and ErrVersion match it too.
	ErrFormat error = errors.New("ggufx: malformed file")
	// ErrHeader: the header is not what the format names: a bad magic, a count or length larger
	// than the bytes present, an unknown metadata value type, arrays nested deeper than
	// MaxDepth, a key or tensor name given twice, a rank over MaxDims, a bool that is neither 0
	// nor 1, a general.alignment that is not a uint32 multiple of 8.
	ErrHeader error = fmt.Errorf("%w: bad header", ErrFormat)
	// ErrVersion: a GGUF version this package does not read (1, whose counts are 32-bit, or one
	// newer than 3), or a big-endian file.
	ErrVersion error = fmt.Errorf("%w: unsupported version", ErrFormat)
	// ErrLayout: the tensors' data does not lie where the format allows: an offset that is not
	// a multiple of the alignment, data past the end of the file, two tensors whose bytes
	// overlap, a size that overflows. (A quantized tensor whose blocks do not fit the bytes
	// before the next tensor does not refuse the file: its TensorInfo.Err says so, ErrType.)
	ErrLayout error = fmt.Errorf("%w: bad tensor data layout", ErrFormat)
	// ErrTruncated: the file ends inside its header.
	ErrTruncated error = fmt.Errorf("%w: truncated", ErrFormat)
	// ErrType: a tensor that cannot be read as elements (on read: TensorInfo.Err, a type number
	// ggml does not have or has removed, a fork's layout under a mainline number; a type
	// Dequantize does not convert), or one that cannot be written as the type asked for (on
	// write). It also matches adapters.ErrUnsupported.
	ErrType error = fmt.Errorf("ggufx: unsupported ggml type (%w)", adapters.ErrUnsupported)
	// ErrQuantized: File.Tensor was asked for a quantized tensor, which DLPack has no element
	// type for; File.Blocks shares its blocks and File.Dequantize converts it. Also ErrType.
	ErrQuantized error = fmt.Errorf("%w: quantized", ErrType)
	// ErrNotFound: the file has no tensor, or the metadata no key, of the name asked for.
	ErrNotFound error = errors.New("ggufx: not found")
	// ErrValueType: a metadata value is not of the type asked for.
	ErrValueType error = errors.New("ggufx: metadata value of another type")
	// ErrName: a tensor name or metadata key that cannot be written: empty, given twice,
	// or (tensor names) longer than MaxNameLen.
	ErrName error = errors.New("ggufx: bad name")
	// ErrNotRegularFile: a file to read (Open, Map, ReadFile, OpenSplit) is a named pipe, a
	// directory, a device or a socket. It is refused at once: opening a named pipe never waits
	// for a writer.
	ErrNotRegularFile error = errors.New("ggufx: not a regular file")
	// ErrClosed: the File was closed (tensors taken before Close stay valid).
	ErrClosed error = errors.New("ggufx: file closed")
)
