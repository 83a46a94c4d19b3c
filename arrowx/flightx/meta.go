package flightx

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Errors of this package, each wrapped with what was wrong. Errors from the peer or the
// network also wrap ErrTransport (and the gRPC status, which status.Code reads).
var (
	// ErrNotFound: no tensor of that name is on the server.
	ErrNotFound = errors.New("flightx: no such tensor")
	// ErrProtocol: a stream or schema does not follow this package's format (see the package
	// documentation): bad metadata, a column of the wrong type, nulls, more or fewer elements
	// than the shape holds.
	ErrProtocol = errors.New("flightx: malformed tensor stream")
	// ErrTooLarge: a tensor is larger than the receiver's limit (WithMaxBytes).
	ErrTooLarge = errors.New("flightx: tensor exceeds the size limit")
	// ErrBusy: the server has as much memory in flight as it allows (WithMaxInFlight): it
	// refused the stream; try again later.
	ErrBusy = errors.New("flightx: server memory in flight at its limit")
	// ErrIdle: a stream went without a message for longer than the server's idle timeout
	// (WithIdleTimeout), and the server ended it.
	ErrIdle = errors.New("flightx: stream idle past the timeout")
	// ErrTransport: the call failed in gRPC or at the peer.
	ErrTransport = errors.New("flightx: transfer failed")
	// ErrMismatch: GetInto's destination does not match the tensor (dtype, size, layout); a
	// list of tensors mixes dtypes or numbers of dimensions (PutTensors); or a flight is a list
	// where one tensor was asked for (Get), or one tensor where a list was (GetTensors).
	ErrMismatch = errors.New("flightx: destination does not fit the tensor")
	// ErrName: a tensor name is empty or too long.
	ErrName = errors.New("flightx: bad tensor name")
)

// Schema metadata keys. Every other key of the schema's metadata is the tensor's own metadata.
const (
	// KeyDType holds the element type as core.DLDataType.String writes it ("float32",
	// "bfloat16", "complex64", "bool", "float8_e4m3fn", "int8x4" for lanes).
	KeyDType = "dlpack.dtype"
	// KeyShape holds the shape as decimal sizes joined by commas ("2,3,4"; "" for a 0-d tensor).
	KeyShape = "dlpack.shape"
	// KeyOrder holds the element order of the batches: always "C".
	KeyOrder = "dlpack.order"
	// KeyTensors holds the number of tensors of a variable-shape flight (a list of tensors of
	// their own shapes: PutTensors), in decimal; it marks such a flight, which has no KeyShape.
	KeyTensors = "dlpack.tensors"
	// KeyNdim holds the number of dimensions of every tensor of a variable-shape flight.
	KeyNdim = "dlpack.ndim"
	// KeyElements holds the number of elements of all the tensors of a variable-shape flight
	// together.
	KeyElements = "dlpack.elements"
	// keyPrefix starts every key this package reserves.
	keyPrefix = "dlpack."
	// column is the name of the one column of every batch.
	column = "data"
)

// maxNameLen bounds tensor names (they travel as tickets and descriptor paths).
const maxNameLen = 1024

// Info describes a tensor on the wire: its name, element type, shape and metadata; or a
// variable-shape flight, a list of tensors of one dtype and number of dimensions, each of its
// own shape (Variable).
type Info struct {
	Name  string
	DType core.DLDataType
	// Shape is the tensor's shape; for a variable-shape flight, [n], the number of tensors.
	Shape []int64
	Meta  map[string]string
	// Variable reports a variable-shape flight (PutTensors, GetTensors: one
	// arrow.variable_shape_tensor column), whose tensors' shapes only its batches tell; false
	// for a flight of one tensor.
	Variable bool
	// Ndim is the number of dimensions of every tensor of a variable-shape flight (0 for a
	// flight of one tensor: len(Shape) is its).
	Ndim int
	// Elements is the number of elements of all the tensors of a variable-shape flight
	// together, which Len returns (0 for a flight of one tensor).
	Elements int64
}

// Unsized reports whether the stream did not announce its first dimension (a plain Arrow
// stream: Shape[0] is -1 until it ended; for a list, Shape[0] is its number of tensors, and
// Elements is 0 until then too).
func (i Info) Unsized() bool { return len(i.Shape) > 0 && i.Shape[0] < 0 }

// Len is the number of elements (of the rows after the first dimension, when Unsized; of all
// the tensors, Elements, when Variable).
func (i Info) Len() int64 {
	if i.Variable {
		return i.Elements
	}
	n := int64(1)
	for _, d := range i.Shape {
		if d >= 0 {
			n *= d
		}
	}
	return n
}

// Bytes is the size of the elements.
func (i Info) Bytes() int64 { return i.Len() * int64(i.DType.Size()) }

func checkName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return errs.Errorf(ErrName, "flightx: tensor name of %d bytes (want 1 to %d)", len(name), maxNameLen)
	}
	return nil
}

// dtypeNames maps every valid scalar DLPack dtype's name to the dtype.
var dtypeNames = func() map[string]core.DLDataType {
	m := map[string]core.DLDataType{}
	for _, c := range core.DataTypeCodes() {
		for _, b := range []uint8{1, 4, 6, 8, 16, 32, 64, 128} {
			dt := core.DLDataType{Code: c, Bits: b, Lanes: 1}
			if dt.Validate() == nil {
				m[dt.String()] = dt
			}
		}
	}
	return m
}()

// ParseDType reads a dtype name as core.DLDataType.String writes it.
func ParseDType(s string) (core.DLDataType, error) {
	name, lanes := s, uint64(1)
	if _, whole := dtypeNames[s]; !whole {
		if i := strings.LastIndexByte(s, 'x'); i > 0 {
			if n, err := strconv.ParseUint(s[i+1:], 10, 16); err == nil && s[i+1] != '0' && s[i+1] != '+' {
				name, lanes = s[:i], n
			}
		}
	}
	dt, ok := dtypeNames[name]
	if !ok || lanes == 0 {
		return core.DLDataType{}, errs.Errorf(ErrProtocol, "flightx: %s %q is no DLPack dtype", KeyDType, truncate(s))
	}
	dt.Lanes = uint16(lanes)
	if err := dt.Validate(); err != nil {
		return core.DLDataType{}, errs.Errorf(ErrProtocol, "flightx: %s %q: %v", KeyDType, truncate(s), err)
	}
	return dt, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// ParseShape reads a shape as KeyShape holds it, checking that every size is a non-negative
// decimal, that there are at most core.MaxNdim of them, and that the element count times size
// bytes fits an int64.
func ParseShape(s string, elemSize int) ([]int64, error) {
	if s == "" {
		return []int64{}, nil
	}
	if strings.Count(s, ",") >= core.MaxNdim {
		return nil, errs.Errorf(ErrProtocol, "flightx: %s has more than %d dimensions", KeyShape, core.MaxNdim)
	}
	parts := strings.Split(s, ",")
	shape := make([]int64, len(parts))
	total := uint64(max(elemSize, 1))
	for i, p := range parts {
		d, err := strconv.ParseInt(p, 10, 64)
		if err != nil || d < 0 || p[0] < '0' || p[0] > '9' || (len(p) > 1 && p[0] == '0') {
			return nil, errs.Errorf(ErrProtocol, "flightx: %s %q: size %d is not a non-negative decimal", KeyShape, truncate(s), i)
		}
		shape[i] = d
		hi, lo := bits.Mul64(total, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return nil, errs.Errorf(ErrProtocol, "flightx: %s %q overflows", KeyShape, truncate(s))
		}
		if d != 0 {
			total = lo
		}
	}
	return shape, nil
}

func formatShape(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, ",")
}

// wireType is the Arrow type of the column that carries dt: its Arrow primitive when it has a
// byte-wide one, else a FixedSizeBinary of its size (bool, bfloat16, complex, float8, lanes).
func wireType(dt core.DLDataType) (arrow.DataType, error) {
	if dt.Size() == 0 {
		return nil, errs.Errorf(ErrProtocol, "flightx: sub-byte dtype %s cannot travel element by element", dt)
	}
	if at, err := arrowx.ToDType(dt); err == nil && dt != core.Bool {
		return at, nil
	}
	return &arrow.FixedSizeBinaryType{ByteWidth: dt.Size()}, nil
}

// schemaOf makes the schema of a tensor stream sent in batches of DefaultChunkBytes.
func schemaOf(info Info) (*arrow.Schema, error) {
	s, _, err := schemaFor(info, DefaultChunkBytes, false)
	return s, err
}

// schemaFor makes the schema of a tensor stream sent in batches of chunkBytes: its column a
// tensor column (returned too), or with legacy the flat column of the earlier format (the
// column nil).
func schemaFor(info Info, chunkBytes int, legacy bool) (*arrow.Schema, *tensorColumn, error) {
	if info.Variable {
		s, err := listSchema(info)
		return s, nil, err
	}
	var typ arrow.DataType
	var col *tensorColumn
	if legacy {
		t, err := wireType(info.DType)
		if err != nil {
			return nil, nil, err
		}
		typ = t
	} else {
		c, err := columnOf(info, chunkBytes)
		if err != nil {
			return nil, nil, err
		}
		typ, col = c.typ, &c
	}
	// as ParseShape checks on the other side: a view repeating elements (BroadcastTo) can
	// have more bytes than a stream can say
	if hi, lo := bits.Mul64(uint64(info.Len()), uint64(info.DType.Size())); hi != 0 || lo > math.MaxInt64 {
		return nil, nil, errs.Errorf(core.ErrOverflow, "flightx: %s %v takes more than 2^63 bytes", info.DType, info.Shape)
	}
	keys := []string{KeyDType, KeyShape, KeyOrder}
	vals := []string{info.DType.String(), formatShape(info.Shape), "C"}
	for k, v := range info.Meta {
		if strings.HasPrefix(k, keyPrefix) {
			return nil, nil, errs.Errorf(ErrProtocol, "flightx: metadata key %q uses the reserved prefix %q", k, keyPrefix)
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema([]arrow.Field{{Name: column, Type: typ}}, &md), col, nil
}

// DecodeSchema reads a tensor stream's schema (untrusted): the dtype, the shape, the order, the
// one column (a tensor column of the dtype's carrier and a row of the shape, or the flat column
// of the earlier format), and the rest of the metadata. name is left empty. The schema of a
// variable-shape flight (dlpack.tensors, no dlpack.shape) gives an Info with Variable set.
//
// A schema without dlpack.dtype and dlpack.shape is a plain Arrow stream (pyarrow, arrow-go):
// its one column is an arrow.fixed_shape_tensor (no permutation) or a primitive column of an
// Arrow type with a DLPack dtype (not the bit-packed boolean), and the stream is a tensor of
// shape [rows, row shape...] whose number of rows only its end tells: Shape[0] is then -1
// (Unsized reports it), and every schema metadata key is the tensor's metadata. A plain stream
// whose one column is an arrow.variable_shape_tensor of an Arrow primitive (no permutation) is
// a list of tensors (Variable, Ndim the column's): Shape is [-1] and Elements 0 until it ended.
func DecodeSchema(s *arrow.Schema) (Info, error) {
	info, _, err := decodeSchema(s)
	return info, err
}

// decodeSchema is DecodeSchema, with the tensor column (nil for a flat one).
func decodeSchema(s *arrow.Schema) (info Info, col *tensorColumn, err error) {
	if s == nil {
		return info, nil, errs.Errorf(ErrProtocol, "flightx: tensor stream without a schema")
	}
	md := s.Metadata()
	get := func(k string) (string, bool) {
		i := md.FindKey(k)
		if i < 0 {
			return "", false
		}
		return md.Values()[i], true
	}
	ds, ok := get(KeyDType)
	_, hasShape := get(KeyShape)
	if !ok && !hasShape {
		return plainSchema(s)
	}
	if _, list := get(KeyTensors); list && ok && !hasShape {
		info, err := decodeListSchema(s, get)
		return info, nil, err
	}
	if !ok {
		return info, nil, errs.Errorf(ErrProtocol, "flightx: schema metadata has no %s", KeyDType)
	}
	dt, err := ParseDType(ds)
	if err != nil {
		return info, nil, err
	}
	if dt.Size() == 0 || dt.Bits%8 != 0 {
		// whole bytes only: int4x8 fills 4 bytes, but its elements have no Arrow carrier
		return info, nil, errs.Errorf(ErrProtocol, "flightx: sub-byte dtype %s cannot travel in a tensor stream", dt)
	}
	ss, ok := get(KeyShape)
	if !ok {
		return info, nil, errs.Errorf(ErrProtocol, "flightx: schema metadata has no %s", KeyShape)
	}
	shape, err := ParseShape(ss, dt.Size())
	if err != nil {
		return info, nil, err
	}
	if o, _ := get(KeyOrder); o != "C" {
		return info, nil, errs.Errorf(ErrProtocol, "flightx: %s %q (want \"C\")", KeyOrder, truncate(o))
	}
	if s.NumFields() != 1 {
		return info, nil, errs.Errorf(ErrProtocol, "flightx: schema of %d columns (want 1)", s.NumFields())
	}
	info.DType, info.Shape = dt, shape
	if ft, ok := s.Field(0).Type.(*arrowx.FixedShapeTensorType); ok {
		c, err := columnFrom(ft, info)
		if err != nil {
			return Info{}, nil, err
		}
		col = &c
	} else {
		want, err := wireType(dt)
		if err != nil {
			return Info{}, nil, err
		}
		if got := s.Field(0).Type; !arrow.TypeEqual(got, want) {
			return Info{}, nil, errs.Errorf(ErrProtocol, "flightx: column of type %s carries %s (want %s or %s)", got, dt,
				arrowx.FixedShapeTensorName, want)
		}
	}
	info.Meta = map[string]string{}
	for i, k := range md.Keys() {
		if !strings.HasPrefix(k, keyPrefix) {
			info.Meta[k] = md.Values()[i]
		}
	}
	return info, col, nil
}

// plainSchema reads the schema of a plain Arrow stream, one without this package's metadata
// (see DecodeSchema): the dtype and the row shape from the column's type, the first dimension
// unknown (-1).
func plainSchema(s *arrow.Schema) (info Info, col *tensorColumn, err error) {
	if s.NumFields() != 1 {
		return info, nil, errs.Errorf(ErrProtocol, "flightx: schema of %d columns without %s and %s (want one "+
			"%s, %s or primitive column)", s.NumFields(), KeyDType, KeyShape, arrowx.FixedShapeTensorName,
			arrowx.VariableShapeTensorName)
	}
	typ := s.Field(0).Type
	if vt, ok := typ.(*arrowx.VariableShapeTensorType); ok {
		info, err := plainListSchema(s, vt)
		return info, nil, err
	}
	value, row := typ, []int64(nil)
	ft, isTensor := typ.(*arrowx.FixedShapeTensorType)
	if isTensor {
		if !identityPermutation(ft.Permutation()) {
			return info, nil, errs.Errorf(ErrProtocol, "flightx: column %s has a permutation (plain tensor streams "+
				"are read in row-major order only)", ft)
		}
		value, row = ft.ValueType(), ft.Shape()
	}
	dt, err := arrowx.FromDType(value)
	if err == nil && dt == core.Bool {
		err = errs.Errorf(ErrProtocol, "bit-packed booleans are not read as bytes")
	}
	if err != nil {
		return info, nil, errs.Errorf(ErrProtocol, "flightx: column of type %s without %s: %v", typ, KeyDType, err)
	}
	info.DType, info.Shape = dt, append([]int64{-1}, row...)
	if isTensor {
		c, err := columnFrom(ft, Info{DType: dt, Shape: append([]int64{0}, row...)})
		if err != nil {
			return Info{}, nil, err
		}
		col = &c
	}
	md := s.Metadata()
	info.Meta = map[string]string{}
	for i, k := range md.Keys() {
		info.Meta[k] = md.Values()[i]
	}
	return info, col, nil
}

// identityPermutation reports whether perm, a tensor type's permutation, leaves the dimensions
// in their order: none, or [0, 1, ..., n-1], which pyarrow's
// FixedShapeTensorArray.from_numpy_ndarray writes for every C-contiguous array.
func identityPermutation(perm []int) bool {
	for i, p := range perm {
		if p != i {
			return false
		}
	}
	return true
}
