package numpyx

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
)

// Magic is the first six bytes of every .npy file.
const Magic = "\x93NUMPY"

// MaxHeaderLen is the longest header dict this package reads. NumPy's own headers for the
// dtypes read here are under 2 KiB even with 64 dimensions; the limit keeps a hostile length
// field from costing memory.
const MaxHeaderLen = 1 << 20

// Alignment is the boundary, in bytes, that headers are padded to so that the data starts on
// it (NumPy's ARRAY_ALIGN).
const Alignment = 64

// growthDigits is NumPy's GROWTH_AXIS_MAX_DIGITS: headers leave room for the growth axis to
// reach 21 digits, so that a header can be rewritten in place when the array grows.
const growthDigits = 21

// Version is a .npy format version: 1.0 (16-bit header length), 2.0 (32-bit header length) or
// 3.0 (2.0 with a UTF-8 header).
type Version struct{ Major, Minor uint8 }

// String formats the version as "1.0".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Header is what a .npy file says about its array.
type Header struct {
	// Version is the format version of the file.
	Version Version
	// Descr is the dtype string as written in the file, such as "<f4" or "|b1".
	Descr string
	// DType is the DLPack element type of Descr.
	DType core.DLDataType
	// BigEndian reports whether multi-byte elements are stored most significant byte first.
	// It is false for one-byte types.
	BigEndian bool
	// Fortran is the file's fortran_order: the elements are stored in column-major order.
	Fortran bool
	// Shape is the size of each dimension; empty for a 0-d array.
	Shape []int64
	// DataOffset is the position of the first data byte from the start of the file: the
	// magic, version, length field and header dict together.
	DataOffset int64
}

// Len returns the number of elements (1 for a 0-d array).
func (h Header) Len() int64 {
	n := int64(1)
	for _, d := range h.Shape {
		n *= d
	}
	return n
}

// DataLen returns the number of data bytes the header promises. ParseHeader has checked that
// it fits in an int64.
func (h Header) DataLen() int64 { return h.Len() * int64(h.DType.Size()) }

// NeedsSwap reports whether the elements are stored in the other byte order than this
// machine's and must be swapped to be used (DLPack memory is native-endian).
func (h Header) NeedsSwap() bool { return h.DType.Size() > 1 && h.BigEndian != hostBigEndian }

// String returns the header dict as NumPy writes it, without padding, for example
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
func (h Header) String() string {
	var b strings.Builder
	b.WriteString("{'descr': '")
	b.WriteString(h.Descr)
	b.WriteString("', 'fortran_order': ")
	if h.Fortran {
		b.WriteString("True")
	} else {
		b.WriteString("False")
	}
	b.WriteString(", 'shape': (")
	for i, d := range h.Shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	if len(h.Shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteString("), }")
	return b.String()
}

// hostBigEndian reports the byte order of this machine.
var hostBigEndian = tensorio.HostBigEndian

// dtypes maps NumPy's kind and item size to DLPack types; every entry can be read and written.
var dtypes = map[string]core.DLDataType{
	"b1": core.Bool,
	"i1": core.Int8, "i2": core.Int16, "i4": core.Int32, "i8": core.Int64,
	"u1": core.Uint8, "u2": core.Uint16, "u4": core.Uint32, "u8": core.Uint64,
	"f2": core.Float16, "f4": core.Float32, "f8": core.Float64,
	"c8": core.Complex64, "c16": core.Complex128,
}

// parseDescr maps a simple NumPy dtype string ("<f4", "|b1", ">c16", "u1") to a DLPack type.
func parseDescr(s string) (dt core.DLDataType, bigEndian bool, err error) {
	body := s
	order := byte('=')
	if len(body) > 0 && strings.IndexByte("<>|=", body[0]) >= 0 {
		order, body = body[0], body[1:]
	}
	dt, ok := dtypes[body]
	if !ok {
		return dt, false, errs.Errorf(ErrUnsupportedDType, "numpyx: descr %q is not a dtype numpyx reads (only b1, i1-i8, u1-u8, f2, f4, f8, c8, c16 are)", s)
	}
	switch order {
	case '>':
		bigEndian = true
	case '=':
		bigEndian = hostBigEndian
	case '|':
		if dt.Size() > 1 {
			return dt, false, errs.Errorf(ErrHeader, "numpyx: descr %q puts '|' (no byte order) on a multi-byte type", s)
		}
	}
	if dt.Size() == 1 {
		bigEndian = false
	}
	return dt, bigEndian, nil
}

// descrOf returns the dtype string NumPy writes for dt in this machine's byte order.
func descrOf(dt core.DLDataType) (string, error) {
	for k, v := range dtypes {
		if v == dt {
			switch {
			case dt.Size() == 1:
				return "|" + k, nil
			case hostBigEndian:
				return ">" + k, nil
			default:
				return "<" + k, nil
			}
		}
	}
	return "", errs.Errorf(ErrUnsupportedDType, "numpyx: %s has no NumPy equivalent this package writes", dt)
}

// ParseHeader parses the header dict of a .npy file (the text after the length field), such
// as "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", with a strict parser of
// Python literal syntax: nothing is evaluated. Keys may come in any order, trailing commas,
// spaces and newlines are allowed, and integers may carry the 'L' suffix of Python 2 files. It
// refuses (ErrHeader) anything that is not a dict with exactly the keys descr (a string),
// fortran_order (a bool) and shape (a tuple of at most core.MaxNdim non-negative ints whose
// product times the item size fits in an int64), and refuses (ErrUnsupportedDType) dtypes
// other than b1, i1-i8, u1-u8, f2, f4, f8, c8 and c16: objects, structured (list) descrs,
// strings, datetimes. Version and DataOffset of the result are zero.
func ParseHeader(dict []byte) (Header, error) {
	p := parser{s: dict}
	v, err := p.value(0)
	if err != nil {
		return Header{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return Header{}, errs.Errorf(ErrHeader, "numpyx: unexpected %q after the dict at byte %d of the header", clip(p.s[p.i:]), p.i)
	}
	if v.kind != kDict {
		return Header{}, errs.Errorf(ErrHeader, "numpyx: the header is a %s, not a dict", v.kind)
	}
	var h Header
	seen := map[string]bool{}
	for i, k := range v.keys {
		if k.kind != kStr {
			return Header{}, errs.Errorf(ErrHeader, "numpyx: header key %d is a %s, not a string", i, k.kind)
		}
		if seen[k.s] {
			return Header{}, errs.Errorf(ErrHeader, "numpyx: header key %q appears twice", k.s)
		}
		seen[k.s] = true
		val := v.items[i]
		switch k.s {
		case "descr":
			switch val.kind {
			case kStr:
				h.Descr = val.s
			case kList:
				return Header{}, errs.Errorf(ErrUnsupportedDType, "numpyx: structured descr (a list of fields) is not supported")
			default:
				return Header{}, errs.Errorf(ErrHeader, "numpyx: descr is a %s, not a string", val.kind)
			}
		case "fortran_order":
			if val.kind != kBool {
				return Header{}, errs.Errorf(ErrHeader, "numpyx: fortran_order is a %s, not a bool", val.kind)
			}
			h.Fortran = val.b
		case "shape":
			if val.kind != kTuple {
				return Header{}, errs.Errorf(ErrHeader, "numpyx: shape is a %s, not a tuple", val.kind)
			}
			h.Shape = make([]int64, len(val.items))
			for j, d := range val.items {
				if d.kind != kInt {
					return Header{}, errs.Errorf(ErrHeader, "numpyx: shape[%d] is a %s, not an int", j, d.kind)
				}
				if d.i < 0 {
					return Header{}, errs.Errorf(ErrHeader, "numpyx: shape[%d] = %d is negative", j, d.i)
				}
				h.Shape[j] = d.i
			}
		default:
			return Header{}, errs.Errorf(ErrHeader, "numpyx: unexpected header key %q (want descr, fortran_order, shape)", k.s)
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return Header{}, errs.Errorf(ErrHeader, "numpyx: header key %q is missing", k)
		}
	}
	if h.DType, h.BigEndian, err = parseDescr(h.Descr); err != nil {
		return Header{}, err
	}
	// the data size must fit: product of dims times the item size, checked on the way
	// (a 0 dimension makes the array empty, but the other dimensions must still be sane)
	n := uint64(h.DType.Size())
	for _, d := range h.Shape {
		if d == 0 {
			continue
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > 1<<63-1 {
			return Header{}, errs.Errorf(ErrHeader, "numpyx: shape %v of %s overflows int64 bytes", h.Shape, h.Descr)
		}
		n = lo
	}
	return h, nil
}

// clip shortens b for error messages.
func clip(b []byte) string {
	if len(b) > 20 {
		return string(b[:20]) + "..."
	}
	return string(b)
}

// encodeHeader returns the whole header block NumPy writes for h (magic, version, length,
// dict, padding and newline) so that the data starts on a multiple of Alignment. It picks
// version 1.0 unless the header needs the 32-bit length of 2.0, as numpy.save does.
func encodeHeader(h Header) []byte {
	dict := h.String()
	if len(h.Shape) > 0 {
		d := h.Shape[0]
		if h.Fortran {
			d = h.Shape[len(h.Shape)-1]
		}
		dict += strings.Repeat(" ", growthDigits-len(strconv.FormatInt(d, 10)))
	}
	lenField := 2
	hlen := len(dict) + 1
	pad := Alignment - (len(Magic)+2+lenField+hlen)%Alignment
	if hlen+pad > 0xffff {
		lenField = 4
		pad = Alignment - (len(Magic)+2+lenField+hlen)%Alignment
	}
	out := make([]byte, 0, len(Magic)+2+lenField+hlen+pad)
	out = append(out, Magic...)
	if lenField == 2 {
		out = append(out, 1, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	} else {
		out = append(out, 2, 0)
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
	}
	out = append(out, dict...)
	for range pad {
		out = append(out, ' ')
	}
	return append(out, '\n')
}
