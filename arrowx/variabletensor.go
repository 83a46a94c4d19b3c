package arrowx

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// VariableShapeTensorName is the extension name of Arrow's canonical variable shape tensor type.
const VariableShapeTensorName = "arrow.variable_shape_tensor"

// VariableShapeTensorType is Arrow's canonical extension type arrow.variable_shape_tensor:
// every element of an array of it is a tensor of one element type and number of dimensions,
// each with its own shape. Its storage is a Struct of "data", a List of the elements in
// row-major order, and "shape", a FixedSizeList<int32>[ndim] of the element's physical shape.
// Its JSON metadata may hold dim_names, a permutation (logical dimension i is physical
// dimension Permutation[i], as for FixedShapeTensorType) and uniform_shape (the dimensions
// every element shares; null for those that vary).
//
// Importing this package registers the type with arrow-go, so that its IPC and Flight readers
// yield arrays of it as *VariableShapeTensorArray, whose Tensor(i) is element i as a tensor over
// the array's amemory. NewVariableShapeTensorArray makes one of a list of tensors.
type VariableShapeTensorType struct {
	arrow.ExtensionBase
	ndim         int
	dimNames     []string
	permutation  []int
	uniformShape []int64 // -1: the dimension varies; nil: none given
	// the storage struct's fields "data" and "shape", in the order the producer wrote them
	dataIdx, shapeIdx int
}

// VariableShapeTensorArray is an array of arrow.variable_shape_tensor.
type VariableShapeTensorArray struct {
	array.ExtensionArrayBase
}

type variableShapeMeta struct {
	DimNames     []string `json:"dim_names,omitempty"`
	Permutation  []int    `json:"permutation,omitempty"`
	UniformShape []*int64 `json:"uniform_shape,omitempty"`
}

func init() {
	proto, _ := NewVariableShapeTensorType(arrow.PrimitiveTypes.Float32, 1, nil, nil, nil)
	_ = arrow.RegisterExtensionType(proto)
}

// variableStorage is the storage type of tensors of value and ndim dimensions.
func variableStorage(value arrow.DataType, ndim int) arrow.DataType {
	return arrow.StructOf(
		arrow.Field{Name: "data", Type: arrow.ListOf(value), Nullable: true},
		// nullable, as Arrow C++ declares it: pyarrow drops the extension type of a Parquet
		// column whose stored shape field is not
		arrow.Field{Name: "shape", Type: arrow.FixedSizeListOf(int32(ndim), arrow.PrimitiveTypes.Int32), Nullable: true},
	)
}

// NewVariableShapeTensorType returns the arrow.variable_shape_tensor type of tensors of ndim
// dimensions (1 to core.MaxNdim-1: arrow-go has no FixedSizeList of size 0, so 0-d elements
// have no shape column) of the given element type (a primitive Arrow type: see ToDType), with
// optional dimension names, permutation and uniform shape (one entry per dimension, -1 for a
// dimension that varies), each nil or of ndim entries.
func NewVariableShapeTensorType(value arrow.DataType, ndim int, dimNames []string, permutation []int, uniformShape []int64) (*VariableShapeTensorType, error) {
	if value == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: variable_shape_tensor without an element type")
	}
	if _, err := FromDType(value); err != nil {
		return nil, fmt.Errorf("arrowx: variable_shape_tensor of %s: %w", typeString(value), err)
	}
	if ndim < 1 || ndim > core.MaxNdim-1 {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor of %d dimensions (1 to %d here)", ndim, core.MaxNdim-1)
	}
	shape := make([]int64, ndim) // checkTensorMeta checks names and permutation against ndim
	for i := range shape {
		shape[i] = 1
	}
	if _, err := checkTensorMeta(shape, dimNames, permutation); err != nil {
		return nil, fmt.Errorf("arrowx: variable_shape_tensor: %w", err)
	}
	if uniformShape != nil {
		if len(uniformShape) != ndim {
			return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor uniform_shape %v for %d dimensions", uniformShape, ndim)
		}
		for _, d := range uniformShape {
			if d < -1 || d > math.MaxInt32 {
				return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor uniform_shape %v has dimension %d (0 to 2^31-1, or null)", uniformShape, d)
			}
		}
	}
	return &VariableShapeTensorType{
		ExtensionBase: arrow.ExtensionBase{Storage: variableStorage(value, ndim)},
		ndim:          ndim, dimNames: slices.Clone(dimNames), permutation: slices.Clone(permutation),
		uniformShape: slices.Clone(uniformShape), dataIdx: 0, shapeIdx: 1,
	}, nil
}

// ArrayType is the Go type of arrays of t, for arrow-go.
func (*VariableShapeTensorType) ArrayType() reflect.Type {
	return reflect.TypeOf(VariableShapeTensorArray{})
}

// ExtensionName is "arrow.variable_shape_tensor".
func (*VariableShapeTensorType) ExtensionName() string { return VariableShapeTensorName }

// Ndim is the number of dimensions of every element.
func (t *VariableShapeTensorType) Ndim() int { return t.ndim }

// DimNames are the dimensions' names, or nil.
func (t *VariableShapeTensorType) DimNames() []string { return slices.Clone(t.dimNames) }

// Permutation is the permutation from physical to logical dimensions, or nil (the identity).
func (t *VariableShapeTensorType) Permutation() []int { return slices.Clone(t.permutation) }

// UniformShape is the physical dimensions every element shares (-1 where they vary), or nil.
func (t *VariableShapeTensorType) UniformShape() []int64 { return slices.Clone(t.uniformShape) }

// ValueType is the Arrow type of the elements.
// A type not made by NewVariableShapeTensorType or Deserialize (the zero value) has none: nil.
func (t *VariableShapeTensorType) ValueType() arrow.DataType {
	st, ok := t.Storage.(*arrow.StructType)
	if !ok || t.dataIdx >= st.NumFields() {
		return nil
	}
	if lt, ok := st.Field(t.dataIdx).Type.(*arrow.ListType); ok {
		return lt.Elem()
	}
	return nil
}

// Serialize is the JSON metadata, with dim_names, permutation and uniform_shape when set.
func (t *VariableShapeTensorType) Serialize() string {
	m := variableShapeMeta{DimNames: t.dimNames, Permutation: t.permutation}
	for _, d := range t.uniformShape {
		if d < 0 {
			m.UniformShape = append(m.UniformShape, nil)
		} else {
			m.UniformShape = append(m.UniformShape, &d)
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Deserialize makes the type of an array read from IPC, Flight, Parquet or the C Data
// Interface, checking storage and metadata as untrusted input (ErrMalformed). The storage must
// be what Arrow's specification says, and may be anything it allows: a Struct of two fields
// found by name, in either order, "data", a List of a primitive type, and "shape", a
// FixedSizeList<int32>[ndim], any of them (and their children, whatever they are called)
// nullable or not. The metadata's keys are all optional; its names, permutation and uniform
// shape must fit ndim. The type keeps the storage it was given, so that a reader comparing it
// with the stored schema finds it equal and a file written again stores the same schema.
func (*VariableShapeTensorType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	st, ok := storage.(*arrow.StructType)
	if !ok {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor stored as %s, not a Struct of data and shape", typeString(storage))
	}
	var names []string // the first few, for the message
	for i, f := range st.Fields() {
		if i == 4 {
			names = append(names, "...")
			break
		}
		names = append(names, f.Name)
	}
	di, si := st.FieldIndices("data"), st.FieldIndices("shape")
	if st.NumFields() != 2 || len(di) != 1 || len(si) != 1 {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor stored as a Struct of fields %.40q, not of \"data\" and \"shape\" (in either order)", names)
	}
	df, sf := st.Field(di[0]), st.Field(si[0])
	lt, ok := df.Type.(*arrow.ListType)
	if !ok || lt.Elem() == nil {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor's data field is %s, not a List", typeString(df.Type))
	}
	ft, ok := sf.Type.(*arrow.FixedSizeListType)
	if !ok || !arrow.TypeEqual(ft.Elem(), arrow.PrimitiveTypes.Int32) {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor's shape field is %s, not a FixedSizeList<int32>", typeString(sf.Type))
	}
	var m variableShapeMeta
	if strings.TrimSpace(data) != "" {
		dec := json.NewDecoder(strings.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor metadata %.200q: %v", data, err)
		}
		if dec.More() {
			return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor metadata %.200q has data after its object", data)
		}
	}
	var uniform []int64
	if m.UniformShape != nil {
		uniform = make([]int64, len(m.UniformShape))
		for i, d := range m.UniformShape {
			uniform[i] = -1
			if d != nil {
				if *d < 0 {
					return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor uniform_shape has dimension %d", *d)
				}
				uniform[i] = *d
			}
		}
	}
	t, err := NewVariableShapeTensorType(lt.Elem(), int(ft.Len()), m.DimNames, m.Permutation, uniform)
	if err != nil {
		return nil, err
	}
	t.Storage, t.dataIdx, t.shapeIdx = storage, di[0], si[0] // the producer's fields, as they are
	return t, nil
}

// ExtensionEquals reports whether other is a variable shape tensor type of the same storage
// and metadata.
func (t *VariableShapeTensorType) ExtensionEquals(other arrow.ExtensionType) bool {
	o, ok := other.(*VariableShapeTensorType)
	return ok && arrow.TypeEqual(t.Storage, o.Storage) && t.ndim == o.ndim && slices.Equal(t.dimNames, o.dimNames) &&
		slices.Equal(t.permutation, o.permutation) && slices.Equal(t.uniformShape, o.uniformShape)
}

// String reads like extension<arrow.variable_shape_tensor[value_type=float32, ndim=2]>.
func (t *VariableShapeTensorType) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "extension<%s[value_type=%s, ndim=%d", VariableShapeTensorName, t.ValueType(), t.ndim)
	if t.dimNames != nil {
		fmt.Fprintf(&b, ", dim_names=%v", t.dimNames)
	}
	if t.permutation != nil {
		fmt.Fprintf(&b, ", permutation=%v", t.permutation)
	}
	if t.uniformShape != nil {
		fmt.Fprintf(&b, ", uniform_shape=%v", t.uniformShape)
	}
	b.WriteString("]>")
	return b.String()
}

// Tensor returns element i as a tensor of its logical shape (its physical shape permuted),
// over the array's memory as FromArray's tensors are (bools and nulls copied, as the options
// allow). Every value the element is read from is untrusted: a null element (ErrNulls), a
// negative dimension, a shape that disagrees with uniform_shape or whose product is not the
// element's number of values, or offsets outside the data, are refused with ErrMalformed.
func (a *VariableShapeTensorArray) Tensor(i int, opts ...adapters.Option) (*core.Tensor, error) {
	vt := a.ExtensionType().(*VariableShapeTensorType)
	if i < 0 || i >= a.Len() {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor element %d of an array of %d", i, a.Len())
	}
	if a.IsNull(i) {
		return nil, errs.Errorf(ErrNulls, "arrowx: variable_shape_tensor element %d is null", i)
	}
	st := a.Storage().Data()
	if len(st.Children()) != 2 {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor storage with %d children", len(st.Children()))
	}
	sti := st.(*array.Data)
	dataIdx, shapeIdx := vt.dataIdx, vt.shapeIdx
	row := int64(st.Offset()) + int64(i)
	shape, err := elementShape(sti.Children()[shapeIdx], row, vt)
	if err != nil {
		return nil, fmt.Errorf("arrowx: variable_shape_tensor element %d: %w", i, err)
	}
	start, end, err := listBounds(sti.Children()[dataIdx], row)
	if err != nil {
		return nil, fmt.Errorf("arrowx: variable_shape_tensor element %d: %w", i, err)
	}
	n := int64(1)
	for _, d := range shape {
		n *= d // each ≤ 2^31-1 and their product checked by elementShape
	}
	if n != end-start {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor element %d has shape %v (%d elements) and %d values", i, shape, n, end-start)
	}
	values := sti.Children()[dataIdx].Children()
	if len(values) != 1 {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor data without its values")
	}
	if end > int64(values[0].Len()) {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor element %d ends at value %d of %d", i, end, values[0].Len())
	}
	if n == 0 {
		dt, _ := FromDType(vt.ValueType())
		return core.New(dt, logical(shape, vt.permutation)...)
	}
	slice := array.NewSliceData(values[0], start, end)
	defer slice.Release()
	flat, err := fromData(slice, opts...)
	if err != nil {
		return nil, fmt.Errorf("arrowx: variable_shape_tensor element %d: %w", i, err)
	}
	defer flat.Release()
	t, err := flat.Reshape(shape...)
	if err != nil || vt.permutation == nil {
		return t, err
	}
	defer t.Release()
	return t.Permute(vt.permutation...)
}

// logical permutes a physical shape.
func logical(shape []int64, perm []int) []int64 {
	if perm == nil {
		return shape
	}
	out := make([]int64, len(shape))
	for i, p := range perm {
		out[i] = shape[p]
	}
	return out
}

// elementShape reads the physical shape of row from the shape column, checking it.
func elementShape(d arrow.ArrayData, row int64, vt *VariableShapeTensorType) ([]int64, error) {
	if d.NullN() != 0 {
		bm := d.Buffers()[0]
		at := int64(d.Offset()) + row
		if bm == nil || int64(bm.Len())*8 <= at || !bitutil.BitIsSet(bm.Bytes(), int(at)) {
			return nil, errs.Errorf(ErrMalformed, "its shape is null")
		}
	}
	kids := d.Children()
	if len(kids) != 1 {
		return nil, errs.Errorf(ErrMalformed, "the shape column has %d children", len(kids))
	}
	v := kids[0]
	bs := v.Buffers()
	first := (int64(d.Offset())+row)*int64(vt.ndim) + int64(v.Offset())
	if len(bs) < 2 || bs[1] == nil || int64(bs[1].Len())/4 < first+int64(vt.ndim) || v.NullN() != 0 {
		return nil, errs.Errorf(ErrMalformed, "the shape column's values are short or null")
	}
	shape := make([]int64, vt.ndim)
	size := int64(1)
	for k := range shape {
		s := int64(int32(binary.NativeEndian.Uint32(bs[1].Bytes()[(first+int64(k))*4:])))
		if s < 0 {
			return nil, errs.Errorf(ErrMalformed, "its shape has dimension %d", s)
		}
		if u := vt.uniformShape; u != nil && u[k] >= 0 && u[k] != s {
			return nil, errs.Errorf(ErrMalformed, "its physical dimension %d is %d, uniform_shape %v says %d", k, s, u, u[k])
		}
		var ok bool
		if size, ok = mulCheck(size, s); !ok {
			return nil, errs.Errorf(ErrMalformed, "its shape overflows")
		}
		shape[k] = s
	}
	return shape, nil
}

// listBounds reads the value range of row of a List column, checking the offsets.
func listBounds(d arrow.ArrayData, row int64) (int64, int64, error) {
	bs := d.Buffers()
	at := int64(d.Offset()) + row
	if len(bs) < 2 || bs[1] == nil || int64(bs[1].Len())/4 < at+2 {
		return 0, 0, errs.Errorf(ErrMalformed, "the data column's offsets are short")
	}
	b := bs[1].Bytes()
	start := int64(int32(binary.NativeEndian.Uint32(b[at*4:])))
	end := int64(int32(binary.NativeEndian.Uint32(b[(at+1)*4:])))
	if start < 0 || end < start {
		return 0, 0, errs.Errorf(ErrMalformed, "its data offsets are %d to %d", start, end)
	}
	return start, end, nil
}

// NewVariableShapeTensorArray makes an array of arrow.variable_shape_tensor of tensors, all
// of one dtype (with an Arrow primitive: see ToDType) and number of dimensions (1 or more),
// copying their elements, in C order, into one data buffer. dimNames and uniformShape (-1 where a dimension varies) are the type's and
// may be nil; every tensor must agree with uniformShape (ErrMismatch). Tensors of more than 2^31-1 elements together are refused (List offsets are
// int32).
func NewVariableShapeTensorArray(tensors []*core.Tensor, dimNames []string, uniformShape []int64) (*VariableShapeTensorArray, error) {
	if len(tensors) == 0 {
		return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: NewVariableShapeTensorArray of no tensors (the dtype comes from the first)")
	}
	for k, t := range tensors {
		if t == nil {
			return nil, errs.Errorf(core.ErrNil, "arrowx: NewVariableShapeTensorArray: tensor %d is nil", k)
		}
	}
	dt, ndim := tensors[0].DType(), tensors[0].Ndim()
	value, err := ToDType(dt)
	if err != nil {
		return nil, err
	}
	vt, err := NewVariableShapeTensorType(value, ndim, dimNames, nil, uniformShape)
	if err != nil {
		return nil, err
	}
	total := int64(0)
	offsets := make([]int32, 1, len(tensors)+1)
	shapes := make([]int32, 0, len(tensors)*ndim)
	for k, t := range tensors {
		if t.DType() != dt || t.Ndim() != ndim {
			return nil, errs.Errorf(ErrMismatch, "arrowx: NewVariableShapeTensorArray: tensor %d is %s of %d dimensions, tensor 0 %s of %d",
				k, t.DType(), t.Ndim(), dt, ndim)
		}
		for j, d := range t.Shape() {
			if d > math.MaxInt32 {
				return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: tensor %d has dimension %d over 2^31-1", k, d)
			}
			if u := uniformShape; u != nil && u[j] >= 0 && u[j] != d {
				return nil, errs.Errorf(ErrMismatch, "arrowx: tensor %d has shape %v, uniform_shape %v", k, t.Shape(), u)
			}
			shapes = append(shapes, int32(d))
		}
		if total += t.Len(); total > math.MaxInt32 {
			return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: NewVariableShapeTensorArray of more than 2^31-1 elements")
		}
		offsets = append(offsets, int32(total))
	}
	flat, err := core.New(dt, total)
	if err != nil {
		return nil, err
	}
	defer flat.Release()
	dst, err := flat.Bytes()
	if err != nil {
		return nil, err
	}
	at := 0
	for _, t := range tensors {
		c, err := memory.Contiguous(t)
		if err != nil {
			return nil, fmt.Errorf("arrowx: NewVariableShapeTensorArray: %w", err)
		}
		b, err := c.ReadOnlyBytes()
		if err == nil {
			at += copy(dst[at:], b)
		}
		c.Release()
		if err != nil {
			return nil, err
		}
	}
	values, err := ToArray(flat, adapters.AlwaysCopy())
	if err != nil {
		return nil, err
	}
	defer values.Release()
	st := vt.Storage.(*arrow.StructType)
	offBuf := amemory.NewBufferBytes(int32Bytes(offsets))
	list := array.NewData(st.Field(0).Type, len(tensors), []*amemory.Buffer{nil, offBuf}, []arrow.ArrayData{values.Data()}, 0, 0)
	defer list.Release()
	shapeVals := array.NewData(arrow.PrimitiveTypes.Int32, len(shapes), []*amemory.Buffer{nil, amemory.NewBufferBytes(int32Bytes(shapes))}, nil, 0, 0)
	defer shapeVals.Release()
	shapeCol := array.NewData(st.Field(1).Type, len(tensors), []*amemory.Buffer{nil}, []arrow.ArrayData{shapeVals}, 0, 0)
	defer shapeCol.Release()
	sd := array.NewData(st, len(tensors), []*amemory.Buffer{nil}, []arrow.ArrayData{list, shapeCol}, 0, 0)
	defer sd.Release()
	storage := array.MakeFromData(sd)
	defer storage.Release()
	return array.NewExtensionArrayWithStorage(vt, storage).(*VariableShapeTensorArray), nil
}

func int32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.NativeEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// makeArray is array.MakeFromData for data that may come from a producer arrow-go never checked
// (FromArrayData's): arrow-go's constructors slice each buffer by the length and offset the data
// claims and panic where a buffer is shorter (a child of a variable_shape_tensor's struct, say),
// which is refused here as ErrMalformed instead.
func makeArray(d arrow.ArrayData) (arr arrow.Array, err error) {
	defer func() {
		if p := recover(); p != nil {
			arr, err = nil, errs.Errorf(ErrMalformed, "arrowx: %s data whose buffers do not hold what its lengths and offsets claim: %v", d.DataType(), p)
		}
	}()
	return array.MakeFromData(d), nil
}

// fromVariableShape is FromArray of an arrow.variable_shape_tensor array whose elements all
// have one shape: the [N, logical shape...] tensor, over the data's values when the elements
// lie one after the other (as NewVariableShapeTensorArray and other writers lay them out),
// else a copy. Elements of different shapes make no one tensor: they are refused with
// adapters.ErrUnsupported (take them one by one with VariableShapeTensorArray.Tensor).
func fromVariableShape(vt *VariableShapeTensorType, d arrow.ArrayData, opts []adapters.Option) (*core.Tensor, error) {
	made, err := makeArray(d)
	if err != nil {
		return nil, err
	}
	arr, ok := made.(*VariableShapeTensorArray)
	if !ok {
		made.Release()
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor data is no VariableShapeTensorArray")
	}
	defer arr.Release()
	n := int64(arr.Len())
	dt, err := FromDType(vt.ValueType())
	if err != nil {
		return nil, err
	}
	st := arr.Storage().Data()
	if len(st.Children()) != 2 {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor storage with %d children", len(st.Children()))
	}
	dataIdx, shapeIdx := vt.dataIdx, vt.shapeIdx
	dataCol, shapeCol := st.Children()[dataIdx], st.Children()[shapeIdx]
	var shape []int64
	var first, next int64
	adjacent := true
	for i := range n {
		if arr.IsNull(int(i)) {
			return nil, errs.Errorf(ErrNulls, "arrowx: variable_shape_tensor element %d is null", i)
		}
		row := int64(st.Offset()) + i
		s, err := elementShape(shapeCol, row, vt)
		if err != nil {
			return nil, fmt.Errorf("arrowx: variable_shape_tensor element %d: %w", i, err)
		}
		start, end, err := listBounds(dataCol, row)
		if err != nil {
			return nil, fmt.Errorf("arrowx: variable_shape_tensor element %d: %w", i, err)
		}
		if i == 0 {
			shape, first = s, start
		} else if !slices.Equal(s, shape) {
			return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: variable_shape_tensor element %d has shape %v, element 0 %v: "+
				"one tensor has one shape (take the elements with VariableShapeTensorArray.Tensor)", i, logical(s, vt.permutation), logical(shape, vt.permutation))
		} else if start != next {
			adjacent = false
		}
		next = end
	}
	if n == 0 {
		shape = make([]int64, vt.ndim)
		for k := range shape {
			shape[k] = max(0, vt.uniformShape0(k))
		}
		return core.New(dt, append([]int64{0}, logical(shape, vt.permutation)...)...)
	}
	size := int64(1)
	for _, x := range shape {
		size *= x // elementShape checked the product
	}
	if !adjacent {
		o := adapters.Apply(opts...)
		if _, err := o.Choose(false, "arrowx: the variable_shape_tensor elements do not lie one after the other"); err != nil {
			return nil, err
		}
		return gatherElements(arr, dt, n, logical(shape, vt.permutation), o, opts)
	}
	if next-first != n*size {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor of %d elements of shape %v spans %d values", n, shape, next-first)
	}
	values := dataCol.Children()
	if len(values) != 1 || next > int64(values[0].Len()) {
		return nil, errs.Errorf(ErrMalformed, "arrowx: variable_shape_tensor data ends at value %d, past its values", next)
	}
	slice := array.NewSliceData(values[0], first, next)
	defer slice.Release()
	flat, err := fromData(slice, opts...)
	if err != nil {
		return nil, fmt.Errorf("arrowx: variable_shape_tensor: %w", err)
	}
	defer flat.Release()
	t, err := flat.Reshape(append([]int64{n}, shape...)...)
	if err != nil || vt.permutation == nil {
		return t, err
	}
	defer t.Release()
	axes := make([]int, len(shape)+1)
	for i, p := range vt.permutation {
		axes[i+1] = p + 1
	}
	return t.Permute(axes...)
}

// uniformShape0 is uniform_shape's dimension k, or -1 where it varies or none is given.
func (t *VariableShapeTensorType) uniformShape0(k int) int64 {
	if t.uniformShape == nil {
		return -1
	}
	return t.uniformShape[k]
}

// gatherElements copies the elements of arr, of one logical shape, into one [n, shape...]
// tensor.
func gatherElements(arr *VariableShapeTensorArray, dt core.DLDataType, n int64, shape []int64, o adapters.Options, opts []adapters.Option) (*core.Tensor, error) {
	out, err := core.New(dt, append([]int64{n}, shape...)...)
	if err != nil {
		return nil, err
	}
	free := append(slices.Clip(opts), adapters.WithCopy(adapters.CopyIfNeeded))
	for i := range n {
		e, err := arr.Tensor(int(i), free...)
		if err != nil {
			out.Release()
			return nil, err
		}
		dst, err := out.Index(0, i)
		if err == nil {
			err = memory.Copy(dst, e)
			dst.Release()
		}
		e.Release()
		if err != nil {
			out.Release()
			return nil, wrapf(err, "variable_shape_tensor element %d", i)
		}
	}
	o.Report(true)
	return out.WithFlags(core.FlagIsCopied)
}
