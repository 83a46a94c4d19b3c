package cdatax

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// cArray and cSchema are the C Data Interface's ArrowArray and ArrowSchema as Go reads them: the
// ABI fixes their fields, all 64 bits wide, in this order. cdatax reads every field it needs
// through them before any of it reaches arrow-go, whose importer trusts more than a foreign
// producer deserves (see checkForeign).
type cArray struct {
	length, nullCount, offset, nBuffers, nChildren int64
	buffers                                        *unsafe.Pointer
	children                                       **cArray
	dictionary, release, privateData               unsafe.Pointer
}

type cSchema struct {
	format, name, metadata           *byte
	flags, nChildren                 int64
	children                         **cSchema
	dictionary, release, privateData unsafe.Pointer
}

// the mirrors are the size of arrow-go's own declarations (a compile-time check both ways)
var (
	arrowArray  cdata.CArrowArray
	arrowSchema cdata.CArrowSchema
	_           [unsafe.Sizeof(arrowArray) - unsafe.Sizeof(cArray{})]byte
	_           [unsafe.Sizeof(cArray{}) - unsafe.Sizeof(arrowArray)]byte
	_           [unsafe.Sizeof(arrowSchema) - unsafe.Sizeof(cSchema{})]byte
	_           [unsafe.Sizeof(cSchema{}) - unsafe.Sizeof(arrowSchema)]byte
)

// maxFormat bounds how much of a format string is read: the longest that arrowx maps is
// "+w:2147483647", 13 bytes.
const maxFormat = 32

// primitives are the format strings of the leaf types arrowx maps (arrowx.FromDType).
var primitives = map[string]arrow.DataType{
	"b": arrow.FixedWidthTypes.Boolean,
	"c": arrow.PrimitiveTypes.Int8,
	"C": arrow.PrimitiveTypes.Uint8,
	"s": arrow.PrimitiveTypes.Int16,
	"S": arrow.PrimitiveTypes.Uint16,
	"i": arrow.PrimitiveTypes.Int32,
	"I": arrow.PrimitiveTypes.Uint32,
	"l": arrow.PrimitiveTypes.Int64,
	"L": arrow.PrimitiveTypes.Uint64,
	"e": arrow.FixedWidthTypes.Float16,
	"f": arrow.PrimitiveTypes.Float32,
	"g": arrow.PrimitiveTypes.Float64,
}

// where names the struct at a depth of the tree in an error.
func where(kind string, depth int) string {
	if depth == 0 {
		return kind
	}
	return fmt.Sprintf("%s (child at depth %d)", kind, depth)
}

// cString reads the NUL-terminated string at p, at most limit bytes of it; ok is false when it
// is longer.
func cString(p *byte, limit int) (s string, ok bool) {
	for n := 0; n < limit; n++ {
		if *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) == 0 {
			return string(unsafe.Slice(p, n)), true
		}
	}
	return string(unsafe.Slice(p, limit)), false
}

// listSize parses the size of a FixedSizeList format ("+w:N", N decimal digits only).
func listSize(format string, depth int) (int32, error) {
	digits := format[len("+w:"):]
	if digits == "" {
		return 0, fmt.Errorf("cdatax: %s format %q has no FixedSizeList size: %w", where("ArrowSchema", depth), format,
			arrowx.ErrMalformed)
	}
	var n int64
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("cdatax: %s format %q: FixedSizeList size %q is not a decimal number: %w",
				where("ArrowSchema", depth), format, digits, arrowx.ErrMalformed)
		}
		if n = n*10 + int64(c-'0'); n > math.MaxInt32 {
			return 0, fmt.Errorf("cdatax: %s format %q: FixedSizeList size %s is over %d: %w",
				where("ArrowSchema", depth), format, digits, math.MaxInt32, adapters.ErrUnsupported)
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("cdatax: %s format %q: FixedSizeList size 0 (arrow-go imports sizes 1 to %d): %w",
			where("ArrowSchema", depth), format, math.MaxInt32, adapters.ErrUnsupported)
	}
	return int32(n), nil
}

// checkSchema checks the schema at depth and returns its type: a primitive leaf, or the size of
// a FixedSizeList (leaf nil) and its child schema.
func checkSchema(s *cSchema, depth int) (leaf arrow.DataType, size int32, child *cSchema, err error) {
	at := where("ArrowSchema", depth)
	if s.release == nil {
		return nil, 0, nil, errs.Errorf(ErrReleased, "cdatax: %s has a NULL release callback (released already, or moved)", at)
	}
	if s.format == nil {
		return nil, 0, nil, fmt.Errorf("cdatax: %s format is NULL: %w", at, arrowx.ErrMalformed)
	}
	format, ok := cString(s.format, maxFormat)
	if !ok {
		return nil, 0, nil, fmt.Errorf("cdatax: %s format %q... is longer than any arrowx maps (%d bytes): %w",
			at, format, maxFormat, adapters.ErrUnsupported)
	}
	if s.dictionary != nil {
		return nil, 0, nil, fmt.Errorf("cdatax: %s (format %q) is dictionary-encoded: %w", at, format,
			adapters.ErrUnsupported)
	}
	var children int64
	if leaf = primitives[format]; leaf == nil {
		if len(format) < 3 || format[:3] != "+w:" {
			return nil, 0, nil, fmt.Errorf("cdatax: %s format %q is not one arrowx maps (a number, a boolean, "+
				"or a FixedSizeList \"+w:N\" of them): %w", at, format, adapters.ErrUnsupported)
		}
		if size, err = listSize(format, depth); err != nil {
			return nil, 0, nil, err
		}
		children = 1
	}
	if s.nChildren != children {
		return nil, 0, nil, fmt.Errorf("cdatax: %s n_children is %d, format %q has %d: %w", at, s.nChildren, format,
			children, arrowx.ErrMalformed)
	}
	if children == 0 {
		return leaf, 0, nil, nil
	}
	if s.children == nil || *s.children == nil {
		return nil, 0, nil, fmt.Errorf("cdatax: %s (format %q) children[0] is NULL: %w", at, format, arrowx.ErrMalformed)
	}
	return nil, size, *s.children, nil
}

// checkArray checks the array at depth against its type (leaf, or a FixedSizeList of size
// elements) and returns its child, if a list.
func checkArray(a *cArray, depth int, leaf arrow.DataType, size int32) (*cArray, error) {
	at := where("ArrowArray", depth)
	if a.release == nil {
		return nil, errs.Errorf(ErrReleased, "cdatax: %s has a NULL release callback (released already, or moved)", at)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("cdatax: %s %s: %w", at, fmt.Sprintf(format, args...), arrowx.ErrMalformed)
	}
	switch {
	case a.length < 0:
		return nil, bad("length %d is negative", a.length)
	case a.offset < 0:
		return nil, bad("offset %d is negative", a.offset)
	case a.offset > math.MaxInt64-a.length:
		return nil, bad("offset %d + length %d overflows int64", a.offset, a.length)
	case a.nullCount < -1 || a.nullCount > a.length:
		return nil, bad("null_count %d is outside [-1, length %d]", a.nullCount, a.length)
	}
	if a.dictionary != nil {
		return nil, fmt.Errorf("cdatax: %s is dictionary-encoded: %w", at, adapters.ErrUnsupported)
	}
	kind, buffers, children := "FixedSizeList", int64(1), int64(1)
	if leaf != nil {
		kind, buffers, children = leaf.String(), 2, 0
	}
	switch {
	case a.nBuffers != buffers:
		return nil, bad("n_buffers is %d, a %s array has %d", a.nBuffers, kind, buffers)
	case a.buffers == nil:
		return nil, bad("buffers is NULL, with n_buffers %d", a.nBuffers)
	case a.nChildren != children:
		return nil, bad("n_children is %d, a %s array has %d", a.nChildren, kind, children)
	case children == 1 && (a.children == nil || *a.children == nil):
		return nil, bad("children[0] is NULL, with n_children 1")
	}
	end := a.offset + a.length // the slots the buffers hold
	bufs := unsafe.Slice(a.buffers, buffers)
	if a.nullCount > 0 && bufs[0] == nil {
		return nil, bad("null_count is %d, with no validity bitmap (buffers[0] is NULL)", a.nullCount)
	}
	if leaf == nil {
		if _, ok := mulCheck(end, int64(size)); !ok {
			return nil, bad("offset %d + length %d lists of %d elements overflow int64", a.offset, a.length, size)
		}
		return *a.children, nil
	}
	width := int64(leaf.(arrow.FixedWidthDataType).BitWidth())
	if bits, ok := mulCheck(end, width); !ok || bits > math.MaxInt-7 {
		return nil, bad("offset %d + length %d elements of %s overflow the address space", a.offset, a.length, kind)
	}
	if end > 0 && bufs[1] == nil {
		return nil, bad("values buffer (buffers[1]) is NULL, with offset %d + length %d elements", a.offset, a.length)
	}
	return nil, nil
}

// mulCheck returns a*b for a, b ≥ 0, or false if it overflows int64.
func mulCheck(a, b int64) (int64, bool) {
	if b != 0 && a > math.MaxInt64/b {
		return 0, false
	}
	return a * b, true
}

// checkForeign walks a foreign array and its schema together, from the top down the
// FixedSizeList levels to the primitive leaf (at most core.MaxNdim levels, so a tree that
// loops is refused too), and checks every field that arrow-go's importer and arrowx will read:
// neither struct released, the format one that arrowx maps, no dictionary, lengths, offsets and
// null counts in range and free of overflow, the buffers and children the type needs present. It
// returns the array's Arrow type, built from the schema. It reads the structs and calls nothing:
// what fails here has been handed to no one, and the caller releases it.
//
// Only what a producer cannot get wrong without lying about its memory is left to trust: that
// buffers hold the lengths they claim, and that pointers point at what they say.
func checkForeign(a *cArray, s *cSchema) (arrow.DataType, error) {
	var sizes []int32
	for depth := 0; ; depth++ {
		if depth == core.MaxNdim {
			return nil, fmt.Errorf("cdatax: ArrowSchema has more than %d nested FixedSizeLists (a tensor has at most %d dimensions): %w",
				core.MaxNdim-1, core.MaxNdim, adapters.ErrUnsupported)
		}
		leaf, size, childSchema, err := checkSchema(s, depth)
		if err != nil {
			return nil, err
		}
		childArray, err := checkArray(a, depth, leaf, size)
		if err != nil {
			return nil, err
		}
		if leaf != nil {
			dt := leaf
			for i := len(sizes) - 1; i >= 0; i-- {
				dt = arrow.FixedSizeListOf(sizes[i], dt)
			}
			return dt, nil
		}
		sizes = append(sizes, size)
		a, s = childArray, childSchema
	}
}
