package numpyx

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
)

// Errors returned by this package. A message leads with what was wrong and the values at fault
// ("numpyx: shape[0] = -1 is negative"), without the sentinel's own text; test them with
// errors.Is. A sentinel that refines another wraps it, as core's do: an ErrHeader error also
// matches ErrFormat.
var (
	// ErrFormat: the bytes are not a well-formed .npy or .npz file. ErrVersion, ErrHeader and
	// ErrTruncated match it too.
	ErrFormat error = errors.New("numpyx: malformed file")
	// ErrVersion: the .npy magic is there but the format version is not 1.0, 2.0 or 3.0.
	ErrVersion error = fmt.Errorf("%w: unsupported .npy format version", ErrFormat)
	// ErrHeader: the header is not the dict literal NumPy writes (bad syntax, missing or extra
	// keys, values of the wrong type, negative or overflowing dimensions, too many dimensions).
	ErrHeader error = fmt.Errorf("%w: bad .npy header", ErrFormat)
	// ErrTruncated: the file ends before the header or the data it promises.
	ErrTruncated error = fmt.Errorf("%w: truncated", ErrFormat)
	// ErrUnsupportedDType: a dtype this package does not read or write (object, structured,
	// strings, datetimes, long double; on write: bfloat16, float8, sub-byte and vector types).
	// It also matches adapters.ErrUnsupported.
	ErrUnsupportedDType error = fmt.Errorf("numpyx: unsupported dtype (%w)", adapters.ErrUnsupported)
	// ErrNotFound: an .npz archive has no array under the key asked for.
	ErrNotFound error = errors.New("numpyx: no such array in archive")
	// ErrDuplicateKey: an .npz archive would hold (or holds) two arrays under one key.
	ErrDuplicateKey error = errors.New("numpyx: duplicate array key")
	// ErrTooLarge: reading an .npz archive would inflate more bytes than its MaxInflated cap.
	ErrTooLarge error = errors.New("numpyx: archive inflates past its cap")
	// ErrNotRegularFile: a file to read (ReadFile, Map, Open, ReadNPZ) is a named pipe, a
	// device, a socket or a directory: such files can block a reader forever or never end, and
	// are refused before anything is read.
	ErrNotRegularFile error = errors.New("numpyx: not a regular file")
)
