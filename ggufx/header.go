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
	// Size is the bytes of its data. For a tensor whose layout this package cannot take from
	// its type (Err is set) it is the extent the offsets give: up to the next tensor's data, or
	// to the end of the file for the last, padding included.
	Size int64
	// Err is nil for a tensor whose bytes lie as ggml lays out its type. Otherwise it says why
	// the tensor is not read as elements, and File.Tensor and File.Dequantize return it (it
	// matches ErrType): a type number ggml does not have (a fork's, or a newer one), a type
	// ggml has removed, or a quantized type whose ggml layout does not fit the bytes the file
	// gives the tensor (a fork's layout under a mainline number: rows that are not whole
	// blocks, blocks that would run into the next tensor, or blocks that leave a gap before it,
	// which no writer leaves). File.Blocks still shares its Size bytes, as one block. (Blocks
	// running past the end of the file refuse the whole file, ErrLayout: a file cut short.)
	Err error

	why string // what checkLayout found out of place for a known quantized type
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

// Blocks is the number of blocks of its type the data holds; 0 when Err is set (the layout is
// not known).
func (ti TensorInfo) Blocks() int64 {
	if ti.Err != nil || ti.Type.BlockSize() == 0 {
		return 0
	}
	return ti.Len() / int64(ti.Type.BlockSize())
}

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
// MaxDepth deep. Errors match ErrFormat (ErrHeader, ErrVersion, ErrLayout or ErrTruncated) and
// name the value at fault.
//
// The tensors' data must lie in the file, each at a multiple of the alignment from the data
// section's start, none overlapping another. A tensor whose type number ggml does not have
// (or has removed), or whose quantized type's ggml layout does not fit the bytes up to the next
// tensor (rows that are not whole blocks, blocks too many or too few: a fork's layout under a
// mainline number), does not refuse the file: it takes the bytes up to the next tensor (or the
// end of the file), and its TensorInfo.Err says why it is not read as elements.
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
	b, err := p.bytes(n)
	if err != nil {
		return "", fmt.Errorf("%w (a string of %d bytes)", err, n)
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// readStep is the most memory a length read from the file allocates before the bytes it
// counts arrive: from there the buffer at most doubles with each step read, so a length that
// lies about what the reader holds (ReadHeader given a size larger than the file) costs at most
// twice the bytes really read, plus one step.
const readStep = 1 << 20

// bytes reads n bytes (checked by the caller against what size leaves) in steps of at least
// readStep, growing the buffer as they arrive.
func (p *parser) bytes(n uint64) ([]byte, error) {
	b := make([]byte, 0, min(n, readStep))
	for uint64(len(b)) < n {
		k := int(min(n-uint64(len(b)), uint64(max(len(b), readStep))))
		b = slices.Grow(b, k)
		if err := p.read(b[len(b) : len(b)+k]); err != nil {
			return nil, err
		}
		b = b[:len(b)+k]
	}
	return b, nil
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
	// the slice grows as elements arrive (a size larger than the reader holds must not
	// allocate what n claims)
	out := make([]T, 0, min(n, uint64(readStep/size)))
	var chunk [4096]byte
	per := uint64(len(chunk) / size)
	for i := uint64(0); i < n; i += per {
		k := min(per, n-i)
		b := chunk[:k*uint64(size)]
		if err := p.read(b); err != nil {
			return Value{}, err
		}
		for j := range k {
			out = append(out, dec(b[j*uint64(size):]))
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
	off, err := p.u64()
	if err != nil {
		return TensorInfo{}, err
	}
	if off > math.MaxInt64 {
		return TensorInfo{}, errs.Errorf(ErrLayout, "ggufx: tensor %q: offset %d over 2^63", name, off)
	}
	ti.Offset = int64(off)
	if !ti.Type.Known() {
		ti.Size = -1 // the extent, found by checkLayout
		return ti, nil
	}
	bs := uint64(ti.Type.BlockSize())
	row := uint64(1)
	if nd > 0 {
		row = uint64(ti.Dims[0])
	}
	if row%bs != 0 {
		if !ti.Type.Quantized() {
			return TensorInfo{}, errs.Errorf(ErrLayout, "ggufx: tensor %q: rows of %d elements are not a whole number of %s blocks of %d", name, row, ti.Type, bs)
		}
		ti.Size, ti.why = -1, fmt.Sprintf("rows of %d elements are not a whole number of its blocks", row)
		return ti, nil
	}
	hi, lo := bits.Mul64(n/bs, uint64(ti.Type.BlockBytes()))
	if hi != 0 || lo > math.MaxInt64 {
		return TensorInfo{}, errs.Errorf(ErrLayout, "ggufx: tensor %q: %d elements of %s overflow 2^63 bytes", name, n, ti.Type)
	}
	ti.Size = int64(lo)
	return ti, nil
}

// checkLayout checks that every tensor's data lies in a file of size bytes, aligned, and that
// no two overlap; it sets DataLen. A tensor whose layout its type does not give (an unknown or
// removed type, or a quantized one whose ggml layout does not fit) takes the extent up to the
// next tensor's data or the end of the file, and its Err says why it is not read as elements.
func (h *Header) checkLayout(size int64) error {
	avail := max(size-h.DataOffset, 0)
	order := make([]int, 0, len(h.Tensors))
	for i, ti := range h.Tensors {
		if ti.Offset%h.Alignment != 0 {
			return errs.Errorf(ErrLayout, "ggufx: tensor %q: offset %d is not a multiple of the alignment %d", ti.Name, ti.Offset, h.Alignment)
		}
		if ti.Size == 0 || ti.Len() == 0 { // empty tensors' offsets are only checked for alignment
			h.Tensors[i].Size = 0
			continue
		}
		if ti.Offset >= avail {
			return errs.Errorf(ErrLayout, "ggufx: tensor %q: data at %d of the data section starts past its end (%d bytes, from file offset %d)", ti.Name, ti.Offset, avail, h.DataOffset)
		}
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(h.Tensors[a].Offset, h.Tensors[b].Offset) })
	for k, i := range order {
		ti := &h.Tensors[i]
		limit, next := avail, ""
		if k+1 < len(order) {
			nt := h.Tensors[order[k+1]]
			limit, next = nt.Offset, nt.Name
		}
		extent := limit - ti.Offset
		switch {
		case ti.Size > extent && next == "": // a file cut short (or a fork's layout: it cannot be told)
			fork := ""
			if bs, bb, ok := guessLayout(*ti, extent, h.Alignment); ok && ti.Type.Quantized() {
				fork = fmt.Sprintf(" (or %d-byte blocks of %d: a fork's %s?)", bb, bs, ti.Type)
			}
			return errs.Errorf(ErrLayout, "ggufx: tensor %q: data [%d, %d) of the data section runs past its end (%d bytes, from file offset %d)%s", ti.Name, ti.Offset, uint64(ti.Offset)+uint64(ti.Size), avail, h.DataOffset, fork)
		case ti.Size > extent && !ti.Type.Quantized() || extent == 0:
			nt := h.Tensors[order[k+1]]
			return errs.Errorf(ErrLayout, "ggufx: tensors %q [%d, %d) and %q [%d, %d) overlap", ti.Name, ti.Offset, ti.Offset+max(ti.Size, 1), nt.Name, nt.Offset, nt.Offset+max(nt.Size, 1))
		case ti.Size > extent:
			ti.why = fmt.Sprintf("its %d blocks would take %d bytes", ti.Blocks(), ti.Size)
			fallthrough
		case ti.Size < 0:
			ti.Err = unreadable(*ti, extent, next, h.Alignment)
			ti.Size = extent
		case ti.Type.Quantized() && next != "" && ti.Size+pad(ti.Size, h.Alignment) < extent:
			// every writer packs tensors (ggml refuses a gap): larger blocks than ggml's
			ti.why = fmt.Sprintf("its %d blocks take %d bytes, not the %d before the next tensor", ti.Blocks(), ti.Size, extent)
			ti.Err = unreadable(*ti, extent, next, h.Alignment)
			ti.Size = extent
		}
		h.DataLen = max(h.DataLen, ti.Offset+ti.Size)
	}
	for i, ti := range h.Tensors { // empty tensors of types not read
		if ti.Size == 0 && ti.Err == nil && (!ti.Type.Known() || ti.why != "") {
			h.Tensors[i].Err = unreadable(ti, 0, "", h.Alignment)
		}
	}
	return nil
}

// unreadable is the error of a tensor whose layout its type does not give, extent bytes up to
// the tensor called next ("": the end of the file).
func unreadable(ti TensorInfo, extent int64, next string, align int64) error {
	upTo := "to the end of the file"
	if next != "" {
		upTo = fmt.Sprintf("up to tensor %q", next)
	}
	t := ti.Type
	if !t.Known() {
		what := fmt.Sprintf("ggml type %d, which ggml does not have (its types end at %d: a newer ggml's, or a fork's?)", uint32(t), uint32(LastType))
		if t.Removed() {
			what = fmt.Sprintf("ggml type %d, %s, which ggml has removed (convert the model again with a current llama.cpp)", uint32(t), removedTypes[t])
		}
		return errs.Errorf(ErrType, "ggufx: tensor %q is of %s: %d elements in %d bytes (%s), which File.Blocks shares", ti.Name, what, ti.Len(), extent, upTo)
	}
	spans := fmt.Sprintf("%d bytes for %d elements", extent, ti.Len())
	if bs, bb, ok := guessLayout(ti, extent, align); ok {
		spans = fmt.Sprintf("%d-byte blocks of %d (%s)", bb, bs, spans)
	}
	return errs.Errorf(ErrType, "ggufx: tensor %q: type %d is %d elements in %d bytes in ggml, and %s; this file's tensor spans %s, %s: a fork's %s?",
		ti.Name, uint32(t), t.BlockSize(), t.BlockBytes(), ti.why, spans, upTo, t)
}

// guessLayout finds the one block layout that fills extent bytes with ti's elements (less
// padding under align), as a fork's quantized types are made: a float16 scale, then a whole
// number of bits for each element, in blocks of 32, 64, 128 or 256 elements that divide a row.
func guessLayout(ti TensorInfo, extent, align int64) (bs, bb int64, ok bool) {
	row, n := int64(1), ti.Len()
	if len(ti.Dims) > 0 {
		row = ti.Dims[0]
	}
	found := 0
	for _, s := range []int64{32, 64, 128, 256} {
		if row%s != 0 || n < s { // n < s: no whole block (an empty tensor)
			continue
		}
		// block bytes b with blocks*b in (extent-align, extent], b = 2 + k*s/8 (k > 0)
		blocks, m := n/s, s/8
		hi := extent / blocks
		lo := int64(3)
		if extent >= align {
			lo = max(lo, (extent-align)/blocks+1)
		}
		if lo > hi {
			continue
		}
		count := (hi-2)/m - (lo-3)/m
		if s == int64(ti.Type.BlockSize()) && b0(ti.Type) >= lo && b0(ti.Type) <= hi && (b0(ti.Type)-2)%m == 0 {
			count-- // ggml's own layout, which does not fit
		}
		if count > 0 {
			bs, bb = s, 2+(hi-2)/m*m
			if bb == b0(ti.Type) && s == int64(ti.Type.BlockSize()) {
				bb -= m
			}
			found += int(count)
		}
	}
	return bs, bb, found == 1
}

// b0 is the bytes of one block of t in ggml.
func b0(t Type) int64 { return int64(t.BlockBytes()) }
