package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

func init() {
	formats = append(formats, format{
		name:  "parquet",
		exts:  []string{".parquet"},
		magic: func(head []byte) bool { return bytes.HasPrefix(head, []byte("PAR1")) },
		open:  openParquet,
	})
}

// parquetFile is a Parquet file's tensor columns (parquetx.Describe: the footer only). A
// column's values are decoded for an excerpt (parquetx.Read, up to copyLimit bytes), and for a
// summary row group by row group (parquetx.RowGroups), so that only one row group's column is
// in memory at a time.
type parquetFile struct {
	f      *os.File        // parquetx leaves it open: closed by close
	limit  adapters.Option // parquetx.MaxDecoded of -max-inflated
	groups []int64         // rows of each row group
	cols   []parquetx.ColumnInfo
	ent    []entry
}

func openParquet(path string, o options) (c container, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	p := &parquetFile{f: f, limit: parquetx.MaxDecoded(o.maxInflated)}
	info, err := parquetx.Describe(f) // one read of the footer: columns and row groups
	if err != nil {
		return nil, err
	}
	p.cols, p.groups = info.Columns, info.RowGroups
	for _, c := range p.cols {
		if n, ok := checkedBytes(c.Shape, c.DType.Size()); !ok || n < 0 {
			return nil, errs.Errorf(arrowx.ErrMalformed, "parquetx: column %q of shape %v of %s overflows int64 bytes", c.Name, c.Shape, c.DType)
		}
		e := entry{name: c.Name, dtype: c.DType, descr: arrowDescr(c), shape: c.Shape, size: c.DType.Size(), perm: memoryAxes(c.Permutation)}
		if c.VariableShape {
			e = variableEntry(c)
		}
		if c.DType == core.Bool {
			e.size = 1 // as Read gives it: one byte a value
		}
		p.ent = append(p.ent, e)
	}
	return p, nil
}

// variableEntry is the entry of an arrow.variable_shape_tensor column: shape [rows, then each
// dimension of uniform_shape, -1 for those the rows do not share], perm of a row's dimensions.
func variableEntry(c parquetx.ColumnInfo) entry {
	e := entry{name: c.Name, dtype: c.DType, descr: arrowx.VariableShapeTensorName, size: c.DType.Size(), variable: true}
	e.shape = append(e.shape, c.Shape[0])
	for k := range c.Ndim {
		d := int64(-1)
		if c.UniformShape != nil {
			d = c.UniformShape[k]
		}
		e.shape = append(e.shape, d)
	}
	if axes := memoryAxes(c.Permutation); axes != nil {
		for _, a := range axes[1:] {
			e.perm = append(e.perm, a-1)
		}
	}
	return e
}

// checkedBytes is the bytes of a tensor of shape and elements of size bytes; ok is false where
// the product overflows int64 or a dimension is negative.
func checkedBytes(shape []int64, size int) (n int64, ok bool) {
	n = int64(max(size, 1))
	for _, d := range shape {
		if d < 0 || d > 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// memoryAxes is the dimensions of a [rows, ...] tensor of arrow.fixed_shape_tensor's
// permutation perm (element dimension i is physical dimension perm[i]) in memory order: rows,
// then the logical dimension of each physical one. nil for the identity.
func memoryAxes(perm []int) []int {
	if perm == nil {
		return nil
	}
	axes := make([]int, len(perm)+1)
	for i, p := range perm {
		if p < 0 || p >= len(perm) {
			return nil // arrowx checked it
		}
		axes[1+p] = 1 + i
	}
	return axes
}

// arrowDescr is the column's Arrow type, short: the extension's name, fixed_size_list, or the
// primitive type's name ("float", "int64").
func arrowDescr(c parquetx.ColumnInfo) string {
	switch t := c.Type.(type) {
	case *arrowx.FixedShapeTensorType:
		return t.ExtensionName()
	}
	if len(c.Shape) > 1 {
		return "fixed_size_list"
	}
	return c.Type.String()
}

func (p *parquetFile) entries() []entry { return p.ent }

func (p *parquetFile) tensor(i int) (*core.Tensor, error) {
	e := p.ent[i]
	if e.variable {
		return nil, errs.Errorf(errNotConverted, "an arrow.variable_shape_tensor column holds a tensor of its own shape per row, which this tool summarises (-stats) but does not excerpt")
	}
	if n := e.nbytes(); n > copyLimit {
		return nil, errs.Errorf(errTooLarge, "the column decodes to %d bytes, more than this tool reads into memory (%d)", n, copyLimit)
	}
	return parquetx.Read(p.f, e.name, p.limit)
}

// summarize decodes column i one row group at a time (parquetx.Read with parquetx.RowGroups),
// each up to copyLimit bytes.
func (p *parquetFile) summarize(i int) (*stats, error) {
	e := p.ent[i]
	if e.variable {
		return p.summarizeRows(e)
	}
	perRow := e.nbytes()
	if e.shape[0] > 0 {
		perRow /= e.shape[0]
	}
	acc := newAccumulator()
	for g, rows := range p.groups {
		if rows == 0 {
			continue
		}
		if rows < 0 || perRow > 0 && rows > copyLimit/perRow {
			return nil, errs.Errorf(errTooLarge, "row group %d of the column has %d rows of %d bytes, more than this tool reads into memory (%d)", g, rows, perRow, copyLimit)
		}
		t, err := parquetx.Read(p.f, e.name, parquetx.RowGroups(g), p.limit)
		if errors.Is(err, arrowx.ErrNulls) {
			err = p.addWithNulls(acc, e.name, g)
			if err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		err = acc.addTensor(t)
		t.Release()
		if err != nil {
			return nil, err
		}
	}
	return acc.stats(), nil
}

// addWithNulls adds to acc the values of row group g of a column with nulls, and counts its
// null elements: it reads the group twice, its nulls filled with 0 and then with 1
// (arrowx.FillNulls), so that an element is null exactly where the two differ (compared
// bytewise: a NaN is a NaN in both), and summarises the elements that are not.
func (p *parquetFile) addWithNulls(acc *accumulator, name string, g int) error {
	var read [2][]byte
	var dt core.DLDataType
	for k := range read {
		t, err := parquetx.Read(p.f, name, parquetx.RowGroups(g), p.limit, arrowx.FillNulls(float64(k)))
		if err != nil {
			return err
		}
		c, err := memory.Contiguous(t) // a permuted column in C order: the same order in both
		t.Release()
		if err != nil {
			return err
		}
		b, err := c.ReadOnlyBytes()
		if err == nil {
			read[k], dt = append([]byte(nil), b...), c.DType()
		}
		c.Release()
		if err != nil {
			return err
		}
	}
	size := dt.Size()
	rest := make([]byte, 0, len(read[0]))
	var nulls int64
	for i := 0; i+size <= len(read[0]); i += size {
		if bytes.Equal(read[0][i:i+size], read[1][i:i+size]) {
			rest = append(rest, read[0][i:i+size]...)
		} else {
			nulls++
		}
	}
	acc.nulls += nulls
	n := int64(len(rest) / size)
	if n == 0 {
		return nil
	}
	t, err := core.New(dt, n)
	if err != nil {
		return err
	}
	defer t.Release()
	b, err := t.Bytes()
	if err != nil {
		return err
	}
	copy(b, rest)
	return acc.addTensor(t)
}

// summarizeRows summarises an arrow.variable_shape_tensor column one row group at a time
// (parquetx.ReadTensors with parquetx.RowGroups), every row's tensor of the group in turn.
func (p *parquetFile) summarizeRows(e entry) (*stats, error) {
	acc := newAccumulator()
	for g, rows := range p.groups {
		if rows == 0 {
			continue
		}
		ts, err := parquetx.ReadTensors(p.f, e.name, parquetx.RowGroups(g), p.limit)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if err == nil {
				err = acc.addTensor(t)
			}
			t.Release()
		}
		if err != nil {
			return nil, err
		}
	}
	return acc.stats(), nil
}

// describe puts the row count and row groups on the header line.
func (p *parquetFile) describe(r *fileReport) {
	var rows int64
	for _, n := range p.groups {
		rows += n
	}
	plural := "s"
	if len(p.groups) == 1 {
		plural = ""
	}
	r.Summary = fmt.Sprintf("%d rows in %d row group%s", rows, len(p.groups), plural)
}

func (p *parquetFile) close() error { return p.f.Close() }
