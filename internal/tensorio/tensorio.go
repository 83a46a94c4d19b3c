// Package tensorio holds what the file formats of this module (numpyx, safetensorsx) share:
// writing a tensor's elements in C order to an io.Writer whatever its layout, and swapping the
// bytes of elements read in the other byte order than this machine's.
package tensorio

import (
	"encoding/binary"
	"io"
	"math"
	"math/bits"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// HostBigEndian reports the byte order of this machine.
var HostBigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// ChunkSize is the buffer through which tensors of other layouts than C order are written.
const ChunkSize = 1 << 20

// A Writer writes tensors' elements in C order. A C-contiguous tensor's memory goes to the
// underlying writer as it is; any other layout (transposed views, steps, negative or zero
// strides) is gathered in C order through one ChunkSize buffer, allocated the first time a
// tensor needs it, never copied whole. Errors of the underlying writer are returned as they are.
type Writer struct {
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes t's elements in C order, holding t's memory (core.Hold) for every call of the
// underlying writer. A view that repeats elements into more than math.MaxInt64 bytes
// (BroadcastTo) is refused with core.ErrOverflow before anything is written.
func (s *Writer) Write(t *core.Tensor) error {
	if t.Empty() {
		return nil
	}
	if _, err := Bytes(t); err != nil {
		return err
	}
	h, err := core.Hold(t)
	if err != nil {
		return err
	}
	defer h.Release()
	return s.write(t)
}

func (s *Writer) write(t *core.Tensor) error {
	if t.IsContiguous() {
		b, err := t.ReadOnlyBytes()
		if err != nil {
			return err
		}
		_, err = s.w.Write(b)
		return err
	}
	// not contiguous: at least one dimension of size > 1 and none of size 0; sub-byte dtypes
	// are always contiguous, so elements are whole bytes
	if s.buf == nil {
		s.buf = make([]byte, ChunkSize)
	}
	n := t.Dim(0)
	rowBytes := t.Len() / n * int64(t.DType().Size()) // fits: Write checked the whole
	per := int64(len(s.buf)) / rowBytes
	if per == 0 { // one row is larger than the buffer: go down a dimension
		for i := range n {
			v, err := t.Index(0, i)
			if err != nil {
				return err
			}
			err = s.write(v)
			v.Release()
			if err != nil {
				return err
			}
		}
		return nil
	}
	for i := int64(0); i < n; i += per {
		v, err := t.Slice(0, i, min(i+per, n), 1)
		if err != nil {
			return err
		}
		err = s.gather(v)
		v.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// Bytes returns the bytes t's elements take in C order (core.Tensor.NumBytes), or an error
// wrapping core.ErrOverflow where that does not fit in an int64: only views that repeat
// elements (BroadcastTo) can be that large. Its message has no package prefix: the caller's
// goes in front ("numpyx: a float64 tensor of shape [...] takes more than 2^63 bytes in C order").
func Bytes(t *core.Tensor) (int64, error) {
	if t.DType().SubByte() {
		return t.NumBytes(), nil // packed tensors are compact (core refuses other layouts)
	}
	hi, lo := bits.Mul64(uint64(t.Len()), uint64(t.DType().Size()))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, errs.Errorf(core.ErrOverflow, "a %s tensor of shape %v takes more than 2^63 bytes in C order", t.DType(), t.Shape())
	}
	return int64(lo), nil
}

// gather copies v, which fits in the buffer, into it in C order and writes it.
func (s *Writer) gather(v *core.Tensor) error {
	dst, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(unsafe.SliceData(s.buf)), Device: core.CPUDevice,
		DType: v.DType(), Shape: v.Shape()}, s.buf)
	if err != nil {
		return err
	}
	if err := memory.Copy(dst, v); err != nil {
		return err
	}
	_, err = s.w.Write(s.buf[:v.NumBytes()])
	return err
}

// SwapBytes reverses the byte order of every element of dtype dt in b (the real and imaginary
// parts of complex elements separately). b must be aligned for the element's words (the start
// of a core.New allocation is).
func SwapBytes(b []byte, dt core.DLDataType) {
	word := dt.Size()
	if dt.Code == core.CodeComplex {
		word /= 2
	}
	if len(b) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	switch word {
	case 2:
		s := unsafe.Slice((*uint16)(p), len(b)/2)
		for i, v := range s {
			s[i] = bits.ReverseBytes16(v)
		}
	case 4:
		s := unsafe.Slice((*uint32)(p), len(b)/4)
		for i, v := range s {
			s[i] = bits.ReverseBytes32(v)
		}
	case 8:
		s := unsafe.Slice((*uint64)(p), len(b)/8)
		for i, v := range s {
			s[i] = bits.ReverseBytes64(v)
		}
	}
}

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
