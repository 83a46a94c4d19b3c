package arrowx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// FixedShapeTensorName is the extension name of Arrow's canonical fixed shape tensor type.
const FixedShapeTensorName = "arrow.fixed_shape_tensor"

// FixedShapeTensorType is Arrow's canonical extension type arrow.fixed_shape_tensor: every
// element of an array of it is a tensor of one shape, stored as a FixedSizeList of the product
// of that shape's dimensions, in row-major (C) order. Its metadata, serialised as JSON in
// ARROW:extension:metadata, holds the physical shape of the tensors and, optionally, names of
// their dimensions and a permutation: logical dimension i is physical dimension Permutation[i],
// so that a tensor stored in one order can be read in another without a copy.
//
// Importing this package registers the type with arrow-go (arrow.RegisterExtensionType), so
// that arrow-go's IPC, Flight and C Data readers yield arrays of it as *FixedShapeTensorArray.
// FromArray converts such an array of N tensors into one tensor of shape [N, logical shape...]
// and ToFixedShapeTensor makes one of a tensor.
type FixedShapeTensorType struct {
	arrow.ExtensionBase
	shape       []int64
	dimNames    []string
	permutation []int
}

// FixedShapeTensorArray is an array of arrow.fixed_shape_tensor: its Storage is the
// FixedSizeList of the tensors' elements.
type FixedShapeTensorArray struct {
	array.ExtensionArrayBase
}

// fixedShapeMeta is the JSON form of the metadata, as the specification writes it.
type fixedShapeMeta struct {
	Shape       []int64  `json:"shape"`
	DimNames    []string `json:"dim_names,omitempty"`
	Permutation []int    `json:"permutation,omitempty"`
}

func init() {
	proto := &FixedShapeTensorType{ExtensionBase: arrow.ExtensionBase{
		Storage: arrow.FixedSizeListOf(1, arrow.PrimitiveTypes.Float32)}, shape: []int64{1}}
	// the registry is keyed by name and only the prototype's Deserialize is used; a program that
	// registered another implementation first keeps it
	_ = arrow.RegisterExtensionType(proto)
}

// NewFixedShapeTensorType returns the arrow.fixed_shape_tensor type of tensors of the given
// physical shape and element type (a primitive Arrow type: see ToDType), with optional
// dimension names (one per dimension, or none) and permutation (a permutation of 0..ndim-1, or
// none). Shapes with a dimension of 0 are refused: arrow-go has no FixedSizeList of size 0.
func NewFixedShapeTensorType(value arrow.DataType, shape []int64, dimNames []string, permutation []int) (*FixedShapeTensorType, error) {
	if value == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: fixed_shape_tensor without an element type")
	}
	if _, err := FromDType(value); err != nil {
		return nil, wrapf(err, "fixed_shape_tensor of %s", typeString(value))
	}
	size, err := checkTensorMeta(shape, dimNames, permutation)
	if err != nil {
		return nil, err
	}
	return &FixedShapeTensorType{
		ExtensionBase: arrow.ExtensionBase{Storage: arrow.FixedSizeListOf(int32(size), value)},
		shape:         slices.Clone(shape), dimNames: slices.Clone(dimNames), permutation: slices.Clone(permutation),
	}, nil
}

// checkTensorMeta checks a fixed shape tensor's metadata as untrusted input and returns the
// number of elements of one tensor.
func checkTensorMeta(shape []int64, dimNames []string, permutation []int) (int64, error) {
	if len(shape) > core.MaxNdim-1 {
		return 0, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor shape %v has %d dimensions, at most %d fit a tensor with its array's",
			shape, len(shape), core.MaxNdim-1)
	}
	size := int64(1)
	for _, d := range shape {
		if d <= 0 {
			return 0, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor shape %v has dimension %d (dimensions are 1 or more here)", shape, d)
		}
		var ok bool
		if size, ok = mulCheck(size, d); !ok || size > math.MaxInt32 {
			return 0, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor shape %v has more than 2^31-1 elements", shape)
		}
	}
	if dimNames != nil && len(dimNames) != len(shape) {
		return 0, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor has %d dim_names for shape %v", len(dimNames), shape)
	}
	if permutation != nil {
		if len(permutation) != len(shape) {
			return 0, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor permutation %v for shape %v", permutation, shape)
		}
		seen := make([]bool, len(shape))
		for _, p := range permutation {
			if p < 0 || p >= len(shape) || seen[p] {
				return 0, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor permutation %v is not a permutation of 0..%d", permutation, len(shape)-1)
			}
			seen[p] = true
		}
	}
	return size, nil
}

// ArrayType is the Go type of arrays of t, for arrow-go.
func (*FixedShapeTensorType) ArrayType() reflect.Type { return reflect.TypeOf(FixedShapeTensorArray{}) }

// ExtensionName is "arrow.fixed_shape_tensor".
func (*FixedShapeTensorType) ExtensionName() string { return FixedShapeTensorName }

// Shape is the physical shape of each tensor (C order in the storage).
func (t *FixedShapeTensorType) Shape() []int64 { return slices.Clone(t.shape) }

// DimNames are the dimensions' names, or nil.
func (t *FixedShapeTensorType) DimNames() []string { return slices.Clone(t.dimNames) }

// Permutation is the permutation from physical to logical dimensions, or nil (the identity).
func (t *FixedShapeTensorType) Permutation() []int { return slices.Clone(t.permutation) }

// LogicalShape is the shape of each tensor as FromArray gives it: Shape permuted.
func (t *FixedShapeTensorType) LogicalShape() []int64 {
	if t.permutation == nil {
		return t.Shape()
	}
	out := make([]int64, len(t.shape))
	for i, p := range t.permutation {
		out[i] = t.shape[p]
	}
	return out
}

// ValueType is the Arrow type of the elements.
// A type not made by NewFixedShapeTensorType or Deserialize (the zero value) has none: nil.
func (t *FixedShapeTensorType) ValueType() arrow.DataType {
	if fsl, ok := t.Storage.(*arrow.FixedSizeListType); ok {
		return fsl.Elem()
	}
	return nil
}

// Serialize is the JSON metadata: {"shape":[...]} with "dim_names" and "permutation" when set.
func (t *FixedShapeTensorType) Serialize() string {
	shape := t.shape
	if shape == nil {
		shape = []int64{}
	}
	b, _ := json.Marshal(fixedShapeMeta{Shape: shape, DimNames: t.dimNames, Permutation: t.permutation})
	return string(b)
}

// Deserialize makes the type of an array read from IPC, Flight, Parquet or the C Data
// Interface, checking storage and metadata as untrusted input (ErrMalformed): the storage must
// be a FixedSizeList of a primitive type (its child may have any name and be nullable or not,
// as Arrow's specification allows: arrow-go and pyarrow write a nullable "item", arrow-rs a
// non-nullable one) whose size is the product of the shape, and the names and permutation must
// fit the shape. The type keeps the storage it was given, child field and all, so that a
// reader comparing it with the stored schema (arrow-go's Parquet reader does) finds it equal
// and a file written again stores the same schema.
func (*FixedShapeTensorType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	fsl, ok := storage.(*arrow.FixedSizeListType)
	if !ok {
		return nil, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor stored as %s, not a FixedSizeList", typeString(storage))
	}
	if fsl.Elem() == nil {
		return nil, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor stored as a FixedSizeList without an element type")
	}
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	var m fixedShapeMeta
	if err := dec.Decode(&m); err != nil {
		return nil, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor metadata %.200q: %v", data, err)
	}
	if m.Shape == nil {
		return nil, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor metadata %.200q has no shape", data)
	}
	if dec.More() {
		return nil, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor metadata %.200q has data after its object", data)
	}
	t, err := NewFixedShapeTensorType(fsl.Elem(), m.Shape, m.DimNames, m.Permutation)
	if err != nil {
		return nil, err
	}
	if got, want := fsl.Len(), t.Storage.(*arrow.FixedSizeListType).Len(); got != want {
		return nil, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor of shape %v stored as FixedSizeList<%d>, not <%d> (the product of the shape)",
			m.Shape, got, want)
	}
	t.Storage = storage // the producer's child field: its name, nullability and metadata
	return t, nil
}

// ExtensionEquals reports whether other is a fixed shape tensor type of the same element
// type, shape, names and permutation.
func (t *FixedShapeTensorType) ExtensionEquals(other arrow.ExtensionType) bool {
	o, ok := other.(*FixedShapeTensorType)
	return ok && arrow.TypeEqual(t.Storage, o.Storage) && slices.Equal(t.shape, o.shape) &&
		slices.Equal(t.dimNames, o.dimNames) && slices.Equal(t.permutation, o.permutation)
}

// String reads like extension<arrow.fixed_shape_tensor[value_type=float32, shape=[2 3]]>.
func (t *FixedShapeTensorType) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "extension<%s[value_type=%s, shape=%v", FixedShapeTensorName, t.ValueType(), t.shape)
	if t.dimNames != nil {
		fmt.Fprintf(&b, ", dim_names=%v", t.dimNames)
	}
	if t.permutation != nil {
		fmt.Fprintf(&b, ", permutation=%v", t.permutation)
	}
	b.WriteString("]>")
	return b.String()
}

// fromFixedShape converts the data of an array of fixed shape tensors: its storage as a
// [N, size] tensor, viewed as [N, physical shape...] and permuted into the logical order.
func fromFixedShape(ft *FixedShapeTensorType, d arrow.ArrayData, opts []adapters.Option) (*core.Tensor, error) {
	storage := array.NewData(ft.Storage, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
	defer storage.Release()
	flat, err := fromData(storage, opts...)
	if err != nil {
		return nil, err
	}
	defer flat.Release()
	if flat.Ndim() != 2 {
		return nil, errs.Errorf(ErrMalformed, "arrowx: fixed_shape_tensor of %s: its elements are lists", ft.ValueType())
	}
	n := flat.Dim(0)
	phys := append([]int64{n}, ft.shape...)
	t, err := flat.Reshape(phys...)
	if err != nil {
		return nil, wrapf(err, "fixed_shape_tensor of shape %v", ft.shape)
	}
	if ft.permutation == nil {
		return t, nil
	}
	axes := make([]int, len(phys))
	for i, p := range ft.permutation {
		axes[i+1] = p + 1
	}
	defer t.Release()
	return t.Permute(axes...)
}

// ToFixedShapeTensor makes an array of arrow.fixed_shape_tensor of t: t.Shape()[0] tensors of
// shape t.Shape()[1:] (a 1-D t gives 0-d tensors). The array shares t's memory when t's
// elements lie in C order (the type then has no permutation) or in C order of a permutation of
// its inner dimensions (a transposed batch of matrices, say: the type's shape is then the
// physical one, and its permutation gives t's order back, as the specification intends);
// otherwise it copies t once into C order, as the adapters options allow. bool tensors are
// always copied (Arrow packs bits); dtypes without an Arrow primitive (bfloat16, complex,
// float8) are refused with adapters.ErrUnsupported, as are 0-d tensors and inner dimensions of
// size 0. The array holds t's memory as ToArray's does.
func ToFixedShapeTensor(t *core.Tensor, opts ...adapters.Option) (arrow.Array, error) {
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: ToFixedShapeTensor of a nil tensor")
	}
	h, err := core.Hold(t)
	if err != nil {
		return nil, wrapf(err, "ToFixedShapeTensor")
	}
	defer h.Release()
	if t.Ndim() == 0 {
		return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: ToFixedShapeTensor of a 0-d tensor (an array needs a first dimension: reshape it to [1])")
	}
	value, err := ToDType(t.DType())
	if err != nil {
		return nil, err
	}
	shape := t.Shape()
	o := adapters.Apply(opts...)
	// the physical order: inner axes by decreasing stride, when that makes t C-contiguous
	order := innerOrder(t)
	src, err := t.Permute(order...)
	if err != nil {
		return nil, wrapf(err, "ToFixedShapeTensor of %s", t)
	}
	defer func() { src.Release() }()
	copied := false
	if !src.IsContiguous() {
		why := fmt.Sprintf("arrowx: strides %v for shape %v are not C order of any order of the inner dimensions", t.Strides(), shape)
		if _, err := o.Choose(false, why); err != nil {
			return nil, err
		}
		c, err := memory.Contiguous(t)
		if err != nil {
			return nil, wrapf(err, "ToFixedShapeTensor")
		}
		src.Release()
		src, order, copied = c, identity(len(shape)), true
	}
	var perm []int
	if !slices.Equal(order, identity(len(shape))) {
		perm = make([]int, len(shape)-1) // logical dimension i is physical dimension perm[i]
		for phys, logical := range order[1:] {
			perm[logical-1] = phys
		}
	}
	phys := make([]int64, len(shape)-1)
	for i, a := range order[1:] {
		phys[i] = shape[a]
	}
	ft, err := NewFixedShapeTensorType(value, phys, nil, perm)
	if err != nil {
		return nil, errs.Errorf(adapters.ErrUnsupported, "%w (ToFixedShapeTensor of %s)", err, t)
	}
	size := int64(ft.Storage.(*arrow.FixedSizeListType).Len())
	flat, err := src.Reshape(shape[0], size)
	if err != nil {
		return nil, wrapf(err, "ToFixedShapeTensor of %s", t)
	}
	defer flat.Release()
	var again bool
	toOpts := append(slices.Clip(opts), adapters.ReportCopy(&again))
	if copied { // src is the copy already: AlwaysCopy must not copy it a second time
		toOpts = append(toOpts, adapters.WithCopy(adapters.CopyIfNeeded))
	}
	storage, err := ToArray(flat, toOpts...)
	if err != nil {
		return nil, err
	}
	defer storage.Release()
	o.Report(copied || again)
	return array.NewExtensionArrayWithStorage(ft, storage), nil
}

// innerOrder is the order of t's axes with the first kept first and the inner ones sorted by
// decreasing stride: the order in which t's elements lie in memory when it lies in any order of
// C. A dimension of size 1 has no stride that matters, and a comparator that called it equal to
// every other would not be a strict weak order (a sort may then leave the others unsorted): the
// inner axes of size 1 keep their places, and the others are sorted (stably) into the remaining
// places.
func innerOrder(t *core.Tensor) []int {
	order := identity(t.Ndim())
	st := t.Strides()
	var moving []int
	for _, a := range order[1:] {
		if t.Dim(a) != 1 {
			moving = append(moving, a)
		}
	}
	sort.SliceStable(moving, func(i, j int) bool { return st[moving[i]] > st[moving[j]] })
	k := 0
	for i := 1; i < len(order); i++ {
		if t.Dim(order[i]) != 1 {
			order[i] = moving[k]
			k++
		}
	}
	return order
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
