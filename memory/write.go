package memory

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// GatherBytes is the size of the buffer through which WriteTo gathers tensors of other layouts
// than C order: what it writes with one call of the writer at most, for such a tensor.
const GatherBytes = 1 << 20

// gatherPool keeps WriteTo's buffers, one per write running at a time.
var gatherPool = sync.Pool{New: func() any { return new([GatherBytes]byte) }}

// WriteTo writes t's elements to w in C order, whatever t's layout, and returns the bytes it
// wrote: what a C-order file format (.npy, safetensors, GGUF) stores. It holds t's memory
// (core.Hold) for every call of w.Write. A C-contiguous tensor's memory goes to w as it is, in
// one call; any other layout (a transposed view, steps, negative or zero strides) is gathered in
// C order through a buffer of GatherBytes, whole rows at a time where they fit, and is never
// copied whole. A view that repeats elements into more than 2^63 bytes (BroadcastTo) is refused
// with core.ErrOverflow before anything is written. Errors of w are returned as they are.
func WriteTo(w io.Writer, t *core.Tensor) (int64, error) {
	if t.Empty() {
		return 0, nil
	}
	if _, err := CBytes(t); err != nil {
		return 0, err
	}
	h, err := core.Hold(t)
	if err != nil {
		return 0, fmt.Errorf("memory: writing a tensor: %w", err)
	}
	defer h.Release()
	g := gatherer{w: w}
	if t.IsContiguous() {
		err = g.put(t)
		return g.n, err
	}
	buf := gatherPool.Get().(*[GatherBytes]byte)
	defer gatherPool.Put(buf)
	g.buf = buf[:]
	err = g.write(t)
	return g.n, err
}

// gatherer writes tensors that are not C-contiguous through its buffer.
type gatherer struct {
	w   io.Writer
	buf []byte
	n   int64 // bytes written so far
}

// write writes t, which is not C-contiguous: it has at least one dimension of size > 1 and none
// of size 0, and whole-byte elements (sub-byte dtypes are always contiguous).
func (g *gatherer) write(t *core.Tensor) error {
	n := t.Dim(0)
	rowBytes := t.Len() / n * int64(t.DType().Size()) // fits: WriteTo checked the whole
	per := int64(len(g.buf)) / rowBytes
	if per == 0 { // one row is larger than the buffer: go down a dimension
		for i := range n {
			v, err := t.Index(0, i)
			if err != nil {
				return err
			}
			if v.IsContiguous() {
				err = g.put(v)
			} else {
				err = g.write(v)
			}
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
		err = g.gather(v)
		v.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// put writes the memory of v, a C-contiguous tensor, as it is.
func (g *gatherer) put(v *core.Tensor) error {
	b, err := v.ReadOnlyBytes()
	if err != nil {
		return err
	}
	k, err := g.w.Write(b)
	g.n += int64(k)
	return err
}

// gather copies v, which fits in the buffer, into it in C order and writes it.
func (g *gatherer) gather(v *core.Tensor) error {
	dst, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(unsafe.SliceData(g.buf)), Device: core.CPUDevice,
		DType: v.DType(), Shape: v.Shape()}, g.buf)
	if err != nil {
		return err
	}
	if err := Copy(dst, v); err != nil {
		return err
	}
	k, err := g.w.Write(g.buf[:v.NumBytes()])
	g.n += int64(k)
	return err
}

// CBytes returns the bytes t's elements take in C order, what WriteTo writes (core.Tensor's
// NumBytes), or an error wrapping core.ErrOverflow where that does not fit in an int64: only views
// that repeat elements (BroadcastTo) can be that large.
func CBytes(t *core.Tensor) (int64, error) {
	if t.DType().SubByte() {
		return t.NumBytes(), nil // packed tensors are compact (core refuses other layouts)
	}
	hi, lo := bits.Mul64(uint64(t.Len()), uint64(t.DType().Size()))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, errs.Errorf(core.ErrOverflow, "memory: a %s tensor of shape %v takes more than 2^63 bytes in C order", t.DType(), t.Shape())
	}
	return int64(lo), nil
}

// SwapBytes reverses, in place, the byte order of every element of dtype dt in b (the real and
// imaginary parts of complex elements separately): what reading a file of the other byte order
// than this machine's takes. Elements of one byte, and bytes past the last whole word, are left
// as they are. b must be aligned for the element's words, as the start of a tensor's memory is.
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
