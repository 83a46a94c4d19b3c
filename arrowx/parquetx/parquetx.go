// Package parquetx reads tensors from Parquet files and writes them there, through arrow-go's
// pure-Go Parquet implementation (parquet/pqarrow): a column of FixedSizeList<T> or of Arrow's
// canonical arrow.fixed_shape_tensor (see arrowx.FixedShapeTensorType) is one [rows, ...]
// tensor (Read), and a group of equal-typed primitive columns a [rows, columns] matrix
// (ReadMatrix); an arrow.variable_shape_tensor column holds one tensor of its own shape per
// row (VariableShapeColumn, ReadTensors); Describe reads what a file holds from its footer. These are how
// embedding tables, feature columns and datasets on model hubs keep tensors at rest.
//
// # Zero-copy and copies
//
// Parquet data is encoded (and usually compressed): reading decodes it once, into Arrow
// buffers. The tensor is made over the decoded buffer without a further copy when the rows
// read decode into one Arrow array (the reader asks for all of them in one batch); when they
// do not (some files' pages or row groups), the pieces are copied once into one tensor, which
// adapters.ReportCopy reports. Every tensor Read and ReadTensors give is writable, whatever its
// dtype: its memory was decoded (or copied) for this read alone, and nothing else holds it
// (arrow-go marks the buffers of some dtypes immutable and not others; the tensors do not
// follow it). Memory is bounded by what is read: only the column and the row
// groups asked for (RowGroups) are decoded. Writing encodes each tensor once; the file's Arrow
// schema is stored with it (pqarrow's WithStoreSchema), so the extension type, its shape and
// its permutation come back.
//
// The file is untrusted input. arrow-go's reader allocates what a footer claims before it
// checks it, so parquetx checks first: the footer's Thrift structures (no list or string longer
// than the bytes left, no schema element with more children than follow it) and the stored
// Arrow schema's flatbuffer are walked before arrow-go reads them (arrowx.ErrMalformed), and
// the rows a read would decode, which arrow-go reserves up front, must fit the machine's memory
// and MaxDecoded (core.ErrTooLarge). arrow-go then checks the pages, and arrowx the decoded
// Arrow data (lengths, sizes, the extension type's metadata) before a tensor is made over it.
// Errors wrap arrowx's, adapters' and core's sentinels, and ErrColumn.
package parquetx

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/internal/ipcverify"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// The field metadata keys of Arrow's IPC format that name an extension type.
const (
	ipcExtensionName     = "ARROW:extension:name"
	ipcExtensionMetadata = "ARROW:extension:metadata"
)

// ErrColumn: a column asked for is not in the file, or is not a tensor column.
var ErrColumn = errors.New("parquetx: no such tensor column")

type rowGroupsKey struct{}

type decodedKey struct{}

// MaxDecoded caps the bytes reading one column may take to decode (the rows the file's footer
// claims, at what arrow-go's reader reserves a row: see the package doc): a read past it fails
// with core.ErrTooLarge before it decodes or allocates anything. Parquet's encodings reach far
// past 1000:1 (a run-length encoded run of a billion zeros takes a few bytes), so set it when the
// file comes from someone you do not trust. The default is the machine's memory and swap
// (core.FitsMemory), which no claim passes; 0 or less is the default. Other packages ignore it.
func MaxDecoded(n int64) adapters.Option { return adapters.WithExtra(decodedKey{}, max(n, 0)) }

// RowGroups limits a read to the given row groups of the file (by index, in the order given);
// without it every row group is read.
func RowGroups(idx ...int) adapters.Option {
	return adapters.WithExtra(rowGroupsKey{}, append([]int(nil), idx...))
}

func rowGroupsOf(o adapters.Options, fr *file.Reader) ([]int, int64, error) {
	var groups []int
	if v, ok := o.Extra(rowGroupsKey{}); ok {
		groups = v.([]int)
	} else {
		groups = make([]int, fr.NumRowGroups())
		for i := range groups {
			groups[i] = i
		}
	}
	var rows int64
	for _, g := range groups {
		if g < 0 || g >= fr.NumRowGroups() {
			return nil, 0, errs.Errorf(core.ErrArgument, "parquetx: row group %d of a file with %d", g, fr.NumRowGroups())
		}
		rows += fr.MetaData().RowGroup(g).NumRows()
	}
	return groups, rows, nil
}

// ReadFile is Read of the named file.
func ReadFile(name, column string, opts ...adapters.Option) (*core.Tensor, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("parquetx: %w", err)
	}
	defer f.Close()
	return Read(f, column, opts...)
}

// Read reads the column called column of the Parquet file r as one tensor of shape
// [rows, element shape...]: a primitive column gives [rows], a FixedSizeList<T> (nested for
// more dimensions) or arrow.fixed_shape_tensor column [rows, S...] (the logical shape, a
// permutation as strides); a list column whose rows all hold n values (how DuckDB writes an
// ARRAY column such as FLOAT[n]) [rows, n], over the decoded values. A column with nulls is
// refused (arrowx.ErrNulls, naming arrowx.FillNulls) unless arrowx.FillNulls is given, which
// copies it with the fill value in the null slots. The tensor is writable (see the package doc);
// the options are adapters' (ReportCopy, ZeroCopyOnly:
// see the package doc for what is copied) and RowGroups. r stays open.
func Read(r parquet.ReaderAtSeeker, column string, opts ...adapters.Option) (t *core.Tensor, err error) {
	// arrow-go's Parquet reader panics on some malformed files: a file is untrusted input, so
	// that becomes an error
	defer func() {
		if p := recover(); p != nil {
			if t != nil {
				t.Release()
			}
			t, err = nil, errs.Errorf(arrowx.ErrMalformed, "parquetx: malformed file: %v", p)
		}
	}()
	o := adapters.Apply(opts...)
	f, err := openFile(r, o)
	if err != nil {
		return nil, err
	}
	defer f.close()
	chunks, err := f.readColumn(column)
	if err != nil {
		return nil, err
	}
	defer chunks.Release()
	return fromChunks(chunks, column, o, opts)
}

// openedFile is a Parquet file opened for reading tensors: its footer, the row groups asked for (and
// their rows) and its Arrow schema (with arrow.bool8 columns restored, see withBool8).
type openedFile struct {
	fr     *file.Reader
	ar     *pqarrow.FileReader
	schema *arrow.Schema
	groups []int
	rows   int64
	limit  int64 // MaxDecoded's, or 0
	nested nestedTypes
}

// openFile opens r for Read, ReadTensors and ReadMatrix. arrow-go's reader closes a source it
// can close: it gets only r's reads and seeks, so that the caller's file stays open.
func openFile(r parquet.ReaderAtSeeker, o adapters.Options) (*openedFile, error) {
	if err := verifyFooter(r); err != nil {
		return nil, err
	}
	fr, err := file.NewParquetReader(struct{ parquet.ReaderAtSeeker }{r})
	if err != nil {
		return nil, fmt.Errorf("parquetx: %w", err)
	}
	f := &openedFile{fr: fr}
	if v, ok := o.Extra(decodedKey{}); ok {
		f.limit = v.(int64)
	}
	if f.groups, f.rows, err = rowGroupsOf(o, fr); err != nil {
		fr.Close()
		return nil, err
	}
	if f.ar, f.nested, err = arrowReader(fr, pqarrow.ArrowReadProperties{BatchSize: max(f.rows, 1)}); err != nil {
		fr.Close()
		return nil, err
	}
	schema, err := f.ar.Schema()
	if err != nil {
		fr.Close()
		return nil, fmt.Errorf("parquetx: %w", err)
	}
	f.schema = f.nested.apply(withBool8(fr, schema))
	return f, nil
}

func (f *openedFile) close() { f.fr.Close() }

// fits refuses to decode what, of rows the footer claims at per bytes a row, would pass
// MaxDecoded or this machine's memory (ErrTooLarge): arrow-go reserves the rows before it reads
// a page (in buffers of the next power of two bytes), which a claim beyond memory would end the
// process with, and a smaller one no data backs would still cost its allocation.
func (f *openedFile) fits(what string, rows, per int64) error {
	if rows <= 0 {
		return nil
	}
	if rows > (1<<62)/per {
		return errs.Errorf(core.ErrTooLarge, "parquetx: %s: the file claims %d rows of at least %d bytes, more than Go can allocate", what, rows, per)
	}
	n := int64(1) << bits.Len64(uint64(rows*per-1))
	if f.limit > 0 && n > f.limit {
		return errs.Errorf(core.ErrTooLarge, "parquetx: %s: the file claims %d rows of at least %d bytes, which arrow-go's reader reserves %d bytes for, more than parquetx.MaxDecoded's %d", what, rows, per, n, f.limit)
	}
	if err := core.FitsMemory(n); err != nil {
		return fmt.Errorf("parquetx: %s: the file claims %d rows of at least %d bytes, which arrow-go's reader reserves %d bytes for: %w", what, rows, per, n, err)
	}
	return nil
}

// arrowReader is arrow-go's Arrow reader of fr, once the Arrow schema the file stores (the
// ARROW:schema metadata, an IPC schema message in base64) has passed ipcverify: arrow-go
// allocates what that message's vectors claim, before any check (an "out of memory" that no
// recover catches).
//
// It also returns the columns whose stored types hold nested extension types, which it hands
// pqarrow without them (see nestedTypes).
func arrowReader(fr *file.Reader, props pqarrow.ArrowReadProperties) (*pqarrow.FileReader, nestedTypes, error) {
	v, raw, ok := storedSchema(fr)
	if ok { // arrow-go reports what it cannot decode
		if err := ipcverify.Schema(raw, ipcverify.Policy{Dictionaries: true}); err != nil {
			return nil, nil, errs.Errorf(arrowx.ErrMalformed, "parquetx: the file's %s metadata: %v", arrowSchemaKey, err)
		}
	}
	var nested nestedTypes
	if ok {
		nested = unnest(v, raw)
	}
	ar, err := pqarrow.NewFileReader(fr, props, amemory.DefaultAllocator)
	if err != nil {
		return nil, nil, fmt.Errorf("parquetx: %w", err)
	}
	return ar, nested, nil
}

// arrowSchemaKey is the key of a Parquet file's metadata under which Arrow writers store the
// Arrow schema.
const arrowSchemaKey = "ARROW:schema"

// storedSchema returns the Arrow schema that fr stores: v, the value of its ARROW:schema
// metadata (nil when it has none), and raw, that value decoded as arrow-go decodes it (padded
// base64, or else unpadded), an IPC schema message; ok is false when there is no value or it
// is not base64.
func storedSchema(fr *file.Reader) (v *string, raw []byte, ok bool) {
	v = fr.MetaData().KeyValueMetadata().FindValue(arrowSchemaKey)
	if v == nil {
		return nil, nil, false
	}
	raw, err := base64.StdEncoding.DecodeString(*v)
	if len(raw) == 0 || err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(*v); err != nil {
			return v, nil, false
		}
	}
	return v, raw, true
}

// readColumn decodes the rows of the row groups asked for of one column, in one batch.
func (f *openedFile) readColumn(column string) (*arrow.Chunked, error) {
	ar, schema, groups, rows := f.ar, f.schema, f.groups, f.rows
	idx := schema.FieldIndices(column)
	if len(idx) != 1 {
		return nil, errs.Errorf(ErrColumn, "parquetx: column %q is not in the file (it has %v)", column, fieldNames(schema))
	}
	field := schema.Field(idx[0])
	if err := f.fits(fmt.Sprintf("column %q", column), rows, rowBytes(field.Type)); err != nil {
		return nil, err
	}
	leaves := map[int]bool{}
	addLeaves(leaves, ar.Manifest.Fields[idx[0]])
	cr, err := ar.GetFieldReader(context.Background(), idx[0], leaves, groups)
	if err != nil {
		return nil, fmt.Errorf("parquetx: column %q: %w", column, err)
	}
	if cr == nil {
		return nil, errs.Errorf(ErrColumn, "parquetx: column %q has no data to read", column)
	}
	chunks, err := cr.NextBatch(rows)
	if err != nil {
		return nil, fmt.Errorf("parquetx: column %q: %w", column, err)
	}
	return retype(asBool8(chunks, field.Type), field.Type), nil
}

// rowBytes is what arrow-go's Parquet reader reserves for a row of a column of type dt, at
// least (at most math.MaxInt64): for every leaf column, its values of the row in their Parquet
// physical type as arrow-go keeps them (a bool a byte, INT32 and FLOAT 4, INT64 and DOUBLE 8,
// INT96 12, a byte array or fixed-length one a 24-byte slice header), and the row's definition and
// repetition levels (2 bytes each); a fixed_size_list has its length of values a row, any other
// list at least one.
func rowBytes(dt arrow.DataType) int64 {
	switch t := dt.(type) {
	case arrow.ExtensionType:
		return rowBytes(t.StorageType())
	case *arrow.FixedSizeListType:
		n, e := max(int64(t.Len()), 1), rowBytes(t.Elem())
		if e > math.MaxInt64/n {
			return math.MaxInt64
		}
		return n * e
	case arrow.ListLikeType:
		return rowBytes(t.Elem())
	case *arrow.StructType:
		var n int64
		for _, f := range t.Fields() {
			b := rowBytes(f.Type)
			if n > math.MaxInt64-b {
				return math.MaxInt64
			}
			n += b
		}
		return max(n, 1)
	}
	const levels = 4
	switch dt.ID() {
	case arrow.BOOL, arrow.NULL:
		return 1 + levels
	case arrow.FLOAT16, arrow.FIXED_SIZE_BINARY, arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		return 24 + levels
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok && fw.BitWidth() > 32 {
		return 12 + levels // INT64, DOUBLE or INT96
	}
	return 4 + levels
}

// fromChunks makes one tensor of a column's decoded chunks: over the one chunk's memory, or a
// copy of several.
func fromChunks(chunks *arrow.Chunked, column string, o adapters.Options, opts []adapters.Option) (*core.Tensor, error) {
	parts, err := uniformLists(chunks.Chunks(), column) // DuckDB's ARRAY columns (uniformlist.go)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	if len(parts) == 1 {
		t, err := arrowx.FromArray(parts[0], opts...)
		if err != nil {
			return nil, fmt.Errorf("parquetx: column %q: %w", column, err)
		}
		return private(t)
	}
	if _, err := o.Choose(false, fmt.Sprintf("parquetx: column %q decoded in %d pieces", column, len(parts))); err != nil {
		return nil, err
	}
	// the pieces, each converted as one array (sharing), copied into one tensor
	var pieces []*core.Tensor
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	var rows int64
	free := append(append([]adapters.Option(nil), opts...), adapters.WithCopy(adapters.CopyIfNeeded))
	for _, c := range parts {
		p, err := arrowx.FromArray(c, free...)
		if err != nil {
			return nil, fmt.Errorf("parquetx: column %q: %w", column, err)
		}
		pieces = append(pieces, p)
		rows += p.Dim(0)
	}
	if len(pieces) == 0 {
		return nil, errs.Errorf(ErrColumn, "parquetx: column %q decoded into nothing", column)
	}
	shape := pieces[0].Shape()
	shape[0] = rows
	out, err := core.New(pieces[0].DType(), shape...)
	if err != nil {
		return nil, fmt.Errorf("parquetx: column %q: %w", column, err)
	}
	var at int64
	for _, p := range pieces {
		dst, err := out.Slice(0, at, at+p.Dim(0), 1)
		if err == nil {
			err = memory.Copy(dst, p)
			dst.Release()
		}
		if err != nil {
			out.Release()
			return nil, fmt.Errorf("parquetx: column %q: %w", column, err)
		}
		at += p.Dim(0)
	}
	o.Report(true)
	return out.WithFlags(core.FlagIsCopied)
}

// private makes t, a tensor over memory that this read decoded (or copied) and that nothing but
// t holds, writable: arrow-go marks some decoded buffers immutable (those of the integer types
// it converts from Parquet's INT32 and INT64, such as uint8), others not, which would make the
// tensors of some dtypes read-only and not others. The memory is this read's alone, so every
// tensor Read and ReadTensors give is writable. t is released on failure.
func private(t *core.Tensor) (*core.Tensor, error) {
	if !t.ReadOnly() {
		return t, nil
	}
	return core.Wrap(core.Desc{Device: t.Device(), DType: t.DType(), Shape: t.Shape(), Strides: t.Strides(),
		Data: t.Data(), Flags: t.Flags() &^ core.FlagReadOnly}, t.Release) // Wrap releases t if it fails
}

// addLeaves adds the Parquet leaf columns under f.
func addLeaves(m map[int]bool, f pqarrow.SchemaField) {
	if f.IsLeaf() {
		m[f.ColIndex] = true
	}
	for _, c := range f.Children {
		addLeaves(m, c)
	}
}

func fieldNames(s *arrow.Schema) []string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return names
}

// Column is one tensor column to write: Tensor has one row per index of its first dimension.
// (A column of tensors of shapes of their own is the option VariableShapeColumn.)
type Column struct {
	Name   string
	Tensor *core.Tensor
}

type variableKey struct{}

// variableColumnSpec is a column VariableShapeColumn adds.
type variableColumnSpec struct {
	name    string
	tensors []*core.Tensor
}

// VariableShapeColumn adds to Write, after its columns, an arrow.variable_shape_tensor column
// called name of tensors, one per row, of one dtype and rank but shapes of their own (see
// arrowx.NewVariableShapeTensorArray: they are copied into one data buffer). ReadTensors reads
// it back. The option may be given more than once.
func VariableShapeColumn(name string, tensors ...*core.Tensor) adapters.Option {
	spec := variableColumnSpec{name: name, tensors: append([]*core.Tensor(nil), tensors...)}
	return func(o *adapters.Options) {
		var list []variableColumnSpec
		if v, ok := o.Extra(variableKey{}); ok {
			list = v.([]variableColumnSpec)
		}
		adapters.WithExtra(variableKey{}, append(slices.Clip(list), spec))(o)
	}
}

// Write writes the columns as one Parquet file (one row group) to w, which stays open: a 1-D tensor as a
// primitive column, an N-D tensor [rows, S...] as an arrow.fixed_shape_tensor column (see
// arrowx.ToFixedShapeTensor: a batch in a permuted order is written in its physical order with
// its permutation), and the VariableShapeColumn options as arrow.variable_shape_tensor
// columns after them. Every column must have the same number of rows. The Arrow schema is stored
// in the file, so Read gives the same tensors back, and pyarrow.parquet reads the extension
// type.
func Write(w io.Writer, columns []Column, opts ...adapters.Option) error {
	var variable []variableColumnSpec
	if v, ok := adapters.Apply(opts...).Extra(variableKey{}); ok {
		variable = v.([]variableColumnSpec)
	}
	if len(columns)+len(variable) == 0 {
		return errs.Errorf(core.ErrArgument, "parquetx: Write of no columns")
	}
	for _, v := range variable {
		columns = append(slices.Clip(columns), Column{Name: v.name})
	}
	fields := make([]arrow.Field, len(columns))
	arrays := make([]arrow.Array, len(columns))
	defer func() {
		for _, a := range arrays {
			if a != nil {
				a.Release()
			}
		}
	}()
	var rows int64 = -1
	for i, c := range columns {
		var a arrow.Array
		var err error
		if k := i - (len(columns) - len(variable)); k >= 0 {
			a, err = variableColumn(variable[k].tensors)
		} else if c.Tensor == nil {
			return errs.Errorf(core.ErrNil, "parquetx: column %q has no tensor", c.Name)
		} else if c.Tensor.Ndim() == 1 {
			a, err = arrowx.ToArray(c.Tensor, opts...)
		} else {
			a, err = arrowx.ToFixedShapeTensor(c.Tensor, opts...)
		}
		if err != nil {
			return fmt.Errorf("parquetx: column %q: %w", c.Name, err)
		}
		arrays[i] = a
		if rows >= 0 && int64(a.Len()) != rows {
			return errs.Errorf(core.ErrShape, "parquetx: column %q has %d rows, column %q %d", c.Name, a.Len(), columns[0].Name, rows)
		}
		rows = int64(a.Len())
		fields[i] = arrow.Field{Name: c.Name, Type: a.DataType(), Nullable: false}
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, arrays, rows)
	defer rec.Release()
	return WriteRecord(w, rec)
}

// WriteRecord writes the Arrow record batch rec as one Parquet file (one row group) to w, as
// Write writes its columns: a column of an extension type (arrow.fixed_shape_tensor,
// arrow.variable_shape_tensor of arrowx's types with their dimension names, permutation and
// uniform shape, or another) is written as its storage, with the extension's name and metadata on
// the field as Arrow's IPC format has them, and the Arrow schema is stored in the file, so that
// Read, pyarrow and arrow-rs give the extension type back. The fields' storage (the nullability
// and names of list children) is written as rec has it. It is for Arrow data you already have;
// Write makes the record of tensors.
func WriteRecord(w io.Writer, rec arrow.RecordBatch) error {
	if rec == nil {
		return errs.Errorf(core.ErrNil, "parquetx: WriteRecord of a nil record batch")
	}
	if rec.NumCols() == 0 {
		return errs.Errorf(core.ErrArgument, "parquetx: WriteRecord of no columns")
	}
	fields := rec.Schema().Fields()
	arrays := make([]arrow.Array, len(fields))
	for i, a := range rec.Columns() {
		if ext, ok := a.(array.ExtensionArray); ok {
			// pqarrow writes no extension type over a nested storage: write the storage, with
			// the extension's name and metadata on the field as Arrow's IPC does, which readers
			// of the stored Arrow schema (pqarrow, pyarrow, arrow-rs) turn back into the
			// extension type
			et := ext.ExtensionType()
			keys, vals := []string{ipcExtensionName, ipcExtensionMetadata}, []string{et.ExtensionName(), et.Serialize()}
			for j, k := range fields[i].Metadata.Keys() {
				if k != ipcExtensionName && k != ipcExtensionMetadata {
					keys, vals = append(keys, k), append(vals, fields[i].Metadata.Values()[j])
				}
			}
			fields[i].Metadata = arrow.NewMetadata(keys, vals)
			a = ext.Storage()
		}
		fields[i].Type = a.DataType()
		arrays[i] = a
	}
	md := rec.Schema().Metadata()
	schema := arrow.NewSchema(fields, &md)
	plain := array.NewRecordBatch(schema, arrays, rec.NumRows())
	defer plain.Release()
	// pqarrow closes a sink that is an io.Closer: w is the caller's, and stays open
	pw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, parquet.NewWriterProperties(),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("parquetx: %w", err)
	}
	if err := pw.Write(plain); err != nil {
		pw.Close()
		return fmt.Errorf("parquetx: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("parquetx: %w", err)
	}
	return nil
}

// variableColumn is the arrow.variable_shape_tensor array of tensors, holding each while it
// is copied.
func variableColumn(tensors []*core.Tensor) (arrow.Array, error) {
	for _, t := range tensors {
		h, err := core.Hold(t)
		if err != nil {
			return nil, err
		}
		defer h.Release()
	}
	return arrowx.NewVariableShapeTensorArray(tensors, nil, nil)
}

// ReadTensors reads the column called column of the Parquet file r as one tensor per row: an
// arrow.variable_shape_tensor column (as Write makes of Column.Tensors) gives each row's tensor
// of its own shape (arrowx.VariableShapeTensorArray.Tensor: a view of the decoded data, bools
// copied), any column Read takes gives the rows of Read's tensor. Options as in Read.
func ReadTensors(r parquet.ReaderAtSeeker, column string, opts ...adapters.Option) (ts []*core.Tensor, err error) {
	defer func() {
		if p := recover(); p != nil {
			for _, t := range ts {
				t.Release()
			}
			ts, err = nil, errs.Errorf(arrowx.ErrMalformed, "parquetx: malformed file: %v", p)
		}
	}()
	o := adapters.Apply(opts...)
	f, err := openFile(r, o)
	if err != nil {
		return nil, err
	}
	defer f.close()
	chunks, err := f.readColumn(column)
	if err != nil {
		return nil, err
	}
	defer chunks.Release()
	if _, ok := chunks.DataType().(*arrowx.VariableShapeTensorType); !ok {
		t, err := fromChunks(chunks, column, o, opts)
		if err != nil {
			return nil, err
		}
		defer t.Release()
		for i := range t.Dim(0) {
			e, err := t.Index(0, i)
			if err != nil {
				return nil, err
			}
			ts = append(ts, e)
		}
		return ts, nil
	}
	for _, c := range chunks.Chunks() {
		va, ok := c.(*arrowx.VariableShapeTensorArray)
		if !ok {
			return nil, errs.Errorf(arrowx.ErrMalformed, "parquetx: column %q decoded as %T", column, c)
		}
		for i := range va.Len() {
			t, err := va.Tensor(i, opts...)
			if err == nil {
				t, err = private(t)
			}
			if err != nil {
				for _, t := range ts {
					t.Release()
				}
				return nil, fmt.Errorf("parquetx: column %q row %d: %w", column, len(ts), err)
			}
			ts = append(ts, t)
		}
	}
	return ts, nil
}

// WriteFile writes the columns to a new file called name: to a temporary file beside it,
// renamed over name once complete, so that a failed write leaves no partial file.
func WriteFile(name string, columns []Column, opts ...adapters.Option) (err error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return fmt.Errorf("parquetx: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// pqarrow closes a sink that is an io.Closer: hand it only the writer
	if err := Write(struct{ io.Writer }{f}, columns, opts...); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("parquetx: %w", err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("parquetx: %w", err)
	}
	return nil
}
