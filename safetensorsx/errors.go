package safetensorsx

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
)

// Errors returned by this package, always wrapped with what was wrong
// (fmt.Errorf("%w: ...")). Test them with errors.Is. A sentinel that refines another wraps it, as
// core's do, so that its message reads from the general to the particular.
var (
	// ErrFormat: the bytes are not a well-formed safetensors file. ErrHeader, ErrLayout and
	// ErrTruncated match it too.
	ErrFormat error = errors.New("safetensorsx: malformed file")
	// ErrHeader: the header length field is absurd (over MaxHeaderLen) or the header is not the
	// JSON object the format names: not UTF-8, not JSON, not an object, nested too deeply, a key
	// twice, a tensor entry without dtype, shape or data_offsets or with values of the wrong
	// type, negative or fractional numbers, too many dimensions, "__metadata__" values that are
	// not strings.
	ErrHeader error = fmt.Errorf("%w: bad header", ErrFormat)
	// ErrLayout: the byte ranges the header gives do not tile the data section: they overlap,
	// leave gaps, run past its end or do not reach it, or a range's length is not what the
	// tensor's shape and dtype need (including shapes whose size overflows).
	ErrLayout error = fmt.Errorf("%w: bad tensor byte ranges", ErrFormat)
	// ErrTruncated: the file ends before the header or the data it promises.
	ErrTruncated error = fmt.Errorf("%w: truncated", ErrFormat)
	// ErrUnsupportedDType: a dtype string the format does not name (on read), or a core dtype
	// the format cannot hold (on write: complex128, lanes, int4, float8_e4m3 in its IEEE-style
	// variant, ...). It also matches adapters.ErrUnsupported.
	ErrUnsupportedDType error = fmt.Errorf("safetensorsx: unsupported dtype (%w)", adapters.ErrUnsupported)
	// ErrNotFound: the file has no tensor of the name asked for.
	ErrNotFound error = errors.New("safetensorsx: no such tensor")
	// ErrName: a tensor name that cannot be written: "__metadata__", or not valid UTF-8.
	ErrName error = errors.New("safetensorsx: bad tensor name")
	// ErrNotRegularFile: a file to read (ReadFile, Map, Open) is a named pipe, a directory, a
	// device or a socket. It is refused at once: opening a named pipe never waits for a writer.
	ErrNotRegularFile error = errors.New("safetensorsx: not a regular file")
	// ErrClosed: the File was closed (tensors taken before Close stay valid).
	ErrClosed error = errors.New("safetensorsx: file closed")
)
