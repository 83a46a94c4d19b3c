package arrowx

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/endian"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// tensorDType reports whether arrow-go's tensor package has a type for dt (it has the integers
// and float32/float64; not float16 or bool).
func tensorDType(dt core.DLDataType) bool {
	switch dt {
	case core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16, core.Uint32,
		core.Uint64, core.Float32, core.Float64:
		return true
	}
	return false
}

// ShareableAsTensor reports whether ToTensor can give an arrow-go tensor over t's own memory, and
// if not, why: t must be on the host, of a dtype arrow-go's tensor package has, with no negative
// stride (an arrow-go tensor addresses its elements from its first byte up). Row-major,
// column-major, sliced and broadcast (zero-stride) layouts all share.
func ShareableAsTensor(t *core.Tensor) (ok bool, why string) {
	if why := hostWhy(t); why != "" {
		return false, why
	}
	switch {
	case !tensorDType(t.DType()):
		return false, fmt.Sprintf("arrow-go's tensor package has no %s", t.DType())
	}
	for i, s := range t.Strides() {
		if s < 0 && t.Dim(i) > 1 {
			return false, fmt.Sprintf("stride %d of axis %d is negative", s, i)
		}
	}
	return true, ""
}

// ToTensor makes an arrow-go tensor (package arrow/tensor: strides in bytes, row- or
// column-major or any non-negative strides) of t. A ShareableAsTensor tensor is shared: the
// tensor's data is a buffer over t's memory that holds it (core.Attach). Others are copied into
// C order; bool, float16 and the dtypes Arrow lacks are refused (adapters.ErrUnsupported), since
// the tensor package has no type for them. Release the result (Release) as any arrow-go tensor.
func ToTensor(t *core.Tensor, opts ...adapters.Option) (tensor.Interface, error) {
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: ToTensor of a nil tensor")
	}
	h, err := core.Hold(t)
	if err != nil {
		return nil, wrapf(err, "ToTensor")
	}
	defer h.Release()
	if !t.HostAccessible() {
		return nil, fmt.Errorf("arrowx: ToTensor of %s: %w", t, core.ErrNotHost)
	}
	if !tensorDType(t.DType()) {
		return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: arrow-go's tensor package has no %s", t.DType())
	}
	adt, err := ToDType(t.DType())
	if err != nil {
		return nil, err
	}
	o := adapters.Apply(opts...)
	cp, err := o.Choose(ShareableAsTensor(t))
	if err != nil {
		return nil, wrapf(err, "ToTensor of %s", t)
	}
	src := t
	if cp {
		if src, err = memory.Clone(t, memory.COrder); err != nil {
			return nil, wrapf(err, "ToTensor")
		}
	}
	size := int64(src.DType().Size())
	// the elements span offsets 0 .. span-1 from the first one (all strides are ≥ 0 or on axes
	// of size 1, whose stride never moves)
	span := int64(0)
	strides := make([]int64, src.Ndim())
	for i, d := range src.Shape() {
		s := src.Stride(i)
		if d <= 1 {
			s = 0 // any stride; 0 keeps the span honest
			if i == src.Ndim()-1 {
				s = 1
			}
		}
		strides[i] = s * size
		if d > 0 {
			span += (d - 1) * s
		}
	}
	n := span + 1
	if src.Empty() {
		n = 0
	}
	var buf *amemory.Buffer
	if n == 0 || src.Data() == nil {
		buf = amemory.NewBufferBytes(nil)
	} else {
		buf = amemory.NewBufferBytes(unsafe.Slice((*byte)(src.Data()), n*size))
		if err := core.Attach(buf, src); err != nil {
			return nil, wrapf(err, "")
		}
	}
	data := array.NewData(adt, int(n), []*amemory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	o.Report(cp)
	return tensor.New(data, src.Shape(), strides, nil), nil
}

// FromTensor makes a core tensor of an arrow-go tensor, without copying: the same elements with
// the same strides (converted from bytes to elements), over the tensor's data buffer, which the
// result holds with Retain and gives back with Release exactly once. Strides that are not a
// whole number of elements, or elements outside the buffer, are refused (ErrMalformed); the
// adapters options apply (AlwaysCopy copies into C order). The result is read-only unless the
// buffer is mutable, as in FromArray.
func FromTensor(at tensor.Interface, opts ...adapters.Option) (*core.Tensor, error) {
	if at == nil || at.Data() == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: FromTensor of a nil or released tensor")
	}
	dt, err := FromDType(at.DataType())
	if err != nil {
		return nil, err
	}
	if dt == core.Bool {
		return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: arrow-go tensors of booleans are not supported")
	}
	d := at.Data()
	if d.NullN() > 0 {
		return nil, errs.Errorf(ErrNulls, "arrowx: an arrow-go tensor with %d nulls", d.NullN())
	}
	shape := append([]int64{}, at.Shape()...)
	bstrides := at.Strides()
	if len(bstrides) != len(shape) {
		return nil, errs.Errorf(ErrMalformed, "arrowx: %d strides for %d dimensions do not match", len(bstrides), len(shape))
	}
	size := int64(dt.Size())
	strides := make([]int64, len(shape))
	empty := false
	for i, s := range bstrides {
		if shape[i] < 0 {
			return nil, errs.Errorf(ErrMalformed, "arrowx: dimension %d is %d, negative", i, shape[i])
		}
		if shape[i] == 0 {
			empty = true
		}
		if s%size != 0 {
			return nil, errs.Errorf(ErrMalformed, "arrowx: stride %d bytes of axis %d is not a multiple of %s's %d bytes", s, i, dt, size)
		}
		strides[i] = s / size
	}
	desc := core.Desc{Device: core.CPUDevice, DType: dt, Shape: shape, Strides: strides}
	var buf *amemory.Buffer
	if bs := d.Buffers(); len(bs) > 1 {
		buf = bs[1]
	}
	o := adapters.Apply(opts...)
	cp, err := o.Choose(true, "")
	if err != nil {
		return nil, err
	}
	if empty {
		t, err := core.New(dt, shape...)
		if err == nil && cp {
			t, err = t.WithFlags(core.FlagIsCopied)
		}
		if err != nil {
			return nil, err
		}
		o.Report(cp)
		return t, nil
	}
	// every element offset lies in [lo, hi] (in elements from the first); both must be inside
	// the buffer past the array's offset
	var lo, hi int64
	for i, dim := range shape {
		ext, ok := mulCheck(dim-1, abs(strides[i]))
		if !ok {
			return nil, errs.Errorf(ErrMalformed, "arrowx: axis %d of %d with stride %d overflows", i, dim, strides[i])
		}
		if strides[i] < 0 {
			lo -= ext
		} else {
			hi += ext
		}
		if hi < 0 || lo > 0 {
			return nil, errs.Errorf(ErrMalformed, "arrowx: element offsets overflow")
		}
	}
	first := int64(d.Offset())
	var have int64
	if buf != nil {
		have = int64(buf.Len()) / size
	}
	if first < 0 || first+lo < 0 || hi >= have-first { // (first+hi may overflow)
		return nil, errs.Errorf(ErrMalformed, "arrowx: elements at %d..%d from offset %d, the buffer holds %d %s", lo, hi, first, have, dt)
	}
	b := buf.Bytes()
	desc.Data = unsafe.Pointer(&b[first*size])
	if !buf.Mutable() {
		desc.Flags |= core.FlagReadOnly
	}
	buf.Retain()
	t, err := core.Wrap(desc, buf.Release)
	if err == nil && cp {
		defer t.Release()
		t, err = memory.Clone(t, memory.COrder)
	}
	if err != nil {
		return nil, err
	}
	o.Report(cp)
	return t, nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// FromRecord makes a 2-D tensor [rows, columns] of a record batch whose columns are primitive
// arrays of one type and (necessarily) one length: column j is t[:, j]. When the columns' values
// lie at equal distances in one buffer, as an IPC or Flight reader leaves the columns of one
// message body, or as ToRecord makes them, the tensor is a view (strides [1, distance]) that holds
// every column's buffer; otherwise (columns in buffers of their own, even ones that happen to lie
// equally spaced) the columns are copied once into a C-order tensor. Nulls follow
// FromArray's rules (FillNulls). Options apply as in FromArray.
//
// The schema's byte order is honoured: the values of a record whose schema is in the other byte
// order than this machine's (big-endian, here, as Arrow's big-endian files read with
// ipc.WithEnsureNativeEndian(false) or a record assembled by hand) are swapped into memory of
// their own, a copy that adapters.ReportCopy reports and adapters.ZeroCopyOnly refuses with
// adapters.ErrCopyRequired naming the byte order. (An array carries no byte order: FromArray
// reads its values in this machine's.)
func FromRecord(rec arrow.RecordBatch, opts ...adapters.Option) (*core.Tensor, error) {
	if rec == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: FromRecord of a nil record batch")
	}
	ncols, rows := rec.NumCols(), rec.NumRows()
	if ncols == 0 {
		return nil, errs.Errorf(ErrMismatch, "arrowx: a record batch without columns has no matrix")
	}
	o := adapters.Apply(opts...)
	fill, canFill := fillOf(o)
	lays := make([]layout, ncols)
	nulls := false
	// the schema's byte order: the values of a record in the other one are swapped into memory
	// of their own (arrow-go's IPC readers swap them themselves unless told not to,
	// ipc.WithEnsureNativeEndian(false); a record assembled by hand may still say big-endian)
	swap := !rec.Schema().IsNativeEndian()
	for j := range lays {
		col := rec.Column(int(j))
		if _, nested := col.DataType().(*arrow.FixedSizeListType); nested {
			return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: column %d is %s, not primitive", j, col.DataType())
		}
		l, err := layoutOf(col.Data())
		if err != nil {
			return nil, wrapf(err, "column %d", j)
		}
		if l.total != rows {
			return nil, errs.Errorf(ErrMismatch, "arrowx: column %d has %d rows, the batch %d", j, l.total, rows)
		}
		if j > 0 && l.dtype != lays[0].dtype {
			return nil, errs.Errorf(ErrMismatch, "arrowx: column %d is %s, column 0 %s", j, l.dtype, lays[0].dtype)
		}
		hasNulls, err := l.hasNulls()
		if err != nil {
			return nil, wrapf(err, "column %d", j)
		}
		if hasNulls {
			if !canFill {
				return nil, errs.Errorf(ErrNulls, "arrowx: column %d has nulls (give arrowx.FillNulls to copy with a fill value)", j)
			}
			nulls = true
		}
		l.swap = swap
		lays[j] = l
	}
	dt := lays[0].dtype
	if nulls {
		if err := checkFill(fill, dt, o); err != nil {
			return nil, err
		}
	}
	colStride, spaced := spacing(lays, rows)
	share, why := true, ""
	switch {
	case dt == core.Bool:
		share, why = false, "Arrow booleans are bit-packed"
	case swap && dt.Size() > 1:
		share, why = false, fmt.Sprintf("the record is %s-endian, this machine %s-endian: its values are swapped into memory of their own",
			endianName(rec.Schema().Endianness()), endianName(endian.NativeEndian))
	case nulls:
		share, why = false, "columns have nulls to fill"
	case !spaced:
		share, why = false, "the columns' buffers are not equally spaced in memory"
	}
	cp, err := o.Choose(share, why)
	if err != nil {
		return nil, wrapf(err, "FromRecord")
	}
	if !cp {
		t, err := viewColumns(lays, rows, colStride)
		if err != nil {
			return nil, err
		}
		o.Report(false)
		return t, nil
	}
	out, err := core.New(dt, rows, ncols)
	if err != nil {
		return nil, err
	}
	for j, l := range lays {
		col, err := l.copyOut(fill, nulls)
		if err != nil {
			return nil, err
		}
		err = copyColumn(out, j, rows, col)
		col.Release()
		if err != nil {
			out.Release()
			return nil, wrapf(err, "FromRecord")
		}
	}
	flagged, err := out.WithFlags(core.FlagIsCopied)
	out.Release() // flagged holds the memory
	if err != nil {
		return nil, err
	}
	o.Report(true)
	return flagged, nil
}

// endianName is "big" or "little".
func endianName(e endian.Endianness) string {
	if e == endian.BigEndian {
		return "big"
	}
	return "little"
}

// copyColumn copies col, rows elements, into column j of the matrix out, through a view it
// releases when done.
func copyColumn(out *core.Tensor, j int, rows int64, col *core.Tensor) error {
	dst, err := columnView(out, int64(j), rows)
	if err != nil {
		return err
	}
	defer dst.Release()
	return memory.Copy(dst, col)
}

// firstAddr is the address of a layout's first element (0 when it has none).
func (l layout) firstAddr() uintptr {
	bs := l.leaf.Buffers()
	if l.total == 0 || len(bs) < 2 || bs[1] == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(&bs[1].Bytes()[l.first*int64(l.dtype.Size())]))
}

// spacing reports whether the columns' first elements lie at equal distances of at least rows
// elements within column 0's buffer, and that distance in elements.
func spacing(lays []layout, rows int64) (int64, bool) {
	if rows == 0 || lays[0].dtype == core.Bool {
		return rows, rows == 0
	}
	if len(lays) == 1 {
		return rows, true
	}
	size := uintptr(lays[0].dtype.Size())
	a0, a1 := lays[0].firstAddr(), lays[1].firstAddr()
	if a1 <= a0 || (a1-a0)%size != 0 {
		return 0, false
	}
	step := (a1 - a0) / size
	if int64(step) < rows {
		return 0, false
	}
	for j := 2; j < len(lays); j++ {
		if lays[j].firstAddr() != a0+uintptr(j)*step*size {
			return 0, false
		}
	}
	// one view over all columns must stay inside one allocation: column 0's values slice must
	// reach the last column's end (as slices of one IPC body or of ToRecord's tensor do), not
	// merely be followed by other allocations that happen to lie equally spaced
	b0 := lays[0].leaf.Buffers()[1].Bytes()[lays[0].first*int64(size):]
	if uint64(cap(b0))/uint64(size) < uint64(len(lays)-1)*uint64(step)+uint64(rows) {
		return 0, false
	}
	return int64(step), true
}

// viewColumns wraps equally spaced columns as one [rows, cols] tensor holding all their buffers.
func viewColumns(lays []layout, rows, colStride int64) (*core.Tensor, error) {
	dt := lays[0].dtype
	shape := []int64{rows, int64(len(lays))}
	if rows == 0 {
		return core.New(dt, shape...)
	}
	bufs := make([]*amemory.Buffer, len(lays))
	readOnly := false
	for j, l := range lays {
		bufs[j] = l.leaf.Buffers()[1]
		readOnly = readOnly || !bufs[j].Mutable()
	}
	d := lays[0].leaf.Buffers()[1].Bytes()
	desc := core.Desc{Device: core.CPUDevice, DType: dt, Shape: shape, Strides: []int64{1, colStride},
		Data: unsafe.Pointer(&d[lays[0].first*int64(dt.Size())])}
	if readOnly {
		desc.Flags |= core.FlagReadOnly
	}
	for _, b := range bufs {
		b.Retain()
	}
	return core.Wrap(desc, func() {
		for _, b := range bufs {
			b.Release()
		}
	})
}
