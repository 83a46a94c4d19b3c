// Package tensorio holds the file handling that the file formats of this module (numpyx,
// safetensorsx, ggufx) and cmd/tensorinfo share: opening only regular files, replacing a file
// whole, and reading a tensor's bytes without trusting a header's sizes. It imports nothing of
// the module, like the rest of internal/; what touches tensors (WriteTo,
// CBytes, SwapBytes) is package memory's.
package tensorio

import (
	"encoding/binary"
	"io"
)

// HostBigEndian reports the byte order of this machine.
var HostBigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// ChunkSize is the size of the buffers through which the file formats write.
const ChunkSize = 1 << 20

// Remaining returns how many bytes r still holds, or -1 when it cannot tell (a plain stream).
func Remaining(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case io.Seeker:
		cur, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		end, err := r.Seek(0, io.SeekEnd)
		if err != nil {
			return -1
		}
		if _, err := r.Seek(cur, io.SeekStart); err != nil || end < cur {
			return -1
		}
		return end - cur
	}
	return -1
}

// SmallRead is the size up to which ReadData allocates at once even from a reader that cannot
// tell how much it holds.
const SmallRead = 64 << 10

// ReadData reads n bytes from r straight into the memory alloc returns (a tensor's), without
// ever allocating on the word of a header alone: when sized is false (r cannot tell how much it
// holds) and n is more than SmallRead, the bytes are first gathered in growing chunks until half
// of them have arrived, so that a header that lies costs at most about twice what r holds. It
// returns how many bytes arrived and, on failure, the error of alloc (as alloc returned it,
// with allocated false) or of the read (io.EOF or io.ErrUnexpectedEOF for a short r).
func ReadData(r io.Reader, n int64, sized bool, alloc func() ([]byte, error)) (got int64, allocated bool, err error) {
	var chunks [][]byte
	if !sized && n > SmallRead {
		size := int64(SmallRead)
		for got*2 < n {
			c := make([]byte, min(size, n-got))
			k, err := io.ReadFull(r, c)
			got += int64(k)
			chunks = append(chunks, c[:k])
			if err != nil {
				return got, false, err
			}
			size = got
		}
	}
	b, err := alloc()
	if err != nil {
		return got, false, err
	}
	off := 0
	for _, c := range chunks {
		off += copy(b[off:], c)
	}
	k, err := io.ReadFull(r, b[off:])
	return int64(off + k), true, err
}
