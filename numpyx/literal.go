package numpyx

import (
	"fmt"
	"math"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// The header dict is parsed by a small recursive-descent parser of the Python literal subset
// NumPy headers use: dicts, tuples, lists, strings without escapes, integers, True, False and
// None. Nothing is evaluated, nesting and the number of values are bounded, and tuples longer
// than core.MaxNdim are refused as they are read.

type kind int

const (
	kDict kind = iota
	kTuple
	kList
	kStr
	kInt
	kBool
	kNone
)

func (k kind) String() string {
	return [...]string{"dict", "tuple", "list", "string", "int", "bool", "None"}[k]
}

type literal struct {
	kind  kind
	s     string
	i     int64
	b     bool
	keys  []literal // dict keys
	items []literal // dict values, tuple and list items
}

// maxDepth bounds nesting, so that a header of brackets cannot exhaust the stack.
const maxDepth = 8

// maxItems bounds the items of one list or dict.
const maxItems = 4 * core.MaxNdim

// maxNodes bounds the values of a whole header. A real header has a dict of three keys and a
// shape of at most core.MaxNdim integers; the bound keeps what a hostile header of nested lists
// makes the parser allocate to a few hundred kilobytes, whatever the header's length.
const maxNodes = 1024

type parser struct {
	s     []byte
	i     int
	nodes int // values parsed so far
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) errorf(format string, args ...any) error {
	return errs.Errorf(ErrHeader, "numpyx: %s at byte %d of the header", fmt.Sprintf(format, args...), p.i)
}

// peek returns the next byte after spaces, or 0 at the end.
func (p *parser) peek() byte {
	p.space()
	if p.i >= len(p.s) {
		return 0
	}
	return p.s[p.i]
}

func (p *parser) value(depth int) (literal, error) {
	if depth > maxDepth {
		return literal{}, p.errorf("nested deeper than %d", maxDepth)
	}
	if p.nodes++; p.nodes > maxNodes {
		return literal{}, p.errorf("more than %d values", maxNodes)
	}
	switch c := p.peek(); {
	case c == 0:
		return literal{}, p.errorf("unexpected end of header")
	case c == '{':
		return p.dict(depth)
	case c == '(':
		return p.tuple(depth)
	case c == '[':
		p.i++
		items, _, err := p.items(depth, ']', maxItems)
		return literal{kind: kList, items: items}, err
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		return p.int()
	case c >= 'A' && c <= 'Z':
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= 'A' && p.s[p.i] <= 'Z') {
			p.i++
		}
		switch w := string(p.s[start:p.i]); w {
		case "True", "False":
			return literal{kind: kBool, b: w == "True"}, nil
		case "None":
			return literal{kind: kNone}, nil
		default:
			p.i = start
			return literal{}, p.errorf("unknown name %q", clip([]byte(w)))
		}
	default:
		return literal{}, p.errorf("unexpected %q", clip(p.s[p.i:]))
	}
}

func (p *parser) dict(depth int) (literal, error) {
	p.i++ // '{'
	d := literal{kind: kDict}
	for {
		if p.peek() == '}' {
			p.i++
			return d, nil
		}
		if len(d.keys) == maxItems {
			return d, p.errorf("more than %d dict entries", maxItems)
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return d, err
		}
		if p.peek() != ':' {
			return d, p.errorf("expected ':' after a dict key")
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return d, err
		}
		d.keys, d.items = append(d.keys, k), append(d.items, v)
		switch p.peek() {
		case ',':
			p.i++
		case '}':
		default:
			return d, p.errorf("expected ',' or '}' in a dict")
		}
	}
}

// items reads comma-separated values up to the closing byte, which it consumes, and reports
// whether a comma followed the last item.
func (p *parser) items(depth int, end byte, limit int) ([]literal, bool, error) {
	var out []literal
	comma := false
	for {
		if p.peek() == end {
			p.i++
			return out, comma, nil
		}
		if len(out) == limit {
			return out, false, p.errorf("more than %d items", limit)
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return out, false, err
		}
		out = append(out, v)
		comma = false
		switch p.peek() {
		case ',':
			p.i++
			comma = true
		case end:
		default:
			return out, false, p.errorf("expected ',' or %q", end)
		}
	}
}

func (p *parser) tuple(depth int) (literal, error) {
	p.i++ // '('
	items, comma, err := p.items(depth, ')', core.MaxNdim)
	if err != nil {
		if len(items) == core.MaxNdim {
			return literal{}, errs.Errorf(ErrHeader, "numpyx: shape has more than %d dimensions", core.MaxNdim)
		}
		return literal{}, err
	}
	if len(items) == 1 && !comma { // (x) is x in Python, not a tuple
		return items[0], nil
	}
	return literal{kind: kTuple, items: items}, nil
}

func (p *parser) str() (literal, error) {
	q := p.s[p.i]
	p.i++
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case q:
			s := string(p.s[start:p.i])
			p.i++
			return literal{kind: kStr, s: s}, nil
		case '\\':
			return literal{}, p.errorf("escape sequences are not supported in header strings")
		case '\n', '\r':
			return literal{}, p.errorf("newline in a string")
		}
		p.i++
	}
	return literal{}, p.errorf("unterminated string")
}

func (p *parser) int() (literal, error) {
	neg := false
	if c := p.s[p.i]; c == '-' || c == '+' {
		neg = c == '-'
		p.i++
		p.space()
	}
	start := p.i
	var v uint64
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		if v > (math.MaxInt64-9)/10 {
			return literal{}, p.errorf("integer too large")
		}
		v = v*10 + uint64(p.s[p.i]-'0')
		p.i++
	}
	switch {
	case p.i == start:
		return literal{}, p.errorf("expected digits")
	case p.i-start > 1 && p.s[start] == '0':
		return literal{}, p.errorf("integer with a leading zero")
	}
	if p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') { // Python 2 long
		p.i++
	}
	i := int64(v)
	if neg {
		i = -i
	}
	return literal{kind: kInt, i: i}, nil
}
