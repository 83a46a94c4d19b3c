package safetensorsx

// This file keeps the header parser as it was before the fast one (issue 16), unchanged but
// for its names, as a reference: FuzzParseHeaderSame checks that both accept the same headers
// with the same results and refuse the same ones with the same sentinel.

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

func refParseHeader(b []byte) (*Header, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: the header is not valid UTF-8", ErrHeader)
	}
	p := refParser{b: b}
	h := &Header{Tensors: []TensorInfo{}, index: map[string]int{}}
	sawMeta := false
	err := p.object(func(key string) error {
		if key == metadataKey {
			if sawMeta {
				return p.errf("key %q twice", key)
			}
			sawMeta = true
			return p.metadata(h)
		}
		if _, dup := h.index[key]; dup {
			return p.errf("tensor %q twice", key)
		}
		ti, err := p.tensorInfo(key)
		if err != nil {
			return err
		}
		h.index[key] = len(h.Tensors)
		h.Tensors = append(h.Tensors, ti)
		return nil
	})
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

// refParser reads the JSON of a header: b is valid UTF-8, i the next byte.
type refParser struct {
	b     []byte
	i     int
	depth int
}

func (p *refParser) errf(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrHeader, p.i, fmt.Sprintf(format, args...))
}

func (p *refParser) ws() {
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
func (p *refParser) peek() byte {
	p.ws()
	if p.i == len(p.b) {
		return 0
	}
	return p.b[p.i]
}

func (p *refParser) expect(c byte) error {
	if got := p.peek(); got != c {
		if got == 0 {
			return p.errf("want %q, the header ends", c)
		}
		return p.errf("want %q, found %q", c, got)
	}
	p.i++
	return nil
}

// object reads an object, calling member for each key with p at its value (which member must
// consume).
func (p *refParser) object(member func(key string) error) error {
	if p.peek() != '{' {
		return p.errf("want a JSON object, found %s", p.what())
	}
	p.depth++
	if p.depth > maxDepth {
		return p.errf("values nested more than %d deep", maxDepth)
	}
	p.i++
	if p.peek() == '}' {
		p.i++
		p.depth--
		return nil
	}
	for {
		if p.peek() != '"' {
			return p.errf("want a key string, found %s", p.what())
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return nil
		default:
			return p.errf("want ',' or '}' in an object, found %s", p.what())
		}
	}
}

// array reads an array, calling elem with p at each element.
func (p *refParser) array(elem func() error) error {
	if p.peek() != '[' {
		return p.errf("want a JSON array, found %s", p.what())
	}
	p.depth++
	if p.depth > maxDepth {
		return p.errf("values nested more than %d deep", maxDepth)
	}
	p.i++
	if p.peek() == ']' {
		p.i++
		p.depth--
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return nil
		default:
			return p.errf("want ',' or ']' in an array, found %s", p.what())
		}
	}
}

// what names the next token for an error message.
func (p *refParser) what() string {
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
func (p *refParser) str() (string, error) {
	p.i++ // the quote
	start := p.i
	// fast path: no escapes
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	out := append([]byte{}, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", p.errf("control character %#x in a string", c)
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
				return "", err
			}
			if utf16.IsSurrogate(r) {
				// a high surrogate must pair with a low one; lone surrogates are not text
				if r >= 0xdc00 || p.i+2 > len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return "", p.errf("lone surrogate \\u%04x in a string", r)
				}
				p.i += 2
				r2, err := p.hex4()
				if err != nil {
					return "", err
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", p.errf("bad surrogate pair in a string")
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", p.errf("bad escape \\%c in a string", e)
		}
	}
	return "", p.errf("unterminated string")
}

func (p *refParser) hex4() (rune, error) {
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

// uint reads a JSON number that must be a non-negative integer no larger than MaxInt64; name
// and field say where, for error messages.
func (p *refParser) uint(name, field string) (int64, error) {
	c := p.peek()
	if c < '0' || c > '9' {
		return 0, p.errf("tensor %q: %s: want a non-negative integer, found %s", name, field, p.what())
	}
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	digits := p.b[start:p.i]
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, p.errf("tensor %q: %s: want an integer, found a fraction or exponent", name, field)
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, p.errf("tensor %q: %s: number with a leading zero", name, field)
	}
	v, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return 0, p.errf("tensor %q: %s: %s is out of range", name, field, trim(digits))
	}
	return v, nil
}

// skip reads any JSON value and drops it.
func (p *refParser) skip() error {
	switch c := p.peek(); {
	case c == '{':
		return p.object(func(string) error { return p.skip() })
	case c == '[':
		return p.array(p.skip)
	case c == '"':
		_, err := p.str()
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

func (p *refParser) literal(s string) error {
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return p.errf("bad literal %q", trim(p.b[p.i:]))
	}
	p.i += len(s)
	return nil
}

// number reads any JSON number.
func (p *refParser) number() error {
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
func (p *refParser) metadata(h *Header) error {
	if p.peek() == 'n' {
		return p.literal("null")
	}
	m := map[string]string{}
	err := p.object(func(key string) error {
		if _, dup := m[key]; dup {
			return p.errf("__metadata__ key %q twice", key)
		}
		if p.peek() != '"' {
			return p.errf("__metadata__ %q: want a string, found %s", key, p.what())
		}
		v, err := p.str()
		m[key] = v
		return err
	})
	h.Metadata = m
	return err
}

// tensorInfo reads one tensor entry.
func (p *refParser) tensorInfo(name string) (TensorInfo, error) {
	ti := TensorInfo{Name: name}
	var seen [3]bool
	err := p.object(func(key string) error {
		field := slices.Index([]string{"dtype", "shape", "data_offsets"}, key)
		if field < 0 {
			return p.skip()
		}
		if seen[field] {
			return p.errf("tensor %q: %q twice", name, key)
		}
		seen[field] = true
		switch field {
		case 0:
			if p.peek() != '"' {
				return p.errf("tensor %q: dtype: want a string, found %s", name, p.what())
			}
			s, err := p.str()
			if err != nil {
				return err
			}
			e, ok := entryOfName(s)
			if !ok {
				return fmt.Errorf("%w: tensor %q has dtype %q (the format names %v)", ErrUnsupportedDType, name, s, DTypes())
			}
			ti.Format, ti.DType = e.name, e.dt
		case 1:
			ti.Shape = make([]int64, 0, 4)
			return p.array(func() error {
				if len(ti.Shape) == core.MaxNdim {
					return p.errf("tensor %q: more than %d dimensions", name, core.MaxNdim)
				}
				d, err := p.uint(name, "shape")
				ti.Shape = append(ti.Shape, d)
				return err
			})
		case 2:
			var offs [2]int64
			n := 0
			err := p.array(func() error {
				if n == 2 {
					return p.errf("tensor %q: data_offsets: more than 2 numbers", name)
				}
				v, err := p.uint(name, "data_offsets")
				offs[n] = v
				n++
				return err
			})
			if err != nil {
				return err
			}
			if n != 2 {
				return p.errf("tensor %q: data_offsets: want [begin, end], found %d numbers", name, n)
			}
			ti.Begin, ti.End = offs[0], offs[1]
		}
		return nil
	})
	if err != nil {
		return ti, err
	}
	for i, f := range []string{"dtype", "shape", "data_offsets"} {
		if !seen[i] {
			return ti, p.errf("tensor %q has no %q", name, f)
		}
	}
	return ti, nil
}

// appendString appends s as a JSON string the way serde_json (the reference writer) writes
// it: '"' and '\\' escaped, \b \f \n \r \t as such, other control characters as \u00xx, and

// FuzzParseHeaderSame: the fast header parser accepts exactly the headers the reference parser
// above accepts, with the same tensors, index and metadata, and refuses the others with the
// same sentinel.
func FuzzParseHeaderSame(f *testing.F) {
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{}}`))
	f.Add([]byte(`{"__metadata__":{"k":"\ud83d\ude00"},"x":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}`))
	f.Add([]byte(`{"b":{"data_offsets":[8,12],"shape":[],"dtype":"F32","x":[{}]},"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"__metadata__":null}`))
	f.Add([]byte(`{"\u0061\n":{"dtype":"U8","shape":[2, 3 ],"data_offsets":[0,6], "y":-1.5e3}, "__metadata__":{"a":"b"}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,5]}}`))
	// the edges of the fast path for compact entries
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1,],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]} ,"b": {"dtype":"U8","shape":[0],"data_offsets":[4,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F3","shape":[1],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32\u0020","shape":[1],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[00,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[` + strings.Repeat("1,", 64) + `1],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,99999999999999999999]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := refParseHeader(b)
		got, err := ParseHeader(b)
		if wantErr != nil {
			require.Error(t, err, "the reference refuses it: %v", wantErr)
			for _, s := range []error{ErrHeader, ErrLayout, ErrUnsupportedDType} {
				require.Equal(t, errors.Is(wantErr, s), errors.Is(err, s), "reference: %v\nfast: %v", wantErr, err)
			}
			return
		}
		require.NoError(t, err)
		require.Equal(t, want.Tensors, got.Tensors)
		require.Equal(t, want.index, got.index)
		require.Equal(t, want.Metadata, got.Metadata)
		require.Equal(t, want.DataLen, got.DataLen)
	})
}
