package ggufx

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
	"github.com/dlpack-go/dlpack/memory"
)

// Entry is one tensor to write: its name, its elements, and the ggml type to store them as.
type Entry struct {
	// Name is the tensor's name: not empty, at most MaxNameLen bytes, unique in the file.
	Name string
	// Tensor holds the elements, in any layout; its shape is written reversed (innermost
	// first), as GGUF has it.
	Tensor *core.Tensor
	// Type is the ggml type to store the tensor as: the plain type of its dtype (TypeOf), or
	// Q8_0 or Q4_0 for a float32 tensor whose last dimension is a multiple of 32, quantized as
	// ggml's reference quantizer does.
	Type Type
}

// Plain is the Entry that stores t as it is, in the plain ggml type of its dtype (TypeOf).
// A dtype without one (unsigned integers, bool, ...) is refused by Write.
func Plain(name string, t *core.Tensor) Entry {
	e := Entry{Name: name, Tensor: t, Type: Type(math.MaxUint32)}
	if t != nil {
		if typ, err := TypeOf(t.DType()); err == nil {
			e.Type = typ
		}
	}
	return e
}

// Quantized is the Entry that stores the float32 tensor t as typ (Q8_0 or Q4_0).
func Quantized(name string, t *core.Tensor, typ Type) Entry {
	return Entry{Name: name, Tensor: t, Type: typ}
}

type plannedEntry struct {
	e    Entry
	dims []int64 // innermost first
	off  int64
	size int64
}

// alignmentOf is the alignment md asks for (general.alignment), or DefaultAlignment.
func alignmentOf(md *Metadata) (int64, error) {
	if md == nil {
		return DefaultAlignment, nil
	}
	v, ok := md.Get(AlignmentKey)
	if !ok {
		return DefaultAlignment, nil
	}
	a, isU32 := v.v.(uint32)
	if !isU32 || a < 8 || a&(a-1) != 0 {
		return 0, errs.Errorf(ErrHeader, "ggufx: %s is %s %v, not a uint32 power of 2 from 8 (llama.cpp reads no other)", AlignmentKey, v.typ, v)
	}
	return int64(a), nil
}

func planEntries(entries []Entry, align int64) ([]plannedEntry, error) {
	ps := make([]plannedEntry, len(entries))
	seen := make(map[string]bool, len(entries))
	at := int64(0)
	for i, e := range entries {
		t := e.Tensor
		switch {
		case e.Name == "":
			return nil, errs.Errorf(ErrName, "ggufx: tensor %d has an empty name", i)
		case len(e.Name) > MaxNameLen:
			return nil, errs.Errorf(ErrName, "ggufx: tensor name %q is %d bytes, over %d (llama.cpp refuses longer ones)", e.Name, len(e.Name), MaxNameLen)
		case seen[e.Name]:
			return nil, errs.Errorf(ErrName, "ggufx: tensor %q given twice", e.Name)
		case t == nil:
			return nil, errs.Errorf(core.ErrNil, "ggufx: tensor %q is nil", e.Name)
		case t.Released():
			return nil, errs.Errorf(core.ErrReleased, "ggufx: tensor %q was released", e.Name)
		case !t.HostAccessible():
			return nil, errs.Errorf(core.ErrNotHost, "ggufx: tensor %q is on %s, not in host memory", e.Name, t.Device())
		case t.Ndim() > MaxDims:
			return nil, errs.Errorf(ErrType, "ggufx: tensor %q has %d dimensions, GGUF holds at most %d", e.Name, t.Ndim(), MaxDims)
		}
		seen[e.Name] = true
		if err := checkEntryType(e); err != nil {
			return nil, err
		}
		dims := t.Shape()
		for l, r := 0, len(dims)-1; l < r; l, r = l+1, r-1 {
			dims[l], dims[r] = dims[r], dims[l]
		}
		size := t.Len() / int64(e.Type.BlockSize()) * int64(e.Type.BlockBytes())
		if size > math.MaxInt64-at-align {
			return nil, errs.Errorf(core.ErrOverflow, "ggufx: tensor %q: the data would end past 2^63 bytes", e.Name)
		}
		ps[i] = plannedEntry{e: e, dims: dims, off: at, size: size}
		at += size + pad(size, align)
	}
	return ps, nil
}

func checkEntryType(e Entry) error {
	dt := e.Tensor.DType()
	if q, ok := quantizers[e.Type]; ok && q != nil {
		if dt != core.Float32 {
			return errs.Errorf(ErrType, "ggufx: tensor %q is %s; %s is quantized from float32 only", e.Name, dt, e.Type)
		}
		if e.Tensor.Ndim() == 0 || e.Tensor.Dim(e.Tensor.Ndim()-1)%int64(e.Type.BlockSize()) != 0 {
			return errs.Errorf(ErrType, "ggufx: tensor %q of shape %v: %s needs a last dimension that is a multiple of %d", e.Name, e.Tensor.Shape(), e.Type, e.Type.BlockSize())
		}
		return nil
	}
	want, ok := e.Type.DType()
	if !ok {
		if _, err := TypeOf(dt); err != nil && !e.Type.Known() {
			return fmt.Errorf("%w (tensor %q)", err, e.Name)
		}
		return errs.Errorf(ErrType, "ggufx: tensor %q: Write stores plain types, Q8_0 and Q4_0, not %s", e.Name, e.Type)
	}
	if want != dt {
		return errs.Errorf(ErrType, "ggufx: tensor %q is %s, but its entry stores it as %s (%s): use Plain, or convert it first", e.Name, dt, e.Type, want)
	}
	if hostBigEndian && dt.Size() > 1 {
		return errs.Errorf(ErrType, "ggufx: tensor %q: writing %s on a big-endian machine (the format is little-endian) is not implemented", e.Name, dt)
	}
	return nil
}

func pad(n, align int64) int64 { return (align - n%align) % align }

// Write writes md and tensors to w as a GGUF version 3 file: the metadata in its order (nil:
// none), the tensor infos in the order of tensors, each tensor's data at the next multiple of
// the alignment (md's general.alignment, a uint32 multiple of 8, or DefaultAlignment), padded
// with zeros; the alignment must be a power of 2, which llama.cpp requires. Plain entries are written from the tensor's memory in C order (any layout is
// streamed through a 1 MiB buffer); Q8_0 and Q4_0 entries are quantized from float32 as ggml's
// reference quantizer does, and refuse NaN and infinities. The tensors are held (core.Hold)
// until Write returns. Errors name the entry at fault: a bad name (ErrName), a type the
// tensor cannot be stored as (ErrType), a nil, released or device tensor.
func Write(w io.Writer, md *Metadata, tensors []Entry) error {
	align, err := alignmentOf(md)
	if err != nil {
		return err
	}
	ps, err := planEntries(tensors, align)
	if err != nil {
		return err
	}
	ts := make([]*core.Tensor, len(ps))
	for i, p := range ps {
		ts[i] = p.e.Tensor
	}
	held, err := core.Hold(ts...)
	if err != nil {
		return fmt.Errorf("ggufx: %w", err)
	}
	defer held.Release()
	cw := &countWriter{w: w}
	hw := &headerWriter{w: cw}
	hw.bytes([]byte(Magic))
	hw.u32(3)
	hw.u64(uint64(len(ps)))
	if md == nil {
		hw.u64(0)
	} else {
		hw.u64(uint64(md.Len()))
		for _, kv := range md.kvs {
			hw.str(kv.Key)
			hw.u32(uint32(kv.Value.typ))
			hw.value(kv.Value)
		}
	}
	for _, p := range ps {
		hw.str(p.e.Name)
		hw.u32(uint32(len(p.dims)))
		for _, d := range p.dims {
			hw.u64(uint64(d))
		}
		hw.u32(uint32(p.e.Type))
		hw.u64(uint64(p.off))
	}
	hw.zeros(pad(cw.n, align))
	if hw.err != nil {
		return fmt.Errorf("ggufx: writing the header: %w", hw.err)
	}
	for _, p := range ps {
		if q := quantizers[p.e.Type]; q != nil {
			err = writeQuantized(cw, p, q)
		} else {
			_, err = memory.WriteTo(cw, p.e.Tensor)
		}
		if err == nil {
			hw.zeros(pad(p.size, align))
			err = hw.err
		}
		if err != nil {
			if strings.HasPrefix(err.Error(), "ggufx: ") { // this package's: the name after the cause
				return fmt.Errorf("%w (writing tensor %q)", err, p.e.Name)
			}
			return fmt.Errorf("ggufx: writing tensor %q: %w", p.e.Name, err)
		}
	}
	return nil
}

// writeQuantized quantizes p's float32 tensor (held by Write) and writes its blocks.
func writeQuantized(w io.Writer, p plannedEntry, q func([]byte, []float32)) error {
	t := p.e.Tensor
	if t.Empty() {
		return nil
	}
	if !t.IsContiguous() {
		c, err := memory.Contiguous(t)
		if err != nil {
			return err
		}
		defer c.Release()
		t = c
	}
	x, err := t.ReadOnlyFloat32s()
	if err != nil {
		return err
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return errs.Errorf(ErrType, "ggufx: element %d is %v, which %s cannot hold", i, v, p.e.Type)
		}
	}
	bs, bb := p.e.Type.BlockSize(), p.e.Type.BlockBytes()
	const chunkBlocks = 4096
	buf := make([]byte, chunkBlocks*bb)
	for i := 0; i < len(x); i += chunkBlocks * bs {
		n := min(chunkBlocks*bs, len(x)-i)
		q(buf, x[i:i+n])
		if _, err := w.Write(buf[:n/bs*bb]); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes md and tensors to the file called name (see Write), into a new file beside
// it that is renamed over name once complete: an existing file at name is never truncated under
// a mapping of it (its tensors stay valid), and nothing is left behind on an error.
func WriteFile(name string, md *Metadata, tensors []Entry) error {
	return tensorio.ReplaceFile("ggufx", name, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, tensorio.ChunkSize)
		if err := Write(bw, md, tensors); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("ggufx: %w", err)
		}
		return nil
	})
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// headerWriter writes little-endian fields, keeping the first error.
type headerWriter struct {
	w   io.Writer
	err error
	buf [8]byte
}

func (h *headerWriter) bytes(b []byte) {
	if h.err == nil {
		_, h.err = h.w.Write(b)
	}
}

func (h *headerWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(h.buf[:], v)
	h.bytes(h.buf[:4])
}

func (h *headerWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(h.buf[:], v)
	h.bytes(h.buf[:8])
}

func (h *headerWriter) str(s string) {
	h.u64(uint64(len(s)))
	h.bytes([]byte(s))
}

var zeroPad [256]byte

func (h *headerWriter) zeros(n int64) {
	for n > 0 {
		k := min(n, int64(len(zeroPad)))
		h.bytes(zeroPad[:k])
		n -= k
	}
}

// value writes v's payload (its type has been written).
func (h *headerWriter) value(v Value) {
	switch x := v.Any().(type) {
	case uint8:
		h.bytes([]byte{x})
	case int8:
		h.bytes([]byte{byte(x)})
	case uint16:
		binary.LittleEndian.PutUint16(h.buf[:], x)
		h.bytes(h.buf[:2])
	case int16:
		binary.LittleEndian.PutUint16(h.buf[:], uint16(x))
		h.bytes(h.buf[:2])
	case uint32:
		h.u32(x)
	case int32:
		h.u32(uint32(x))
	case float32:
		h.u32(math.Float32bits(x))
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		h.bytes([]byte{b})
	case string:
		h.str(x)
	case uint64:
		h.u64(x)
	case int64:
		h.u64(uint64(x))
	case float64:
		h.u64(math.Float64bits(x))
	default: // an array
		h.u32(uint32(v.elem))
		h.u64(uint64(v.Len()))
		h.elems(v)
	}
}

// elems writes the elements of array v (its element type and count have been written).
func (h *headerWriter) elems(v Value) {
	if vs, ok := v.v.([]Value); ok {
		for _, e := range vs {
			h.u32(uint32(e.elem))
			h.u64(uint64(e.Len()))
			h.elems(e)
		}
		return
	}
	for i := range v.Len() {
		e, _ := v.Index(i)
		h.value(e)
	}
}
