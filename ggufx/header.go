package ggufx

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Limits of what the parser accepts.
const (
	// MaxDims is the most dimensions a tensor may have (GGML_MAX_DIMS).
	MaxDims = 4
	// MaxDepth is the deepest nesting of metadata arrays: an array of arrays has depth 2.
	MaxDepth = 8
	// MaxNameLen is the longest tensor name Write writes (GGML_MAX_NAME - 1: llama.cpp refuses
	// longer ones). Reading accepts any length the file holds.
	MaxNameLen = 63
	// DefaultAlignment is the alignment of the data section and of every tensor's data when the
	// metadata has no general.alignment.
	DefaultAlignment = 32
	// AlignmentKey is the metadata key that sets the alignment (a uint32, multiple of 8).
	AlignmentKey = "general.alignment"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Header is a parsed and checked GGUF header: metadata, tensor infos, and where the data is.
type Header struct {
	// Version is the file's GGUF version, 2 or 3.
	Version uint32
	// Metadata holds the key/value pairs, in file order.
	Metadata *Metadata
	// Tensors describes the tensors, in file order.
	Tensors []TensorInfo
	// Alignment is general.alignment, or DefaultAlignment.
	Alignment int64
	// DataOffset is where the data section starts in the file (the header's end, padded to
	// Alignment).
	DataOffset int64
	// DataLen is the bytes of the data section that tensors use: the end of the last tensor's
	// data, relative to DataOffset.
	DataLen int64

	index map[string]int
}

// TensorInfo describes one tensor of a GGUF file.
type TensorInfo struct {
	// Name is the tensor's name.
	Name string
	// Type is the ggml type its data is stored as.
	Type Type
	// Dims are the dimensions as the file gives them: innermost (fastest-varying) first, as ggml
	// numbers them (ne[0] is the length of a row). The method Shape() gives them in C order.
	Dims []int64
	// Offset is where its data starts, relative to the data section (a multiple of the
	// alignment).
	Offset int64
	// Size is the bytes of its data.
	Size int64
}

// Shape returns the dimensions in C order (outermost first), as core tensors have them: Dims
// reversed. A tensor of ggml's ne = [4096, 32000] (rows of 4096) has shape [32000, 4096].
func (ti TensorInfo) Shape() []int64 {
	s := slices.Clone(ti.Dims)
	slices.Reverse(s)
	return s
}

// Len is the number of elements (1 for rank 0).
func (ti TensorInfo) Len() int64 {
	n := int64(1)
	for _, d := range ti.Dims {
		n *= d // checked when parsed
	}
	return n
}

// Blocks is the number of blocks of its type the data holds.
func (ti TensorInfo) Blocks() int64 { return ti.Len() / int64(ti.Type.BlockSize()) }

// Info describes the tensor called name, or fails with ErrNotFound.
func (h *Header) Info(name string) (TensorInfo, error) {
	i, ok := h.index[name]
	if !ok {
		return TensorInfo{}, errs.Errorf(ErrNotFound, "ggufx: no tensor %q", name)
	}
	return h.Tensors[i], nil
}

// Names returns the tensors' names in file order.
func (h *Header) Names() []string {
	out := make([]string, len(h.Tensors))
	for i, ti := range h.Tensors {
		out[i] = ti.Name
	}
	return out
}

// ParseHeader parses the header of the GGUF file whose bytes are b (the whole file: the
// tensors' data ranges are checked against its length). See ReadHeader.
func ParseHeader(b []byte) (*Header, error) {
	return ReadHeader(bytes.NewReader(b), int64(len(b)))
}

// ReadHeader reads and checks the header of a GGUF file of size bytes from r, which is at its
// first byte, reading no more than the header. Files are untrusted: every count, length,
// dimension, type and offset is checked against the bytes size leaves before anything is
// allocated for it or read (a count of strings allocates as strings arrive), so a lying header
// costs no more memory than a small multiple of the bytes it really has; arrays nest at most
// MaxDepth deep. Errors match ErrFormat (ErrHeader, ErrVersion, ErrLayout or ErrTruncated) or
// ErrType for a ggml type number ggml does not have, and name the value at fault.
//
// The tensors' data must lie in the file, each at a multiple of the alignment from the data
// section's start, none overlapping another; each row (Dims[0]) must be a whole number of
// blocks of its type.
func ReadHeader(r io.Reader, size int64) (*Header, error) {
	p := &parser{r: bufio.NewReaderSize(r, 64<<10), left: size, size: size}
	h, err := p.header()
	if err != nil {
		return nil, err
	}
	return h, nil
}

type parser struct {
	r    *bufio.Reader
	left int64 // bytes of the file not yet read
	size int64
	buf  [8]byte
	what string // what is being read, for errors
}

func (p *parser) pos() int64 { return p.size - p.left }

// need checks that n more bytes are in the file.
func (p *parser) need(n uint64) error {
	if n > uint64(max(p.left, 0)) {
		return errs.Errorf(ErrTruncated, "ggufx: %s needs %d bytes at offset %d, the file has %d left", p.what, n, p.pos(), max(p.left, 0))
	}
	return nil
}

func (p *parser) read(b []byte) error {
	if err := p.need(uint64(len(b))); err != nil {
		return err
	}
	if _, err := io.ReadFull(p.r, b); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return errs.Errorf(ErrTruncated, "ggufx: %s at offset %d: %v", p.what, p.pos(), err)
		}
		return fmt.Errorf("ggufx: reading %s at offset %d: %w", p.what, p.pos(), err)
	}
	p.left -= int64(len(b))
	return nil
}

func (p *parser) u8() (uint8, error) {
	err := p.read(p.buf[:1])
	return p.buf[0], err
}

func (p *parser) u16() (uint16, error) {
	err := p.read(p.buf[:2])
	return binary.LittleEndian.Uint16(p.buf[:2]), err
}

func (p *parser) u32() (uint32, error) {
	err := p.read(p.buf[:4])
	return binary.LittleEndian.Uint32(p.buf[:4]), err
}

func (p *parser) u64() (uint64, error) {
	err := p.read(p.buf[:8])
	return binary.LittleEndian.Uint64(p.buf[:8]), err
}

func (p *parser) str() (string, error) {
	n, err := p.u64()
	if err != nil {
		return "", err
	}
	if err := p.need(n); err != nil {
		return "", fmt.Errorf("%w (a string of %d bytes)", err, n)
	}
	b := make([]byte, n)
	if err := p.read(b); err != nil {
		return "", err
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

func (p *parser) header() (*Header, error) {
	p.what = "the magic"
	var magic [4]byte
	if err := p.read(magic[:]); err != nil {
		return nil, err
	}
	if string(magic[:]) != Magic {
		return nil, errs.Errorf(ErrHeader, "ggufx: not a GGUF file: magic %q, not %q", magic[:], Magic)
	}
	p.what = "the version"
	v, err := p.u32()
	if err != nil {
		return nil, err
	}
	switch {
	case v == 1:
		return nil, errs.Errorf(ErrVersion, "ggufx: GGUF version 1 (32-bit counts, before August 2023) is not read; convert the file with a current llama.cpp")
	case v == 2 || v == 3:
	case bits.ReverseBytes32(v) >= 1 && bits.ReverseBytes32(v) <= 3:
		return nil, errs.Errorf(ErrVersion, "ggufx: a big-endian GGUF file (version %d byte-swapped): only little-endian files are read", bits.ReverseBytes32(v))
	default:
		return nil, errs.Errorf(ErrVersion, "ggufx: GGUF version %d is not read (this package reads 2 and 3)", v)
	}
	h := &Header{Version: v, Metadata: &Metadata{}}
	p.what = "the tensor count"
	nt, err := p.u64()
	if err != nil {
		return nil, err
	}
	p.what = "the metadata count"
	nkv, err := p.u64()
	if err != nil {
		return nil, err
	}
	// a metadata pair takes at least 8+4+1 bytes (an empty key and a uint8), a tensor info 8+4+4+8
	if nkv > uint64(p.left)/13 {
		return nil, errs.Errorf(ErrHeader, "ggufx: %d metadata pairs cannot fit in the %d bytes left", nkv, p.left)
	}
	if nt > uint64(p.left)/24 {
		return nil, errs.Errorf(ErrHeader, "ggufx: %d tensors cannot fit in the %d bytes left", nt, p.left)
	}
	h.Metadata.kvs = make([]KV, 0, min(nkv, 1024))
	h.Metadata.index = make(map[string]int, min(nkv, 1024))
	for i := range nkv {
		p.what = fmt.Sprintf("metadata key %d", i)
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := h.Metadata.index[key]; dup {
			return nil, errs.Errorf(ErrHeader, "ggufx: metadata key %q given twice", key)
		}
		p.what = fmt.Sprintf("metadata %q", key)
		t, err := p.u32()
		if err != nil {
			return nil, err
		}
		val, err := p.value(ValueType(t), 1)
		if err != nil {
			return nil, fmt.Errorf("%w (in metadata %q)", err, key)
		}
		h.Metadata.set(key, val)
	}
	h.Alignment = DefaultAlignment
	if av, ok := h.Metadata.Get(AlignmentKey); ok {
		a, isU32 := av.v.(uint32)
		if !isU32 || av.typ != TypeUint32 {
			return nil, errs.Errorf(ErrHeader, "ggufx: %s is %s %v, not a uint32", AlignmentKey, av.typ, av)
		}
		if a == 0 || a%8 != 0 {
			return nil, errs.Errorf(ErrHeader, "ggufx: %s is %d, not a positive multiple of 8", AlignmentKey, a)
		}
		h.Alignment = int64(a)
	}
	h.Tensors = make([]TensorInfo, 0, min(nt, 4096))
	h.index = make(map[string]int, min(nt, 4096))
	for i := range nt {
		ti, err := p.tensorInfo(i)
		if err != nil {
			return nil, err
		}
		if _, dup := h.index[ti.Name]; dup {
			return nil, errs.Errorf(ErrHeader, "ggufx: tensor %q given twice", ti.Name)
		}
		h.index[ti.Name] = len(h.Tensors)
		h.Tensors = append(h.Tensors, ti)
	}
	end := p.pos()
	h.DataOffset = end + (h.Alignment-end%h.Alignment)%h.Alignment
	if err := h.checkLayout(p.size); err != nil {
		return nil, err
	}
	return h, nil
}

// value reads a value of type t at nesting depth (1 for a key's own value).
func (p *parser) value(t ValueType, depth int) (Value, error) {
	switch t {
	case TypeUint8:
		x, err := p.u8()
		return Value{typ: t, v: x}, err
	case TypeInt8:
		x, err := p.u8()
		return Value{typ: t, v: int8(x)}, err
	case TypeUint16:
		x, err := p.u16()
		return Value{typ: t, v: x}, err
	case TypeInt16:
		x, err := p.u16()
		return Value{typ: t, v: int16(x)}, err
	case TypeUint32:
		x, err := p.u32()
		return Value{typ: t, v: x}, err
	case TypeInt32:
		x, err := p.u32()
		return Value{typ: t, v: int32(x)}, err
	case TypeFloat32:
		x, err := p.u32()
		return Value{typ: t, v: math.Float32frombits(x)}, err
	case TypeBool:
		x, err := p.u8()
		if err == nil && x > 1 {
			err = errs.Errorf(ErrHeader, "ggufx: bool byte %d at offset %d, not 0 or 1", x, p.pos()-1)
		}
		return Value{typ: t, v: x == 1}, err
	case TypeString:
		s, err := p.str()
		return Value{typ: t, v: s}, err
	case TypeUint64:
		x, err := p.u64()
		return Value{typ: t, v: x}, err
	case TypeInt64:
		x, err := p.u64()
		return Value{typ: t, v: int64(x)}, err
	case TypeFloat64:
		x, err := p.u64()
		return Value{typ: t, v: math.Float64frombits(x)}, err
	case TypeArray:
		return p.array(depth)
	}
	return Value{}, errs.Errorf(ErrHeader, "ggufx: value type %d at offset %d (the format has 0 to 12)", uint32(t), p.pos()-4)
}

func (p *parser) array(depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, errs.Errorf(ErrHeader, "ggufx: arrays nested more than %d deep at offset %d", MaxDepth, p.pos())
	}
	et, err := p.u32()
	if err != nil {
		return Value{}, err
	}
	n, err := p.u64()
	if err != nil {
		return Value{}, err
	}
	e := ValueType(et)
	if !e.Known() {
		return Value{}, errs.Errorf(ErrHeader, "ggufx: array element type %d at offset %d (the format has 0 to 12)", et, p.pos()-12)
	}
	minSize := uint64(8) // a string's length; an array's type and count take 12
	if s := valueSizes[e]; s > 0 {
		minSize = uint64(s)
	}
	if n > uint64(p.left)/minSize {
		return Value{}, errs.Errorf(ErrHeader, "ggufx: array of %d %s cannot fit in the %d bytes left (at offset %d)", n, e, p.left, p.pos())
	}
	switch e {
	case TypeUint8:
		return scalars(p, e, n, func(b []byte) uint8 { return b[0] })
	case TypeInt8:
		return scalars(p, e, n, func(b []byte) int8 { return int8(b[0]) })
	case TypeUint16:
		return scalars(p, e, n, binary.LittleEndian.Uint16)
	case TypeInt16:
		return scalars(p, e, n, func(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) })
	case TypeUint32:
		return scalars(p, e, n, binary.LittleEndian.Uint32)
	case TypeInt32:
		return scalars(p, e, n, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
	case TypeFloat32:
		return scalars(p, e, n, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
	case TypeUint64:
		return scalars(p, e, n, binary.LittleEndian.Uint64)
	case TypeInt64:
		return scalars(p, e, n, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	case TypeFloat64:
		return scalars(p, e, n, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
	case TypeBool:
		v, err := scalars(p, e, n, func(b []byte) uint8 { return b[0] })
		if err != nil {
			return Value{}, err
		}
		raw := v.v.([]uint8)
		out := make([]bool, len(raw))
		for i, x := range raw {
			if x > 1 {
				return Value{}, errs.Errorf(ErrHeader, "ggufx: bool %d of an array is %d, not 0 or 1", i, x)
			}
			out[i] = x == 1
		}
		return arr(e, out), nil
	case TypeString:
		out := make([]string, 0, min(n, 4096)) // grows as strings arrive
		for range n {
			s, err := p.str()
			if err != nil {
				return Value{}, err
			}
			out = append(out, s)
		}
		return arr(e, out), nil
	}
	out := make([]Value, 0, min(n, 1024)) // arrays of arrays grow as they arrive
	for range n {
		v, err := p.value(TypeArray, depth+1)
		if err != nil {
			return Value{}, err
		}
		out = append(out, v)
	}
	return arr(e, out), nil
}

// scalars reads n scalars of e (whose bytes the caller has checked are in the file) in chunks.
func scalars[T any](p *parser, e ValueType, n uint64, dec func([]byte) T) (Value, error) {
	size := valueSizes[e]
	if err := p.need(n * uint64(size)); err != nil { // n*size <= left: checked by the caller
		return Value{}, err
	}
	out := make([]T, n)
	var chunk [4096]byte
	per := len(chunk) / size
	for i := 0; i < len(out); i += per {
		k := min(per, len(out)-i)
		b := chunk[:k*size]
		if err := p.read(b); err != nil {
			return Value{}, err
		}
		for j := range k {
			out[i+j] = dec(b[j*size:])
		}
	}
	return arr(e, out), nil
}

func (p *parser) tensorInfo(i uint64) (TensorInfo, error) {
	p.what = fmt.Sprintf("the name of tensor %d", i)
	name, err := p.str()
	if err != nil {
		return TensorInfo{}, err
	}
	p.what = fmt.Sprintf("tensor %q", name)
	nd, err := p.u32()
	if err != nil {
		return TensorInfo{}, err
	}
	if nd > MaxDims {
		return TensorInfo{}, errs.Errorf(ErrHeader, "ggufx: tensor %q has %d dimensions, over %d", name, nd, MaxDims)
	}
	ti := TensorInfo{Name: name, Dims: make([]int64, nd)}
	n := uint64(1)
	for j := range ti.Dims {
		d, err := p.u64()
		if err != nil {
			return TensorInfo{}, err
		}
		if d > math.MaxInt64 {
			return TensorInfo{}, errs.Errorf(ErrLayout, "ggufx: tensor %q: dimension %d is %d, over 2^63", name, j, d)
		}
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo > math.MaxInt64 {
			return TensorInfo{}, errs.Errorf(ErrLayout, "ggufx: tensor %q: dimensions %v overflow 2^63 elements", name, ti.Dims[:j+1])
		}
		n = lo
		ti.Dims[j] = int64(d)
	}
	t, err := p.u32()
	if err != nil {
		return TensorInfo{}, err
	}
	ti.Type = Type(t)
	if !ti.Type.Known() {
		return TensorInfo{}, errs.Errorf(ErrType, "ggufx: tensor %q has ggml type %d, which ggml does not have (or has removed)", name, t)
	}
	off, err := p.u64()
	if err != nil {
		return TensorInfo{}, err
	}
	if off > math.MaxInt64 {
		return TensorInfo{}, errs.Errorf(ErrLayout, "ggufx: tensor %q: offset %d over 2^63", name, off)
	}
	ti.Offset = int64(off)
	bs := uint64(ti.Type.BlockSize())
	row := uint64(1)
	if nd > 0 {
		row = uint64(ti.Dims[0])
	}
	if row%bs != 0 {
		return TensorInfo{}, errs.Errorf(ErrLayout, "ggufx: tensor %q: rows of %d elements are not a whole number of %s blocks of %d", name, row, ti.Type, bs)
	}
	hi, lo := bits.Mul64(n/bs, uint64(ti.Type.BlockBytes()))
	if hi != 0 || lo > math.MaxInt64 {
		return TensorInfo{}, errs.Errorf(ErrLayout, "ggufx: tensor %q: %d elements of %s overflow 2^63 bytes", name, n, ti.Type)
	}
	ti.Size = int64(lo)
	return ti, nil
}

// checkLayout checks that every tensor's data lies in a file of size bytes, aligned, and that
// no two overlap; it sets DataLen.
func (h *Header) checkLayout(size int64) error {
	avail := max(size-h.DataOffset, 0)
	order := make([]int, 0, len(h.Tensors))
	for i, ti := range h.Tensors {
		if ti.Offset%h.Alignment != 0 {
			return errs.Errorf(ErrLayout, "ggufx: tensor %q: offset %d is not a multiple of the alignment %d", ti.Name, ti.Offset, h.Alignment)
		}
		if ti.Size > 0 && (ti.Offset > avail || ti.Size > avail-ti.Offset) {
			return errs.Errorf(ErrLayout, "ggufx: tensor %q: data [%d, %d) of the data section runs past its end (%d bytes, from file offset %d)", ti.Name, ti.Offset, uint64(ti.Offset)+uint64(ti.Size), avail, h.DataOffset)
		}
		if ti.Size > 0 { // empty tensors' offsets are only checked for alignment
			order = append(order, i)
			h.DataLen = max(h.DataLen, ti.Offset+ti.Size)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(h.Tensors[a].Offset, h.Tensors[b].Offset) })
	for k := 1; k < len(order); k++ {
		a, b := h.Tensors[order[k-1]], h.Tensors[order[k]]
		if a.Offset+a.Size > b.Offset {
			return errs.Errorf(ErrLayout, "ggufx: tensors %q [%d, %d) and %q [%d, %d) overlap", a.Name, a.Offset, a.Offset+a.Size, b.Name, b.Offset, b.Offset+b.Size)
		}
	}
	return nil
}
