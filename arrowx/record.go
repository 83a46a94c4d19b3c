package arrowx

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// ShareableAsRecord reports whether ToRecord can share t's memory, and if not, why: t must be a
// 2-D host tensor of a byte-wide Arrow primitive dtype whose columns are each compact (row
// stride 1, as in Fortran order or a column slice of it).
func ShareableAsRecord(t *core.Tensor) (ok bool, why string) {
	if why := hostWhy(t); why != "" {
		return false, why
	}
	switch {
	case t.Ndim() != 2:
		return false, fmt.Sprintf("a record batch is 2-D, the tensor %d-D", t.Ndim())
	case t.DType() == core.Bool:
		return false, "Arrow booleans are bit-packed"
	case t.Dim(0) > 1 && t.Stride(0) != 1:
		return false, fmt.Sprintf("columns are not compact: row stride %d", t.Stride(0))
	case t.Dim(1) > 1 && t.Stride(1) < 0:
		return false, "columns are in reverse order"
	}
	if _, err := ToDType(t.DType()); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// ToRecord makes a record batch of a 2-D tensor [rows, columns], column j being t[:, j], named
// names[j] (or "0", "1", ... when names is nil). A ShareableAsRecord tensor (Fortran order) is
// shared: each column is a primitive array over its own elements, and the arrays hold the
// memory (core.Attach). Other layouts are copied once into Fortran order, booleans into
// bit-packed columns. FromRecord of the result is a view again. The caller releases the batch.
func ToRecord(t *core.Tensor, names []string, opts ...adapters.Option) (arrow.RecordBatch, error) {
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: ToRecord of a nil tensor")
	}
	h, err := core.Hold(t)
	if err != nil {
		return nil, wrapf(err, "ToRecord")
	}
	defer h.Release()
	if !t.HostAccessible() {
		return nil, fmt.Errorf("arrowx: ToRecord of %s: %w", t, core.ErrNotHost)
	}
	if t.Ndim() != 2 {
		return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: ToRecord of a %d-D tensor", t.Ndim())
	}
	adt, err := ToDType(t.DType())
	if err != nil {
		return nil, err
	}
	rows, cols := t.Dim(0), t.Dim(1)
	if names != nil && int64(len(names)) != cols {
		return nil, errs.Errorf(ErrMismatch, "arrowx: %d names for %d columns", len(names), cols)
	}
	o := adapters.Apply(opts...)
	cp, err := o.Choose(ShareableAsRecord(t))
	if err != nil {
		return nil, wrapf(err, "ToRecord of %s", t)
	}
	src := t
	if cp && t.DType() != core.Bool {
		if src, err = memory.Clone(t, memory.FortranOrder); err != nil {
			return nil, wrapf(err, "ToRecord")
		}
	}
	fields := make([]arrow.Field, cols)
	arrs := make([]arrow.Array, cols)
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	size := int64(src.DType().Size())
	// the columns' buffers are slices of one slice over src's elements, each with the capacity
	// to its end, so that FromRecord sees they are one allocation and views them again
	var whole []byte
	if rows > 0 && cols > 0 && t.DType() != core.Bool {
		whole = unsafe.Slice((*byte)(src.Data()), ((cols-1)*src.Stride(1)+rows)*size)
	}
	for j := range cols {
		name := strconv.FormatInt(j, 10)
		if names != nil {
			name = names[j]
		}
		fields[j] = arrow.Field{Name: name, Type: adt}
		col, err := columnView(src, j, rows)
		if err != nil {
			return nil, wrapf(err, "ToRecord")
		}
		var buf *amemory.Buffer
		if t.DType() == core.Bool {
			buf, err = packBools(col)
		} else if rows == 0 {
			buf = amemory.NewBufferBytes(nil)
		} else {
			off := j * src.Stride(1) * size
			buf = amemory.NewBufferBytes(whole[off : off+rows*size])
			err = core.Attach(buf, col) // the buffer holds the memory from here on
		}
		col.Release()
		if err != nil {
			return nil, wrapf(err, "ToRecord")
		}
		data := array.NewData(adt, int(rows), []*amemory.Buffer{nil, buf}, nil, 0, 0)
		arrs[j] = array.MakeFromData(data)
		data.Release()
	}
	o.Report(cp)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, rows), nil
}

// columnView returns column j of the matrix src, rows elements, as a 1-D view (the caller
// releases it; the slice it is made through is released here).
func columnView(src *core.Tensor, j, rows int64) (*core.Tensor, error) {
	slice, err := src.Slice(1, j, j+1, 1)
	if err != nil {
		return nil, err
	}
	defer slice.Release()
	return slice.Reshape(rows)
}
