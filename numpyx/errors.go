package numpyx

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
	// ErrFormat: the bytes are not a well-formed .npy or .npz file. ErrVersion, ErrHeader and
	// ErrTruncated match it too.
	ErrFormat error = &sentinel{msg: "numpyx: malformed file"}
	// ErrVersion: the .npy magic is there but the format version is not 1.0, 2.0 or 3.0.
	ErrVersion error = &sentinel{msg: "numpyx: unsupported .npy format version", parent: ErrFormat}
	// ErrHeader: the header is not the dict literal NumPy writes (bad syntax, missing or extra
	// keys, values of the wrong type, negative or overflowing dimensions, too many dimensions).
	ErrHeader error = &sentinel{msg: "numpyx: bad .npy header", parent: ErrFormat}
	// ErrTruncated: the file ends before the header or the data it promises.
	ErrTruncated error = &sentinel{msg: "numpyx: truncated", parent: ErrFormat}
	// ErrUnsupportedDType: a dtype this package does not read or write (object, structured,
	// strings, datetimes, long double; on write: bfloat16, float8, sub-byte and vector types).
	// It also matches adapters.ErrUnsupported.
	ErrUnsupportedDType error = &sentinel{msg: "numpyx: unsupported dtype", parent: adapters.ErrUnsupported}
	// ErrNotFound: an .npz archive has no array under the key asked for.
	ErrNotFound error = &sentinel{msg: "numpyx: no such array in archive"}
	// ErrDuplicateKey: an .npz archive would hold (or holds) two arrays under one key.
	ErrDuplicateKey error = &sentinel{msg: "numpyx: duplicate array key"}
	// ErrTooLarge: reading an .npz archive would inflate more bytes than its MaxInflated cap.
	ErrTooLarge error = &sentinel{msg: "numpyx: archive inflates past its cap"}
)
