//go:build !unix

package tensorio

// openNonblock is 0 where the system has no O_NONBLOCK: a named pipe is refused once it is open.
const openNonblock = 0
