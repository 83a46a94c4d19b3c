package parquetx

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// ReadMatrix reads the named columns of the Parquet file r, primitive columns of one element
// type (numbers, bool or arrow.bool8), as one C-order matrix [rows, len(columns)]: column j of
// the file is t[:, j], as a feature table is fed to a model. Parquet stores each column apart,
// so the matrix is always a copy: each column is decoded once, into Arrow buffers, and copied
// once, by the strided copy kernel, into its place (adapters.ZeroCopyOnly refuses it, with
// adapters.ErrCopyRequired). Memory is bounded by the matrix and one decoded column at a time.
// A name may repeat. RowGroups chooses the row groups; nulls follow arrowx.FillNulls. Columns
// of different types are refused with arrowx.ErrMismatch, nested columns with ErrColumn. r
// stays open.
func ReadMatrix(r parquet.ReaderAtSeeker, columns []string, opts ...adapters.Option) (t *core.Tensor, err error) {
	defer func() { // arrow-go's reader panics on some malformed files, as in Read
		if p := recover(); p != nil {
			if t != nil {
				t.Release()
			}
			t, err = nil, errs.Errorf(arrowx.ErrMalformed, "parquetx: malformed file: %v", p)
		}
	}()
	if len(columns) == 0 {
		return nil, errs.Errorf(core.ErrArgument, "parquetx: ReadMatrix of no columns")
	}
	o := adapters.Apply(opts...)
	if _, err := o.Choose(false, "parquetx: Parquet stores columns apart: a matrix of them is a copy"); err != nil {
		return nil, err
	}
	f, err := openFile(r, o)
	if err != nil {
		return nil, err
	}
	defer f.close()
	schema, rows := f.schema, f.rows
	// every column's type from the schema first: a mismatch is refused before anything decodes
	var dt core.DLDataType
	for j, name := range columns {
		idx := schema.FieldIndices(name)
		if len(idx) != 1 {
			return nil, errs.Errorf(ErrColumn, "parquetx: column %q is not in the file (it has %v)", name, fieldNames(schema))
		}
		ft := schema.Field(idx[0]).Type
		d, err := arrowx.FromDType(ft)
		if err != nil {
			return nil, errs.Errorf(ErrColumn, "parquetx: column %q is %s, not a primitive column a matrix can hold", name, ft)
		}
		if j == 0 {
			dt = d
		} else if d != dt {
			return nil, errs.Errorf(arrowx.ErrMismatch, "parquetx: column %q is %s, column %q %s: a matrix has one element type", name, d, columns[0], dt)
		}
	}
	if err := f.fits("the matrix", rows, int64(len(columns))*int64(dt.Size())); err != nil {
		return nil, err
	}
	out, err := memory.NewUninit(dt, rows, int64(len(columns)))
	if err != nil {
		return nil, fmt.Errorf("parquetx: %w", err)
	}
	defer func() {
		if err != nil {
			out.Release()
		}
	}()
	shared := append(append([]adapters.Option(nil), opts...), adapters.WithCopy(adapters.CopyIfNeeded))
	for j, name := range columns {
		if err := readInto(f, out, j, name, shared); err != nil {
			return nil, err
		}
	}
	flagged, err := out.WithFlags(core.FlagIsCopied)
	if err != nil {
		return nil, err
	}
	out.Release() // flagged holds the block: out, dropped unreleased, would hold it until a collection
	o.Report(true)
	return flagged, nil
}

// readInto decodes one column and copies it, piece by piece, into column j of out, checking
// that it fills it.
func readInto(f *openedFile, out *core.Tensor, j int, name string, opts []adapters.Option) error {
	rows := f.rows
	chunks, err := f.readColumn(name)
	if err != nil {
		return err
	}
	defer chunks.Release()
	var at int64
	for _, c := range chunks.Chunks() {
		n := int64(c.Len())
		if n > rows-at {
			return errs.Errorf(arrowx.ErrMalformed, "parquetx: column %q decoded more than the %d rows its row groups have", name, rows)
		}
		p, err := arrowx.FromArray(c, opts...) // over the decoded buffer (bools unpacked)
		if err != nil {
			return fmt.Errorf("parquetx: column %q: %w", name, err)
		}
		if err = copyPiece(out, p, j, at); err != nil {
			return fmt.Errorf("parquetx: column %q: %w", name, err)
		}
		at += n
	}
	if at != rows {
		return errs.Errorf(arrowx.ErrMalformed, "parquetx: column %q decoded %d rows, its row groups have %d", name, at, rows)
	}
	return nil
}

// copyPiece copies the 1-D p into rows at.. of column j of out, and releases p.
func copyPiece(out, p *core.Tensor, j int, at int64) error {
	defer p.Release()
	if p.Ndim() != 1 {
		return errs.Errorf(ErrColumn, "a %d-D piece is no matrix column", p.Ndim())
	}
	rows, err := out.Slice(0, at, at+p.Dim(0), 1)
	if err != nil {
		return err
	}
	defer rows.Release()
	dst, err := rows.Index(1, int64(j))
	if err != nil {
		return err
	}
	defer dst.Release()
	return memory.Copy(dst, p)
}
