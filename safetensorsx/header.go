package safetensorsx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
)

// MaxHeaderLen bounds the header length field, as the reference implementation does
// (100,000,000 bytes): a longer header is refused before anything is read.
const MaxHeaderLen = 100_000_000

// Alignment is the byte boundary the data section starts on in files this package writes: the
// header is padded with spaces to a multiple of 8 bytes, as the reference writer pads it. With
// tensors ordered by decreasing element size (see Write), every tensor then starts at a
// multiple of its element size in the file, so a page-aligned mapping serves it as it lies.
const Alignment = 8

// metadataKey is the header key that holds the free-form string map.
const metadataKey = "__metadata__"

// maxDepth bounds the nesting of JSON values the header parser follows (values under keys it
// does not know, which it skips). The format itself nests three deep.
const maxDepth = 64

// TensorInfo describes one tensor of a file, as its header entry says.
type TensorInfo struct {
	// Name is the tensor's key in the header.
	Name string
	// Format is the dtype string of the file ("F32", "BF16", ...).
	Format string
	// DType is the core dtype of Format.
	DType core.DLDataType
	// Shape is the C-order shape; an empty shape is a scalar.
	Shape []int64
	// Begin and End are the tensor's byte range in the data section (data_offsets).
	Begin, End int64
}

// Len is the number of bytes of the tensor's data.
func (ti TensorInfo) Len() int64 { return ti.End - ti.Begin }

// Header is a parsed safetensors header: its tensors in file order (by byte offset), its
// metadata and where its data starts. Its tensors' ranges tile the data section exactly.
type Header struct {
	// Tensors lists the tensors in the order of their data in the file.
	Tensors []TensorInfo
	// Metadata is the "__metadata__" map, or nil when the header has none.
	Metadata map[string]string
	// DataOffset is where the data section starts in the file: 8 + the header length. Set by
	// ReadHeader; ParseHeader, which sees the JSON alone, leaves it 0.
	DataOffset int64
	// DataLen is the length of the data section: the end of the last tensor.
	DataLen int64

	index map[string]int
}

// Lookup returns the tensor called name.
func (h *Header) Lookup(name string) (TensorInfo, bool) {
	i, ok := h.index[name]
	if !ok {
		return TensorInfo{}, false
	}
	return h.Tensors[i], true
}

// Names returns the tensors' names in file order.
func (h *Header) Names() []string {
	out := make([]string, len(h.Tensors))
	for i, ti := range h.Tensors {
		out[i] = ti.Name
	}
	return out
}

func (h *Header) info(name string) (TensorInfo, error) {
	ti, ok := h.Lookup(name)
	if !ok {
		return TensorInfo{}, errs.Errorf(ErrNotFound, "safetensorsx: no tensor %q in the file", name)
	}
	return ti, nil
}

// ReadHeader reads the 8-byte little-endian header length and the JSON header from r and
// leaves r at the first data byte. A length over MaxHeaderLen is refused before anything more
// is read (ErrHeader); the header is read as it arrives, so a length that lies costs no more
// memory than the bytes present (ErrTruncated). See ParseHeader for what the JSON must be.
func ReadHeader(r io.Reader) (*Header, error) { return readHeader(r, true) }

// readHeader is ReadHeader, with the index by name or without (see parseHeader).
func readHeader(r io.Reader, index bool) (*Header, error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, eofErr(err, "the header length needs 8 bytes, only %d present", n)
	}
	hlen := binary.LittleEndian.Uint64(pre[:])
	if hlen > MaxHeaderLen {
		return nil, errs.Errorf(ErrHeader, "safetensorsx: header length %d exceeds %d", hlen, MaxHeaderLen)
	}
	var hb []byte
	if avail := tensorio.Remaining(r); avail >= 0 && int64(hlen) <= avail {
		// the bytes are there: read them in one piece, into a buffer reused from header to
		// header (parseHeader keeps nothing of it)
		buf := headerBuf(int(hlen))
		defer putHeaderBuf(buf)
		hb = (*buf)[:hlen]
		if n, err := io.ReadFull(r, hb); err != nil {
			return nil, eofErr(err, "the header promises %d bytes, only %d present", hlen, n)
		}
	} else {
		var buf bytes.Buffer
		if n, err := io.CopyN(&buf, r, int64(hlen)); err != nil {
			return nil, eofErr(err, "the header promises %d bytes, only %d present", hlen, n)
		}
		hb = buf.Bytes()
	}
	h, err := parseHeader(hb, index)
	if err != nil {
		return nil, err
	}
	h.DataOffset = 8 + int64(hlen)
	return h, nil
}

// headerBufs holds buffers for headers (of at most maxPooledHeader bytes) between reads: a
// header of many tensors is megabytes that would otherwise be allocated and zeroed each time.
var headerBufs sync.Pool

// maxPooledHeader bounds the headers whose buffers are kept for reuse.
const maxPooledHeader = 16 << 20

// headerBuf returns a buffer of at least n bytes, from headerBufs when one there is large
// enough.
func headerBuf(n int) *[]byte {
	if n <= maxPooledHeader {
		return fromPool[byte](&headerBufs, n)
	}
	b := make([]byte, n)
	return &b
}

// putHeaderBuf gives a buffer from headerBuf back.
func putHeaderBuf(b *[]byte) {
	if cap(*b) <= maxPooledHeader {
		headerBufs.Put(b)
	}
}

// tableBufs holds tables of tensors (Header.Tensors) between the reads of parseHeader without
// index, whose headers never leave the reader: a table is every entry's description, megabytes
// for a header of many tensors. Every entry in use is written whole before it is read.
var tableBufs sync.Pool

// tableBuf returns an empty table with room for n entries, from tableBufs when one there is
// large enough.
func tableBuf(n int) []TensorInfo {
	return (*fromPool[TensorInfo](&tableBufs, n))[:0]
}

// fromPool returns a buffer from pool with room for n elements (its length is the caller's to
// set), or a new one of n elements when the one there is too small (which goes back).
func fromPool[T any](pool *sync.Pool, n int) *[]T {
	if b, ok := pool.Get().(*[]T); ok {
		if cap(*b) >= n {
			return b
		}
		pool.Put(b)
	}
	b := make([]T, n)
	return &b
}

// putTable gives the table of a header from parseHeader without index back to tableBufs; h is
// not used again.
func putTable(h *Header) {
	t := h.Tensors
	h.Tensors = nil
	tableBufs.Put(&t)
}

// inTensor adds the name of the tensor to err, which a read or a map of it returned: after the
// cause when err is this package's (its message leads with "safetensorsx: "), before it otherwise.
func inTensor(name string, err error) error {
	if strings.HasPrefix(err.Error(), "safetensorsx: ") {
		return fmt.Errorf("%w (tensor %q)", err, name)
	}
	return fmt.Errorf("safetensorsx: tensor %q: %w", name, err)
}

// eofErr turns a short read into ErrTruncated (with the message) and any other read error
// into a wrapped one.
func eofErr(err error, format string, args ...any) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errs.Errorf(ErrTruncated, "safetensorsx: "+format, args...)
	}
	return fmt.Errorf("safetensorsx: reading: %w", err)
}

// ParseHeader parses the JSON header of a safetensors file (the bytes after the length field,
// padding included) and checks it as untrusted input. It must be UTF-8 JSON: one object whose
// keys are tensor names, each mapping to {"dtype": string, "shape": [uint, ...],
// "data_offsets": [begin, end]}, plus optionally "__metadata__": {string: string} or null,
// followed by nothing but whitespace. Keys may appear once; members a tensor entry has beyond
// the three are ignored (as the reference reader ignores them), values nested more than 64
// deep are refused. Dtypes must be ones the format names (ErrUnsupportedDType), shapes at
// most core.MaxNdim long. The byte ranges, in whatever order the header lists them, must tile
// [0, DataLen) without gap or overlap, each as long as its shape and dtype need (ErrLayout).
// Everything else wraps ErrHeader.
//
// b is not kept: the names and shapes of the result are copies (carved out of a few shared
// blocks rather than allocated one by one, so that a header of many tensors parses fast).
func ParseHeader(b []byte) (*Header, error) { return parseHeader(b, true) }

// parseHeader is ParseHeader; without index it neither builds the index by name nor looks for
// tensor names given twice: for readers that put every tensor in a map of their own and check
// there (see readTensors), at the cost of one map instead of two. Such a Header must not be
// handed out.
func parseHeader(b []byte, index bool) (*Header, error) {
	if !utf8.Valid(b) {
		return nil, errs.Errorf(ErrHeader, "safetensorsx: the header is not valid UTF-8")
	}
	p := parser{b: b}
	// every tensor entry ends with a '}': a bound on their number, itself bounded by b's length
	n := min(bytes.Count(b, []byte{'}'}), len(b)/minEntry)
	h := &Header{}
	if index {
		h.Tensors, h.index = make([]TensorInfo, 0, n), make(map[string]int, n)
	} else {
		h.Tensors = tableBuf(n) // the reader gives it back (putTable) when done with h
	}
	sawMeta := false
	empty, err := p.open('{')
	for more := !empty; err == nil && more; {
		var key []byte
		if key, err = p.key(); err != nil {
			break
		}
		if string(key) == metadataKey {
			if sawMeta {
				return nil, p.errf("key %q twice", key)
			}
			sawMeta = true
			err = p.metadata(h)
		} else {
			name, i := p.name(key), len(h.Tensors)
			if index {
				if h.index[name] = i; len(h.index) == i { // the name was there already
					return nil, p.errf("tensor %q twice", name)
				}
			}
			// filled in place: a TensorInfo is large, and the table has room for every entry
			if i < cap(h.Tensors) {
				h.Tensors = h.Tensors[:i+1]
			} else {
				h.Tensors = append(h.Tensors, TensorInfo{})
			}
			err = p.tensorInfo(&h.Tensors[i], name)
		}
		if err == nil {
			more, err = p.next('}')
		}
	}
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, p.errf("%q after the header object", trim(p.b[p.i:]))
	}
	if err := h.layout(); err != nil {
		return nil, err
	}
	return h, nil
}

// minEntry is the length of the shortest tensor entry a header can hold,
// `"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`, rounded down: no header of n bytes
// holds more than n/minEntry tensors.
const minEntry = 48

// layout puts the tensors in file order and checks that their ranges tile the data section.
func (h *Header) layout() error {
	for i := range h.Tensors {
		if err := h.Tensors[i].checkLen(); err != nil {
			return err
		}
	}
	byOffset := func(a, b TensorInfo) int {
		if c := cmpInt(a.Begin, b.Begin); c != 0 {
			return c
		}
		return cmpInt(a.End, b.End)
	}
	reindex := !slices.IsSortedFunc(h.Tensors, byOffset) // writers list them in file order
	if reindex {
		slices.SortStableFunc(h.Tensors, byOffset)
	}
	at := int64(0)
	for i, ti := range h.Tensors {
		if ti.Begin != at {
			what := "overlaps the one before it"
			if ti.Begin > at {
				what = "leaves a gap after the one before it"
			}
			return errs.Errorf(ErrLayout, "safetensorsx: tensor %q at data_offsets [%d, %d] %s (which ends at %d)", ti.Name, ti.Begin, ti.End, what, at)
		}
		at = ti.End
		if reindex && h.index != nil {
			h.index[ti.Name] = i
		}
	}
	h.DataLen = at
	return nil
}

// checkLen checks that ti's range holds exactly the bytes its shape and dtype need.
func (ti *TensorInfo) checkLen() error {
	n := int64(1)
	for _, d := range ti.Shape {
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return errs.Errorf(ErrLayout, "safetensorsx: tensor %q: shape %v overflows", ti.Name, ti.Shape)
		}
		n = int64(lo)
	}
	// lanes as well as bits: a Header made by hand may carry any dtype (the parser's have 1 lane)
	hi, nbits := bits.Mul64(uint64(n), uint64(ti.DType.Bits)*uint64(ti.DType.Lanes))
	if hi != 0 || nbits > math.MaxInt64 {
		return errs.Errorf(ErrLayout, "safetensorsx: tensor %q: shape %v of %s overflows", ti.Name, ti.Shape, ti.Format)
	}
	if nbits%8 != 0 {
		return errs.Errorf(ErrLayout, "safetensorsx: tensor %q: %d elements of %s do not fill whole bytes", ti.Name, n, ti.Format)
	}
	if ti.End < ti.Begin {
		return errs.Errorf(ErrLayout, "safetensorsx: tensor %q: data_offsets [%d, %d] end before they begin", ti.Name, ti.Begin, ti.End)
	}
	if want := int64(nbits / 8); ti.End-ti.Begin != want {
		return errs.Errorf(ErrLayout, "safetensorsx: tensor %q: data_offsets [%d, %d] hold %d bytes, shape %v of %s needs %d", ti.Name, ti.Begin, ti.End, ti.End-ti.Begin, ti.Shape, ti.Format, want)
	}
	return nil
}

// checkTiles checks, without changing h, what layout makes true of a parsed header: every
// range as long as its tensor needs, in file order, tiling [0, DataLen). ReadTensors runs it on
// the Header its caller passes, whose exported fields may have been changed since parsing: a
// reader that trusted them would slice past a slab or hand out bytes no read supplied.
func (h *Header) checkTiles() error {
	at := int64(0)
	for i := range h.Tensors {
		ti := &h.Tensors[i]
		if err := ti.checkLen(); err != nil {
			return err
		}
		if ti.Begin != at {
			return errs.Errorf(ErrLayout, "safetensorsx: tensor %q at data_offsets [%d, %d] does not start where the one before it ends (%d)", ti.Name, ti.Begin, ti.End, at)
		}
		at = ti.End
	}
	if at != h.DataLen {
		return errs.Errorf(ErrLayout, "safetensorsx: the tensors end at %d, DataLen is %d", at, h.DataLen)
	}
	return nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// trim shortens bytes for an error message.
func trim(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "..."
	}
	return string(b)
}

// parser reads the JSON of a header: b is valid UTF-8, i the next byte. Tensor names and shapes
// are copied into shared blocks (names, shapes), handed out in pieces that are never written
// again, instead of one allocation each.
type parser struct {
	b      []byte
	i      int
	depth  int
	names  []byte
	shapes []int64
	last   int                 // the index in dtypes of the dtype the fast path read last
	dims   [core.MaxNdim]int64 // the fast path's scratch for a shape
}

// Block sizes for names and shapes: a name or shape keeps at most its block alive.
const (
	nameBlock  = 16 << 10
	shapeBlock = 4096
)

func (p *parser) errf(format string, args ...any) error {
	return errs.Errorf(ErrHeader, "safetensorsx: %s at byte %d of the header", fmt.Sprintf(format, args...), p.i)
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (p *parser) peek() byte {
	p.ws()
	if p.i == len(p.b) {
		return 0
	}
	return p.b[p.i]
}

func (p *parser) expect(c byte) error {
	if got := p.peek(); got != c {
		if got == 0 {
			return p.errf("want %q, the header ends", c)
		}
		return p.errf("want %q, found %q", c, got)
	}
	p.i++
	return nil
}

// open reads the '{' or '[' (c) that starts an object or an array, and its closing bracket
// too when it is empty (then empty is true).
func (p *parser) open(c byte) (empty bool, err error) {
	if p.peek() != c {
		if c == '{' {
			return false, p.errf("want a JSON object, found %s", p.what())
		}
		return false, p.errf("want a JSON array, found %s", p.what())
	}
	p.depth++
	if p.depth > maxDepth {
		return false, p.errf("values nested more than %d deep", maxDepth)
	}
	p.i++
	end := byte('}')
	if c == '[' {
		end = ']'
	}
	if p.peek() == end {
		p.i++
		p.depth--
		return true, nil
	}
	return false, nil
}

// next reads what follows a member of an object or an element of an array: a ',' (then more
// is true) or the closing bracket, end.
func (p *parser) next(end byte) (more bool, err error) {
	switch p.peek() {
	case ',':
		p.i++
		return true, nil
	case end:
		p.i++
		p.depth--
		return false, nil
	}
	if end == '}' {
		return false, p.errf("want ',' or '}' in an object, found %s", p.what())
	}
	return false, p.errf("want ',' or ']' in an array, found %s", p.what())
}

// key reads a key of an object and the ':' after it.
func (p *parser) key() ([]byte, error) {
	if p.peek() != '"' {
		return nil, p.errf("want a key string, found %s", p.what())
	}
	k, err := p.raw()
	if err != nil {
		return nil, err
	}
	return k, p.expect(':')
}

// object reads an object, calling member for each key with p at its value (which member must
// consume).
func (p *parser) object(member func(key []byte) error) error {
	empty, err := p.open('{')
	if err != nil || empty {
		return err
	}
	for {
		k, err := p.key()
		if err != nil {
			return err
		}
		if err := member(k); err != nil {
			return err
		}
		if more, err := p.next('}'); err != nil || !more {
			return err
		}
	}
}

// array reads an array, calling elem with p at each element.
func (p *parser) array(elem func() error) error {
	empty, err := p.open('[')
	if err != nil || empty {
		return err
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if more, err := p.next(']'); err != nil || !more {
			return err
		}
	}
}

// what names the next token for an error message.
func (p *parser) what() string {
	c := p.peek()
	switch {
	case c == 0:
		return "the end of the header"
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return strconv.QuoteRune(rune(c))
}

// str reads a string (p is at its opening quote) and returns its value.
func (p *parser) str() (string, error) {
	s, err := p.raw()
	return string(s), err
}

// raw reads a string (p is at its opening quote) and returns its value's bytes: a piece of b
// when the string has no escapes (do not modify it), new ones otherwise. Escapes only shrink
// what they stand for, so the value is never longer than b.
func (p *parser) raw() ([]byte, error) {
	p.i++ // the quote
	start := p.i
	// fast path: no escapes, up to the closing quote
	b, i := p.b, p.i
	for i < len(b) && !strStop[b[i]] {
		i++
	}
	p.i = i
	if i < len(b) && b[i] == '"' {
		p.i++
		return b[start:i:i], nil
	}
	out := append([]byte{}, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return out, nil
		case c < 0x20:
			return nil, p.errf("control character %#x in a string", c)
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		p.i++
		if p.i == len(p.b) {
			break
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				// a high surrogate must pair with a low one; lone surrogates are not text
				if r >= 0xdc00 || p.i+2 > len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return nil, p.errf("lone surrogate \\u%04x in a string", r)
				}
				p.i += 2
				r2, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return nil, p.errf("bad surrogate pair in a string")
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, p.errf("bad escape \\%c in a string", e)
		}
	}
	return nil, p.errf("unterminated string")
}

// strStop marks the bytes that end raw's fast path: the closing quote, a backslash and the
// control characters.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.b) {
		return 0, p.errf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 16)
	if err != nil {
		return 0, p.errf("bad \\u escape %q", p.b[p.i:p.i+4])
	}
	p.i += 4
	return rune(v), nil
}

// name returns a tensor name as a string: a copy of k in the current name block (a new block
// when it is full), or a string of its own when k is long.
func (p *parser) name(k []byte) string {
	if len(k) == 0 {
		return ""
	}
	if len(k) > nameBlock/16 {
		return string(k)
	}
	if cap(p.names)-len(p.names) < len(k) {
		p.names = make([]byte, 0, min(nameBlock, len(p.b))) // len(k) <= len(p.b): see raw
	}
	at := len(p.names)
	p.names = append(p.names, k...)
	return unsafe.String(&p.names[at], len(k))
}

// shape returns a copy of dims in the current shape block (a new block when it is full), its
// capacity its length, so that an append to it cannot reach another shape.
func (p *parser) shape(dims []int64) []int64 {
	if len(dims) == 0 {
		return []int64{}
	}
	if cap(p.shapes)-len(p.shapes) < len(dims) {
		// blocks start small and double up to shapeBlock, so that a small header costs little;
		// every dimension took at least two bytes of b ("1,"): blocks stay within what b holds
		p.shapes = make([]int64, 0, max(len(dims), min(shapeBlock, len(p.b)/2, max(16, 2*cap(p.shapes)))))
	}
	at := len(p.shapes)
	p.shapes = append(p.shapes, dims...)
	return p.shapes[at:len(p.shapes):len(p.shapes)]
}

// uint reads a JSON number that must be a non-negative integer no larger than MaxInt64; name
// and field say where, for error messages.
func (p *parser) uint(name, field string) (int64, error) {
	c := p.peek()
	if c < '0' || c > '9' {
		return 0, p.errf("tensor %q: %s: want a non-negative integer, found %s", name, field, p.what())
	}
	start := p.i
	v := uint64(0)
	for p.i < len(p.b) && p.b[p.i]-'0' < 10 {
		v = v*10 + uint64(p.b[p.i]-'0') // wraps past 19 digits, which are refused below
		p.i++
	}
	digits := p.b[start:p.i]
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, p.errf("tensor %q: %s: want an integer, found a fraction or exponent", name, field)
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, p.errf("tensor %q: %s: number with a leading zero", name, field)
	}
	if len(digits) > 19 || v > math.MaxInt64 {
		return 0, p.errf("tensor %q: %s: %s is out of range", name, field, trim(digits))
	}
	return int64(v), nil
}

// skip reads any JSON value and drops it.
func (p *parser) skip() error {
	switch c := p.peek(); {
	case c == '{':
		return p.object(func([]byte) error { return p.skip() })
	case c == '[':
		return p.array(p.skip)
	case c == '"':
		_, err := p.raw()
		return err
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return p.errf("want a JSON value, found %s", p.what())
}

func (p *parser) literal(s string) error {
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return p.errf("bad literal %q", trim(p.b[p.i:]))
	}
	p.i += len(s)
	return nil
}

// number reads any JSON number.
func (p *parser) number() error {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		s := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		return p.i - s
	}
	n := digits()
	if n == 0 || n > 1 && p.b[p.i-n] == '0' {
		return p.errf("bad number %q", trim(p.b[start:p.i]))
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return p.errf("bad number %q", trim(p.b[start:p.i]))
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return p.errf("bad number %q", trim(p.b[start:p.i]))
		}
	}
	return nil
}

// metadata reads the "__metadata__" value: null or an object of strings.
func (p *parser) metadata(h *Header) error {
	if p.peek() == 'n' {
		return p.literal("null")
	}
	m := map[string]string{}
	err := p.object(func(key []byte) error {
		if _, dup := m[string(key)]; dup {
			return p.errf("__metadata__ key %q twice", key)
		}
		if p.peek() != '"' {
			return p.errf("__metadata__ %q: want a string, found %s", key, p.what())
		}
		v, err := p.str()
		m[string(key)] = v
		return err
	})
	h.Metadata = m
	return err
}

// The members of a tensor entry.
const (
	fieldDType = iota
	fieldShape
	fieldOffsets
	nFields
)

var fieldNames = [nFields]string{"dtype", "shape", "data_offsets"}

// field returns which member of a tensor entry key names, or -1.
func field(key []byte) int {
	for i, f := range fieldNames {
		if string(key) == f {
			return i
		}
	}
	return -1
}

// tensorInfo reads one tensor entry into *dst (zero on entry).
func (p *parser) tensorInfo(dst *TensorInfo, name string) error {
	dst.Name = name
	if p.fastEntry(dst) {
		return nil
	}
	ti, err := p.slowEntry(name)
	*dst = ti
	return err
}

// slowEntry reads one tensor entry of any form.
func (p *parser) slowEntry(name string) (TensorInfo, error) {
	ti := TensorInfo{Name: name}
	var seen [nFields]bool
	empty, err := p.open('{')
	for more := !empty; err == nil && more; {
		var key []byte
		if key, err = p.key(); err != nil {
			break
		}
		switch f := field(key); {
		case f < 0:
			err = p.skip()
		case seen[f]:
			return ti, p.errf("tensor %q: %q twice", name, key)
		default:
			seen[f] = true
			err = p.member(&ti, f)
		}
		if err == nil {
			more, err = p.next('}')
		}
	}
	if err != nil {
		return ti, err
	}
	for f, ok := range seen {
		if !ok {
			return ti, p.errf("tensor %q has no %q", name, fieldNames[f])
		}
	}
	return ti, nil
}

// fastEntry reads a tensor entry written the way writers write them, compact and in the
// reference writer's member order, {"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}, and
// reports true; it accepts only what tensorInfo would accept with the same result. At the first
// byte that differs it leaves p as it found it and reports false, for tensorInfo to read the
// entry (and say what is wrong with it, if anything is).
func (p *parser) fastEntry(ti *TensorInfo) bool {
	start := p.i
	p.ws()
	if !p.skipPrefix(`{"dtype":"`) {
		p.i = start
		return false
	}
	end := bytes.IndexByte(p.b[p.i:], '"')
	if end < 0 {
		p.i = start
		return false
	}
	s := p.b[p.i : p.i+end]
	p.i += end + 1
	// a file's tensors mostly share a dtype: try the last one first
	found := string(s) == dtypes[p.last].name
	for k := 0; k < len(dtypes) && !found; k++ {
		if string(s) == dtypes[k].name {
			p.last, found = k, true
		}
	}
	if found {
		ti.Format, ti.DType = dtypes[p.last].name, dtypes[p.last].dt
	}
	var offs [2]int64
	n, ok := 0, found && p.skipPrefix(`,"shape":[`)
	if ok && !p.skipPrefix("]") {
		n, ok = p.fastUints(p.dims[:])
	}
	ok = ok && p.skipPrefix(`,"data_offsets":[`)
	if ok {
		var k int
		k, ok = p.fastUints(offs[:])
		ok = ok && k == 2 && p.skipPrefix("}")
	}
	if !ok {
		p.i = start
		return false
	}
	ti.Shape = p.shape(p.dims[:n])
	ti.Begin, ti.End = offs[0], offs[1]
	return true
}

// skipPrefix moves past s if b continues with it.
func (p *parser) skipPrefix(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// fastUints reads at most len(dst) compact integers (see uint), separated by ',' and ended by a
// ']', into dst and reports how many; false when it meets anything else.
func (p *parser) fastUints(dst []int64) (int, bool) {
	for n := 0; n < len(dst); {
		start := p.i
		v := uint64(0)
		for p.i < len(p.b) && p.b[p.i]-'0' < 10 {
			v = v*10 + uint64(p.b[p.i]-'0')
			p.i++
		}
		if k := p.i - start; k == 0 || k > 19 || k > 1 && p.b[start] == '0' || v > math.MaxInt64 || p.i == len(p.b) {
			return 0, false
		}
		dst[n] = int64(v)
		n++
		switch p.b[p.i] {
		case ']':
			p.i++
			return n, true
		case ',':
			p.i++
		default:
			return 0, false
		}
	}
	return 0, false
}

// member reads the value of member f of the entry of tensor ti.Name into ti.
func (p *parser) member(ti *TensorInfo, f int) error {
	name := ti.Name
	switch f {
	case fieldDType:
		if p.peek() != '"' {
			return p.errf("tensor %q: dtype: want a string, found %s", name, p.what())
		}
		s, err := p.raw()
		if err != nil {
			return err
		}
		for _, e := range dtypes {
			if string(s) == e.name {
				ti.Format, ti.DType = e.name, e.dt
				return nil
			}
		}
		return errs.Errorf(ErrUnsupportedDType, "safetensorsx: tensor %q has dtype %q, which the format does not name (it names %v)", name, s, DTypes())
	case fieldShape:
		var dims [core.MaxNdim]int64
		n, err := p.uints(name, "shape", dims[:])
		if err != nil {
			return err
		}
		ti.Shape = p.shape(dims[:n])
	case fieldOffsets:
		var offs [2]int64
		n, err := p.uints(name, "data_offsets", offs[:])
		if err != nil {
			return err
		}
		if n != 2 {
			return p.errf("tensor %q: data_offsets: want [begin, end], found %d numbers", name, n)
		}
		ti.Begin, ti.End = offs[0], offs[1]
	}
	return nil
}

// uints reads an array of at most len(dst) integers (see uint) into dst and returns how many
// it read.
func (p *parser) uints(name, field string, dst []int64) (int, error) {
	n := 0
	empty, err := p.open('[')
	for more := !empty; err == nil && more; {
		if n == len(dst) {
			if field == "shape" {
				return n, p.errf("tensor %q: more than %d dimensions", name, len(dst))
			}
			return n, p.errf("tensor %q: %s: more than %d numbers", name, field, len(dst))
		}
		if dst[n], err = p.uint(name, field); err == nil {
			n++
			more, err = p.next(']')
		}
	}
	return n, err
}

// appendString appends s as a JSON string the way serde_json (the reference writer) writes
// it: '"' and '\\' escaped, \b \f \n \r \t as such, other control characters as \u00xx, and
// everything else, non-ASCII included, as it is.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// encodeHeader returns the header block the reference writer writes for tensors (already in
// file order, with their offsets) and metadata (nil: no "__metadata__" key; its keys are
// written sorted, which the reference, iterating a hash map, leaves to chance): compact JSON,
// "__metadata__" first, then each tensor as {"dtype","shape","data_offsets"}, padded with
// spaces to a multiple of Alignment.
func encodeHeader(tensors []TensorInfo, metadata map[string]string) []byte {
	b := append(make([]byte, 8, 256), '{')
	if metadata != nil {
		b = appendString(b, metadataKey)
		b = append(b, ':', '{')
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, metadata[k])
		}
		b = append(b, '}')
		if len(tensors) > 0 {
			b = append(b, ',')
		}
	}
	for i, ti := range tensors {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, ti.Name)
		b = append(b, `:{"dtype":"`...)
		b = append(b, ti.Format...)
		b = append(b, `","shape":[`...)
		for j, d := range ti.Shape {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, d, 10)
		}
		b = append(b, `],"data_offsets":[`...)
		b = strconv.AppendInt(b, ti.Begin, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, ti.End, 10)
		b = append(b, "]}"...)
	}
	b = append(b, '}')
	for (len(b)-8)%Alignment != 0 {
		b = append(b, ' ')
	}
	binary.LittleEndian.PutUint64(b, uint64(len(b)-8))
	return b
}
