package parquetx

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// ColumnInfo describes a tensor column of a Parquet file, from the file's schema and footer
// alone: the tensor Read would give, or for a variable-shape column what the tensors
// ReadTensors would give share, without decoding it.
type ColumnInfo struct {
	// Name is the column's name, as Read takes it.
	Name string
	// DType is the tensor's element type.
	DType core.DLDataType
	// Shape is the tensor's shape, [rows, element shape...]: rows is the file's row count (every
	// row group), the element shape that of the column's type (none for a primitive column; the
	// logical shape, permutation applied, for arrow.fixed_shape_tensor; none for
	// arrow.variable_shape_tensor, whose rows differ: see VariableShape).
	Shape []int64
	// Type is the column's Arrow type (arrowx.FixedShapeTensorType or
	// arrowx.VariableShapeTensorType for a tensor extension column).
	Type arrow.DataType
	// Permutation is an arrow.fixed_shape_tensor column's permutation (the tensor Read gives is
	// strided accordingly), or an arrow.variable_shape_tensor column's (each row's tensor is),
	// nil for the identity and for other columns.
	Permutation []int

	// VariableShape reports an arrow.variable_shape_tensor column (arrowx.VariableShapeTensorType):
	// one tensor per row, all of DType and of Ndim dimensions, each of a shape of its own, which
	// the footer does not hold (ReadTensors reads the rows). Shape is then [rows] alone, and
	// UniformShape says which dimensions the rows share. False for every other column.
	VariableShape bool
	// Ndim is the number of dimensions of each row's tensor: len(Shape)-1 for a column of one
	// tensor, the type's ndim for a variable-shape column.
	Ndim int
	// UniformShape is, for a variable-shape column, the dimensions every row's tensor shares, in
	// the order of the tensors ReadTensors gives (the type's uniform_shape, its permutation
	// applied), -1 for a dimension that differs between rows; nil when the type gives none, and
	// for other columns.
	UniformShape []int64
	// DimNames is a variable-shape column's dim_names as its type stores them (one for each
	// physical dimension, as the Arrow specification has them), nil when it gives none and for
	// other columns.
	DimNames []string
}

// Columns lists the columns of the Parquet file r that Read reads as tensors (primitive numeric
// and bool columns, arrow.bool8, FixedSizeList of them, nested for more dimensions, and
// arrow.fixed_shape_tensor) and those ReadTensors reads as a tensor per row
// (arrow.variable_shape_tensor, marked ColumnInfo.VariableShape), in schema order; other
// columns are left out. It reads the footer
// only, and leaves r open (an *os.File too). A malformed file gets an error (wrapping
// arrowx.ErrMalformed where arrow-go's reader panics), never a panic.
func Columns(r parquet.ReaderAtSeeker) ([]ColumnInfo, error) {
	info, err := Describe(r)
	if err != nil {
		return nil, err
	}
	return info.Columns, nil
}

// FileInfo is what the footer of a Parquet file says about its tensors.
type FileInfo struct {
	// Columns are the tensor columns, as Columns lists them.
	Columns []ColumnInfo
	// RowGroups is the number of rows of each row group, in file order (RowGroups takes their
	// indices).
	RowGroups []int64
}

// Describe reads the footer of the Parquet file r once and returns its tensor columns and the
// size of each row group, leaving r open. Errors as in Columns.
func Describe(r parquet.ReaderAtSeeker) (info FileInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			info, err = FileInfo{}, errs.Errorf(arrowx.ErrMalformed, "parquetx: malformed file: %v", p)
		}
	}()
	// arrow-go's reader closes a source that is an io.Closer: hand it only the reading
	if err := verifyFooter(r); err != nil {
		return info, err
	}
	fr, err := file.NewParquetReader(struct{ parquet.ReaderAtSeeker }{r})
	if err != nil {
		return info, fmt.Errorf("parquetx: %w", err)
	}
	defer fr.Close()
	ar, nested, err := arrowReader(fr, pqarrow.ArrowReadProperties{})
	if err != nil {
		return info, err
	}
	schema, err := ar.Schema()
	if err != nil {
		return info, fmt.Errorf("parquetx: %w", err)
	}
	schema = nested.apply(withBool8(fr, schema))
	rows := fr.NumRows()
	if rows < 0 {
		return info, errs.Errorf(arrowx.ErrMalformed, "parquetx: malformed file: %d rows", rows)
	}
	for g := range fr.NumRowGroups() {
		n := fr.MetaData().RowGroup(g).NumRows()
		if n < 0 {
			return FileInfo{}, errs.Errorf(arrowx.ErrMalformed, "parquetx: malformed file: row group %d has %d rows", g, n)
		}
		info.RowGroups = append(info.RowGroups, n)
	}
	for _, f := range schema.Fields() {
		c := ColumnInfo{Name: f.Name, Type: f.Type, Shape: []int64{rows}}
		var ok bool
		switch et := f.Type.(type) {
		case *arrowx.FixedShapeTensorType:
			c.DType, ok = elementType(et.ValueType())
			c.Shape = append(c.Shape, et.LogicalShape()...)
			c.Permutation = et.Permutation()
		case *arrowx.VariableShapeTensorType:
			c.DType, ok = elementType(et.ValueType())
			c.VariableShape, c.Ndim = true, et.Ndim()
			c.Permutation, c.DimNames = et.Permutation(), et.DimNames()
			c.UniformShape = logicalShape(et.UniformShape(), c.Permutation)
		default:
			var elem []int64
			c.DType, elem, ok = listType(f.Type)
			c.Shape = append(c.Shape, elem...)
		}
		if !c.VariableShape {
			c.Ndim = len(c.Shape) - 1
		}
		if ok {
			info.Columns = append(info.Columns, c)
		}
	}
	return info, nil
}

// logicalShape is a physical shape permuted: logical dimension i is physical dimension
// perm[i] (arrowx checked perm against the shape's length). nil stays nil.
func logicalShape(shape []int64, perm []int) []int64 {
	if shape == nil || perm == nil {
		return shape
	}
	out := make([]int64, len(perm))
	for i, p := range perm {
		out[i] = shape[p]
	}
	return out
}

// listType is the element type and shape of a primitive column or a FixedSizeList of them.
func listType(dt arrow.DataType) (core.DLDataType, []int64, bool) {
	var shape []int64
	for {
		l, ok := dt.(*arrow.FixedSizeListType)
		if !ok {
			break
		}
		shape = append(shape, int64(l.Len()))
		dt = l.Elem()
	}
	d, ok := elementType(dt)
	return d, shape, ok
}

func elementType(dt arrow.DataType) (core.DLDataType, bool) {
	d, err := arrowx.FromDType(dt)
	return d, err == nil
}
