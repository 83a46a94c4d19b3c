package tensorio

import "io/fs"

// FileKind names the kind of a file that is not regular, for errors: "a named pipe (FIFO)", "a
// directory", ...
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return "a file of mode " + m.String()
}
