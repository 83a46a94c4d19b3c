package parquetx

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// ColumnInfo describes a tensor column of a Parquet file, from the file's schema and footer
// alone: the tensor Read would give, without decoding it.
type ColumnInfo struct {
	// Name is the column's name, as Read takes it.
	Name string
	// DType is the tensor's element type.
	DType core.DLDataType
	// Shape is the tensor's shape, [rows, element shape...]: rows is the file's row count (every
	// row group), the element shape that of the column's type (none for a primitive column; the
	// logical shape, permutation applied, for arrow.fixed_shape_tensor).
	Shape []int64
	// Type is the column's Arrow type (arrowx.FixedShapeTensorType for a tensor extension
	// column).
	Type arrow.DataType
	// Permutation is an arrow.fixed_shape_tensor column's permutation (the tensor Read gives is
	// strided accordingly), nil for the identity and for other columns.
	Permutation []int
}

// Columns lists the columns of the Parquet file r that Read reads as tensors (primitive numeric
// and bool columns, arrow.bool8, FixedSizeList of them, nested for more dimensions, and
// arrow.fixed_shape_tensor), in schema order; other columns are left out. It reads the footer
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
	fr, err := file.NewParquetReader(struct{ parquet.ReaderAtSeeker }{r})
	if err != nil {
		return info, fmt.Errorf("parquetx: %w", err)
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return info, fmt.Errorf("parquetx: %w", err)
	}
	schema, err := ar.Schema()
	if err != nil {
		return info, fmt.Errorf("parquetx: %w", err)
	}
	schema = withBool8(fr, schema)
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
		if et, isTensor := f.Type.(*arrowx.FixedShapeTensorType); isTensor {
			c.DType, ok = elementType(et.ValueType())
			c.Shape = append(c.Shape, et.LogicalShape()...)
			c.Permutation = et.Permutation()
		} else {
			var elem []int64
			c.DType, elem, ok = listType(f.Type)
			c.Shape = append(c.Shape, elem...)
		}
		if ok {
			info.Columns = append(info.Columns, c)
		}
	}
	return info, nil
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
