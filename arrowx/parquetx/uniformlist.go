package parquetx

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// uniformLists returns the chunks of a column with each List or LargeList chunk whose rows all
// have one length n, and no null rows, as a FixedSizeList<T>[n] over the same values (no copy):
// how DuckDB's ARRAY columns (FLOAT[n]), and lists of equal-length arrays from other writers,
// come out of Parquet, which has no fixed-size list. Other chunks pass as they are. A list whose
// rows differ in length, or that has null rows, is refused with ErrColumn. Release the
// returned arrays.
func uniformLists(parts []arrow.Array, column string) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(parts))
	release := func() {
		for _, a := range out {
			a.Release()
		}
	}
	for _, p := range parts {
		a, err := uniformList(p, column)
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func uniformList(p arrow.Array, column string) (arrow.Array, error) {
	var (
		offsets func(i int) int64
		elem    arrow.Field
		values  arrow.Array
	)
	switch l := p.(type) {
	case *array.List:
		off := l.Offsets()
		offsets, elem, values = func(i int) int64 { return int64(off[i]) }, l.DataType().(*arrow.ListType).ElemField(), l.ListValues()
	case *array.LargeList:
		off := l.Offsets()
		offsets, elem, values = func(i int) int64 { return off[i] }, l.DataType().(*arrow.LargeListType).ElemField(), l.ListValues()
	default:
		p.Retain()
		return p, nil
	}
	rows := p.Len()
	if rows == 0 {
		p.Retain()
		return p, nil
	}
	if p.NullN() > 0 {
		return nil, errs.Errorf(ErrColumn, "parquetx: column %q is a list with %d null rows of %d: a tensor needs every row", column, p.NullN(), rows)
	}
	start, n := offsets(0), offsets(1)-offsets(0)
	for i := 1; i < rows; i++ {
		if got := offsets(i+1) - offsets(i); got != n {
			return nil, errs.Errorf(ErrColumn, "parquetx: column %q is a list whose rows differ in length (row 0 has %d values, row %d %d): a tensor needs one length", column, n, i, got)
		}
	}
	end := offsets(rows)
	if start < 0 || n < 0 || n > 1<<31-1 || end > int64(values.Len()) || end < start {
		return nil, errs.Errorf(arrowx.ErrMalformed, "parquetx: column %q: list offsets %d..%d outside its %d values", column, start, end, values.Len())
	}
	child := array.NewSlice(values, start, end)
	defer child.Release()
	d := array.NewData(arrow.FixedSizeListOfField(int32(n), elem), rows, []*memory.Buffer{nil}, []arrow.ArrayData{child.Data()}, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}
