package safetensorsx

import "github.com/dlpack-go/dlpack/adapters"

// sentinel is an error value with a parent it also matches under errors.Is.
type sentinel struct {
	msg    string
	parent error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.parent }

// Errors returned by this package, always wrapped with what was wrong
// (fmt.Errorf("%w: ...")). Test them with errors.Is.
var (
	// ErrFormat: the bytes are not a well-formed safetensors file. ErrHeader, ErrLayout and
	// ErrTruncated match it too.
	ErrFormat error = &sentinel{msg: "safetensorsx: malformed file"}
	// ErrHeader: the header length field is absurd (over MaxHeaderLen) or the header is not the
	// JSON object the format names: not UTF-8, not JSON, not an object, nested too deeply, a key
	// twice, a tensor entry without dtype, shape or data_offsets or with values of the wrong
	// type, negative or fractional numbers, too many dimensions, "__metadata__" values that are
	// not strings.
	ErrHeader error = &sentinel{msg: "safetensorsx: bad header", parent: ErrFormat}
	// ErrLayout: the byte ranges the header gives do not tile the data section: they overlap,
	// leave gaps, run past its end or do not reach it, or a range's length is not what the
	// tensor's shape and dtype need (including shapes whose size overflows).
	ErrLayout error = &sentinel{msg: "safetensorsx: bad tensor byte ranges", parent: ErrFormat}
	// ErrTruncated: the file ends before the header or the data it promises.
	ErrTruncated error = &sentinel{msg: "safetensorsx: truncated", parent: ErrFormat}
	// ErrUnsupportedDType: a dtype string the format does not name (on read), or a core dtype
	// the format cannot hold (on write: complex128, lanes, int4, float8_e4m3 in its IEEE-style
	// variant, ...). It also matches adapters.ErrUnsupported.
	ErrUnsupportedDType error = &sentinel{msg: "safetensorsx: unsupported dtype", parent: adapters.ErrUnsupported}
	// ErrNotFound: the file has no tensor of the name asked for.
	ErrNotFound error = &sentinel{msg: "safetensorsx: no such tensor"}
	// ErrName: a tensor name that cannot be written: "__metadata__", or not valid UTF-8.
	ErrName error = &sentinel{msg: "safetensorsx: bad tensor name"}
	// ErrClosed: the File was closed (tensors taken before Close stay valid).
	ErrClosed error = &sentinel{msg: "safetensorsx: file closed"}
)
