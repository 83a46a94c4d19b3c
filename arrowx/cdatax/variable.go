package cdatax

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// ExportVariableShapeTensors hands a to a C consumer through the Arrow C Data Interface as an
// array of Arrow's canonical arrow.variable_shape_tensor (ARROW:extension:name and
// ARROW:extension:metadata on the schema), sharing a's buffers: make a with
// arrowx.NewVariableShapeTensorArray. The consumer must call both release callbacks; a's memory
// is held until it has (a may be released in Go at once). Structs that still hold a live
// export are refused with ErrLive. A sliced a (an offset) goes out with offset 0, its validity
// bitmap (if it has nulls) copied to start at the slice: see unsliced.
func ExportVariableShapeTensors(a *arrowx.VariableShapeTensorArray, out *cdata.CArrowArray, outSchema *cdata.CArrowSchema) error {
	if a == nil || out == nil || outSchema == nil {
		return errs.Errorf(core.ErrNil, "cdatax: ExportVariableShapeTensors of a nil array or into a nil ArrowArray or ArrowSchema")
	}
	if err := checkUnused(out, outSchema); err != nil {
		return err
	}
	if a.Data().Offset() != 0 {
		a = unsliced(a)
		defer a.Release()
	}
	pinBuffers(a.Data())
	cdata.ExportArrowArray(a, out, outSchema)
	return nil
}

// unsliced returns a sliced array as one of offset 0 over the same children, sliced (a new
// reference; the caller releases it). arrow-go's exporter writes a Struct's offset and also
// exports its children already sliced by it, where the C Data Interface applies a Struct's offset
// to its children too: a consumer would apply it twice (and ImportVariableShapeTensors refuses
// children shorter than offset + length). The children stay shared; only the validity bitmap,
// which no offset shifts without one, is copied (length/8 bytes), and only when it has nulls.
func unsliced(a *arrowx.VariableShapeTensorArray) *arrowx.VariableShapeTensorArray {
	st := a.Storage().(*array.Struct)
	kids := make([]arrow.ArrayData, st.NumField())
	for i := range kids {
		kids[i] = st.Field(i).Data()
	}
	var bitmap *memory.Buffer
	if st.NullN() > 0 {
		bitmap = memory.NewResizableBuffer(memory.DefaultAllocator)
		defer bitmap.Release()
		bitmap.Resize(int(bitutil.BytesForBits(int64(st.Len()))))
		bitutil.CopyBitmap(st.NullBitmapBytes(), st.Data().Offset(), st.Len(), bitmap.Bytes(), 0)
	}
	d := array.NewData(a.DataType(), st.Len(), []*memory.Buffer{bitmap}, kids, st.NullN(), 0)
	defer d.Release()
	return array.MakeFromData(d).(*arrowx.VariableShapeTensorArray)
}

// ImportVariableShapeTensors takes an array of arrow.variable_shape_tensor from a C producer
// through the Arrow C Data Interface, without copying: its Tensor(i) is element i as a tensor
// over the producer's memory. arr is moved and schema released as ImportArray does; the
// producer's release runs once the returned array (Release it) and every tensor taken from it
// are let go, or before an error returns. Every field is untrusted, as for ImportArray: the
// schema must name arrow.variable_shape_tensor with valid metadata over a Struct of "data" (a
// List of a primitive arrowx maps) and "shape" (a FixedSizeList<int32>), in that order or, the
// children named so, the other, and the lengths,
// offsets, buffers and children of every struct must fit that type (arrowx.ErrMalformed,
// adapters.ErrUnsupported, ErrReleased otherwise); the offsets and shapes of each element are
// checked when Tensor reads it.
func ImportVariableShapeTensors(arr *cdata.CArrowArray, schema *cdata.CArrowSchema) (*arrowx.VariableShapeTensorArray, error) {
	ca, cs := (*cArray)(unsafe.Pointer(arr)), (*cSchema)(unsafe.Pointer(schema))
	release := func() {
		if ca != nil && ca.release != nil {
			releaseArray(arr)
		}
		if cs != nil && cs.release != nil {
			releaseSchema(schema)
		}
	}
	if arr == nil || schema == nil {
		release()
		return nil, errs.Errorf(core.ErrNil, "cdatax: ImportVariableShapeTensors with a nil ArrowArray or ArrowSchema")
	}
	defer release()
	storage, err := checkVariable(ca, cs)
	if err != nil {
		return nil, err
	}
	name, meta, hasName, _, err := readMetadata(cs.metadata)
	if err != nil {
		return nil, err
	}
	if !hasName || name != arrowx.VariableShapeTensorName {
		return nil, fmt.Errorf("cdatax: ArrowSchema extension name %q (want %s): %w", name, arrowx.VariableShapeTensorName,
			adapters.ErrUnsupported)
	}
	ext, err := (&arrowx.VariableShapeTensorType{}).Deserialize(storage, meta)
	if err != nil {
		return nil, fmt.Errorf("cdatax: ArrowSchema metadata: %w", err)
	}
	if !guardArray(arr) {
		return nil, fmt.Errorf("cdatax: out of C memory importing a variable_shape_tensor array: %w", core.ErrTooLarge)
	}
	a, err := cdata.ImportCArrayWithType(arr, storage)
	if err != nil {
		return nil, fmt.Errorf("cdatax: importing a variable_shape_tensor array: %v: %w", err, arrowx.ErrMalformed)
	}
	defer a.Release()
	out := array.NewExtensionArrayWithStorage(ext.(arrow.ExtensionType), a)
	vt, ok := out.(*arrowx.VariableShapeTensorArray)
	if !ok {
		out.Release()
		return nil, fmt.Errorf("cdatax: arrow-go made a %T of a variable_shape_tensor: %w", out, adapters.ErrUnsupported)
	}
	return vt, nil
}

// checkVariable checks the struct trees of a variable_shape_tensor array and schema before
// arrow-go reads them: a Struct "+s" of a List "+l" of a primitive and a FixedSizeList
// "+w:N" of int32 "i", and returns the storage type.
func checkVariable(a *cArray, s *cSchema) (arrow.DataType, error) {
	if err := checkNode(a, s, 0, "+s", 1, 2); err != nil {
		return nil, err
	}
	sKids := unsafe.Slice(s.children, 2)
	aKids := unsafe.Slice(a.children, 2)
	for i := range 2 {
		if sKids[i] == nil || aKids[i] == nil {
			return nil, fmt.Errorf("cdatax: variable_shape_tensor children[%d] is NULL: %w", i, arrowx.ErrMalformed)
		}
	}
	// the fields are "data" then "shape", as the spec writes them, or, named so, the other way
	// round (the specification finds them by name)
	di, si := 0, 1
	// (a released child's fields mean nothing: its name is read only while it is live; checkNode
	// refuses a released one below)
	if sKids[0].release != nil && sKids[1].release != nil && sKids[0].name != nil && sKids[1].name != nil {
		n0, _ := cString(sKids[0].name, 64)
		n1, _ := cString(sKids[1].name, 64)
		if n0 == "shape" && n1 == "data" {
			di, si = 1, 0
		}
	}
	// sKids and aKids are the producer's memory: read in data, shape order through copies
	sk := [2]*cSchema{sKids[di], sKids[si]}
	ak := [2]*cArray{aKids[di], aKids[si]}
	if err := checkNode(ak[0], sk[0], 1, "+l", 2, 1); err != nil {
		return nil, err
	}
	if ak[0].length < a.offset+a.length {
		return nil, fmt.Errorf("cdatax: variable_shape_tensor data column of %d rows for offset %d + length %d: %w",
			ak[0].length, a.offset, a.length, arrowx.ErrMalformed)
	}
	if ak[0].length > 0 && unsafe.Slice(ak[0].buffers, 2)[1] == nil {
		return nil, fmt.Errorf("cdatax: variable_shape_tensor data offsets (buffers[1]) are NULL: %w", arrowx.ErrMalformed)
	}
	dataChildS, dataChildA := *sk[0].children, *ak[0].children
	if dataChildS == nil || dataChildA == nil {
		return nil, fmt.Errorf("cdatax: variable_shape_tensor data values are NULL: %w", arrowx.ErrMalformed)
	}
	value, _, _, err := checkSchema(dataChildS, 2)
	if err != nil {
		return nil, err
	}
	if value == nil || value.ID() == arrow.BOOL {
		return nil, fmt.Errorf("cdatax: variable_shape_tensor values are not a primitive arrowx maps: %w", adapters.ErrUnsupported)
	}
	if _, err := checkArray(dataChildA, 2, value, 0); err != nil {
		return nil, err
	}
	leaf, ndim, shapeChild, err := checkSchema(sk[1], 1)
	if err != nil {
		return nil, err
	}
	if leaf != nil || ndim < 1 || int(ndim) > core.MaxNdim-1 {
		return nil, fmt.Errorf("cdatax: variable_shape_tensor shape column is not a FixedSizeList of 1 to %d: %w",
			core.MaxNdim-1, arrowx.ErrMalformed)
	}
	shapeChildA, err := checkArray(ak[1], 1, nil, ndim)
	if err != nil {
		return nil, err
	}
	if ak[1].length < a.offset+a.length {
		return nil, fmt.Errorf("cdatax: variable_shape_tensor shape column of %d rows for offset %d + length %d: %w",
			ak[1].length, a.offset, a.length, arrowx.ErrMalformed)
	}
	i32, _, _, err := checkSchema(shapeChild, 2)
	if err != nil {
		return nil, err
	}
	if i32 == nil || i32.ID() != arrow.INT32 {
		return nil, fmt.Errorf("cdatax: variable_shape_tensor shape values are %v, not int32: %w", i32, arrowx.ErrMalformed)
	}
	if _, err := checkArray(shapeChildA, 2, i32, 0); err != nil {
		return nil, err
	}
	if want := (ak[1].offset + ak[1].length) * int64(ndim); shapeChildA.offset+shapeChildA.length < want {
		return nil, fmt.Errorf("cdatax: variable_shape_tensor shape values hold %d of %d: %w",
			shapeChildA.offset+shapeChildA.length, want, arrowx.ErrMalformed)
	}
	names := [2]string{"data", "shape"}
	fields := make([]arrow.Field, 2)
	types := []arrow.DataType{arrow.ListOf(value), arrow.FixedSizeListOf(ndim, arrow.PrimitiveTypes.Int32)}
	for i, at := range [2]int{di, si} { // in the producer's order
		fields[at] = arrow.Field{Name: names[i], Type: types[i], Nullable: true}
		if sk[i].name != nil {
			if n, ok := cString(sk[i].name, 64); ok {
				fields[at].Name = n
			}
		}
	}
	return arrow.StructOf(fields...), nil
}

// checkNode checks a struct or list node of a tree: not released, its format, no dictionary,
// lengths in range, and the buffers and children its type has.
func checkNode(a *cArray, s *cSchema, depth int, format string, buffers, children int64) error {
	at := where("ArrowSchema", depth)
	if s.release == nil || a.release == nil {
		return errs.Errorf(ErrReleased, "cdatax: %s or its ArrowArray has a NULL release callback (released already, or moved)", at)
	}
	if s.format == nil {
		return fmt.Errorf("cdatax: %s format is NULL: %w", at, arrowx.ErrMalformed)
	}
	if f, _ := cString(s.format, maxFormat); f != format {
		return fmt.Errorf("cdatax: %s format %q (a variable_shape_tensor has %q here): %w", at, f, format, adapters.ErrUnsupported)
	}
	bad := func(what string, args ...any) error {
		return fmt.Errorf("cdatax: %s %s: %w", where("ArrowArray", depth), fmt.Sprintf(what, args...), arrowx.ErrMalformed)
	}
	switch {
	case s.dictionary != nil || a.dictionary != nil:
		return fmt.Errorf("cdatax: %s is dictionary-encoded: %w", at, adapters.ErrUnsupported)
	case s.nChildren != children || a.nChildren != children:
		return bad("n_children is %d (schema %d), format %q has %d", a.nChildren, s.nChildren, format, children)
	case s.children == nil || a.children == nil:
		return bad("children is NULL")
	case a.length < 0 || a.offset < 0 || a.offset > math.MaxInt32-a.length:
		return bad("length %d, offset %d out of range", a.length, a.offset)
	case a.nullCount < -1 || a.nullCount > a.length:
		return bad("null_count %d is outside [-1, length %d]", a.nullCount, a.length)
	case a.nBuffers != buffers || a.buffers == nil:
		return bad("n_buffers is %d, a %q array has %d", a.nBuffers, format, buffers)
	case a.nullCount > 0 && unsafe.Slice(a.buffers, buffers)[0] == nil:
		return bad("null_count is %d, with no validity bitmap", a.nullCount)
	}
	return nil
}
