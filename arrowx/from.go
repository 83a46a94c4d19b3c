package arrowx

import (
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// level is one list level of an array: its ArrayData, and where the elements this conversion
// uses start in it and how many there are.
type level struct {
	data  arrow.ArrayData
	start int64 // index of the first element used, in data's own indexing (its Offset included)
	n     int64 // number of elements used
}

// layout is an array described as a tensor: the shape (length, then the list sizes), the
// levels from the outermost list to the leaf, and the leaf's dtype.
type layout struct {
	shape  []int64
	levels []level
	dtype  core.DLDataType
	leaf   arrow.ArrayData // levels[len-1].data
	first  int64           // index of the first leaf element in the leaf's values buffer
	total  int64           // number of leaf elements
	// bytewise: a bool leaf of one byte per value (Arrow's canonical arrow.bool8), not bits
	bytewise bool
	// swap: the values are in the other byte order than this machine's (a record batch whose
	// schema says so): copyOut swaps each value's bytes
	swap bool
}

// mulCheck returns a*b, or false if it overflows int64 (both non-negative).
func mulCheck(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// layoutOf walks the FixedSizeList levels of d down to a primitive leaf and checks, as untrusted
// input, that every level's length fits its children and the leaf's values buffer.
func layoutOf(d arrow.ArrayData) (layout, error) {
	var l layout
	start, n := int64(d.Offset()), int64(d.Len())
	if start < 0 || n < 0 || n > math.MaxInt64-start {
		return l, errs.Errorf(ErrMalformed, "arrowx: offset %d and length %d are out of range", start, n)
	}
	l.shape = []int64{n}
	for {
		l.levels = append(l.levels, level{data: d, start: start, n: n})
		if len(l.levels) > core.MaxNdim {
			return l, errs.Errorf(adapters.ErrUnsupported, "arrowx: more than %d nested lists", core.MaxNdim-1)
		}
		fsl, ok := d.DataType().(*arrow.FixedSizeListType)
		if !ok {
			break
		}
		size := int64(fsl.Len())
		if size < 0 {
			return l, errs.Errorf(ErrMalformed, "arrowx: FixedSizeList size %d is negative", size)
		}
		if len(d.Children()) != 1 {
			return l, errs.Errorf(ErrMalformed, "arrowx: a FixedSizeList has %d children, not 1", len(d.Children()))
		}
		child := d.Children()[0]
		cs, cn := int64(child.Offset()), int64(child.Len())
		end, ok1 := mulCheck(start+n, size)
		first, ok2 := mulCheck(start, size)
		if !ok1 || !ok2 || cs < 0 || cn < 0 || end > cn { // the elements are child[first:end]
			return l, errs.Errorf(ErrMalformed, "arrowx: FixedSizeList<%d> elements %d..%d need %d child elements, the child has %d", size, start, start+n, end, cn)
		}
		if cs > math.MaxInt64-end { // the child's elements used are cs+first .. cs+end
			return l, errs.Errorf(ErrMalformed, "arrowx: FixedSizeList child offset %d overflows", cs)
		}
		l.shape = append(l.shape, size)
		start, n = cs+first, end-first
		d = child
	}
	dt, err := FromDType(d.DataType())
	if err != nil {
		return l, err
	}
	l.dtype, l.leaf, l.first, l.total = dt, d, start, n
	l.bytewise = isBool8(d.DataType())
	// the leaf's values buffer must hold elements first .. first+total
	var have int64
	if bs := d.Buffers(); len(bs) > 1 && bs[1] != nil {
		have = int64(bs[1].Len())
	}
	var need int64
	if n > 0 {
		if dt == core.Bool && !l.bytewise {
			need = (start+n-1)/8 + 1 // start+n ≤ MaxInt64: +7 could overflow
		} else {
			end, ok := mulCheck(start+n, int64(dt.Size()))
			if !ok {
				return l, errs.Errorf(ErrMalformed, "arrowx: %d elements of %s overflow", start+n, dt)
			}
			need = end
		}
	}
	if need > have {
		return l, errs.Errorf(ErrMalformed, "arrowx: %d %s elements from %d need %d bytes, the values buffer has %d", n, dt, start, need, have)
	}
	return l, nil
}

// hasNulls reports whether any element this conversion uses is null, at any level, checking
// each validity bitmap's length first.
func (l layout) hasNulls() (bool, error) {
	for _, lv := range l.levels {
		bm, err := lv.validBits()
		if err != nil {
			return false, err
		}
		if bm != nil && lv.n > 0 && int64(bitutil.CountSetBits(bm, int(lv.start), int(lv.n))) != lv.n {
			return true, nil
		}
	}
	return false, nil
}

// validBits returns the validity bitmap of a level, or nil if every slot is valid. It checks the
// bitmap's length, which a C producer could get wrong.
func (lv level) validBits() ([]byte, error) {
	bs := lv.data.Buffers()
	if lv.data.NullN() == 0 || len(bs) == 0 || bs[0] == nil || bs[0].Len() == 0 {
		return nil, nil
	}
	b := bs[0].Bytes()
	if int64(len(b))*8 < lv.start+lv.n {
		return nil, errs.Errorf(ErrMalformed, "arrowx: a validity bitmap of %d bytes is too short for elements %d..%d", len(b), lv.start, lv.start+lv.n)
	}
	return b, nil
}

// FromArray makes a tensor of an Arrow array: a fixed-width primitive array as a 1-D tensor of
// its length, a FixedSizeList of such (nested to any depth) as an N-D tensor whose shape is the
// length followed by the list sizes. The array's offset (and each level's) is honoured.
// Arrow's canonical tensor types give [N, logical shape...]: arrow.fixed_shape_tensor always,
// arrow.variable_shape_tensor when its elements share one shape (elements of different shapes
// are refused with adapters.ErrUnsupported: take them one by one with
// VariableShapeTensorArray.Tensor). arrow.bool8 gives a bool tensor.
//
// Without nulls the tensor shares the array's values buffer: it takes a reference on it
// (Retain) and gives it back (Release) exactly once, when the last holder of the tensor lets go,
// so the buffer outlives the array if need be. The tensor is writable only if the buffer is
// mutable (arrow-go's own allocations); buffers over bytes that arrived from elsewhere (IPC,
// Flight, the C Data Interface) give read-only tensors.
//
// Booleans (bit-packed in Arrow) are always copied into a bool tensor. An array with nulls is
// refused with ErrNulls unless FillNulls is given; then it is copied with the fill value in the
// null slots. Copies carry core.FlagIsCopied; the adapters options apply (ZeroCopyOnly refuses a
// copy with adapters.ErrCopyRequired, AlwaysCopy copies, ReportCopy says which happened).
func FromArray(arr arrow.Array, opts ...adapters.Option) (*core.Tensor, error) {
	if arr == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: FromArray of a nil array")
	}
	return fromData(arr.Data(), opts...)
}

// FromArrayData is FromArray for an array's data (arrow.ArrayData), which may come from a
// producer that arrow-go's array constructors never checked: every length, offset and buffer
// size is validated before memory is touched (ErrMalformed).
func FromArrayData(d arrow.ArrayData, opts ...adapters.Option) (*core.Tensor, error) {
	return fromData(d, opts...)
}

func fromData(d arrow.ArrayData, opts ...adapters.Option) (*core.Tensor, error) {
	if d == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: an array without data")
	}
	if ft, ok := d.DataType().(*FixedShapeTensorType); ok {
		return fromFixedShape(ft, d, opts)
	}
	if vt, ok := d.DataType().(*VariableShapeTensorType); ok {
		return fromVariableShape(vt, d, opts)
	}
	o := adapters.Apply(opts...)
	l, err := layoutOf(d)
	if err != nil {
		return nil, wrapf(err, "FromArray of %s", d.DataType())
	}
	fill, canFill := fillOf(o)
	nulls, err := l.hasNulls()
	if err != nil {
		return nil, wrapf(err, "FromArray of %s", d.DataType())
	}
	if nulls && !canFill {
		return nil, errs.Errorf(ErrNulls, "arrowx: %s of shape %v has nulls (give arrowx.FillNulls to copy with a fill value)", d.DataType(), l.shape)
	}
	if nulls {
		if err := checkFill(fill, l.dtype, o); err != nil {
			return nil, err
		}
	}
	share, why := true, ""
	switch {
	case l.dtype == core.Bool && !l.bytewise:
		share, why = false, "Arrow booleans are bit-packed"
	case nulls:
		share, why = false, "the array has nulls to fill"
	case l.bytewise && !l.zeroOne():
		share, why = false, "arrow.bool8 values other than 0 and 1 become 1"
	}
	cp, err := o.Choose(share, why)
	if err != nil {
		return nil, wrapf(err, "FromArray of %s", d.DataType())
	}
	var t *core.Tensor
	if cp {
		t, err = l.copyOut(fill, nulls)
	} else {
		t, err = l.view()
	}
	if err != nil {
		return nil, err
	}
	o.Report(cp)
	return t, nil
}

// view wraps the leaf's values buffer, holding a reference on it.
func (l layout) view() (*core.Tensor, error) {
	desc := core.Desc{Device: core.CPUDevice, DType: l.dtype, Shape: l.shape}
	var buf *amemory.Buffer
	if bs := l.leaf.Buffers(); len(bs) > 1 {
		buf = bs[1]
	}
	if buf == nil || l.total == 0 {
		return core.New(l.dtype, l.shape...)
	}
	b := buf.Bytes()
	desc.Data = unsafe.Pointer(&b[l.first*int64(l.dtype.Size())])
	if !buf.Mutable() {
		desc.Flags |= core.FlagReadOnly
	}
	buf.Retain()
	return core.Wrap(desc, buf.Release) // Wrap releases buf itself if it fails
}

// zeroOne reports whether every value of a bytewise bool leaf is 0 or 1, as a bool tensor's
// must be (NumPy, PyTorch and this module read other bytes as undefined): only then may the
// tensor share the arrow.bool8 buffer.
func (l layout) zeroOne() bool {
	if l.total == 0 {
		return true
	}
	for _, b := range l.leaf.Buffers()[1].Bytes()[l.first : l.first+l.total] {
		if b > 1 {
			return false
		}
	}
	return true
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// copyOut copies the elements into a new tensor, filling nulls with fill.
func (l layout) copyOut(fill float64, nulls bool) (*core.Tensor, error) {
	t, err := core.New(l.dtype, l.shape...)
	if err != nil {
		return nil, err
	}
	if l.total == 0 {
		return t.WithFlags(core.FlagIsCopied)
	}
	dst, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	src := l.leaf.Buffers()[1].Bytes()
	switch {
	case l.dtype == core.Bool && !l.bytewise:
		for k := range l.total {
			if bitutil.BitIsSet(src, int(l.first+k)) {
				dst[k] = 1
			}
		}
	case l.bytewise: // arrow.bool8: any value but 0 is true
		for k, b := range src[l.first : l.first+l.total] {
			dst[k] = b2u(b != 0)
		}
	default:
		size := int64(l.dtype.Size())
		copy(dst, src[l.first*size:(l.first+l.total)*size])
		if l.swap {
			memory.SwapBytes(dst[:l.total*size], l.dtype)
		}
	}
	if nulls {
		if err := l.fillNulls(t, fill); err != nil {
			return nil, err
		}
	}
	return t.WithFlags(core.FlagIsCopied)
}

// fillNulls writes fill into every element of t under a null slot of any level. A slot of level
// i covers the elements of one index of the first i+1 dimensions: block consecutive elements.
func (l layout) fillNulls(t *core.Tensor, fill float64) error {
	flat, err := t.Reshape(l.total)
	if err != nil {
		return err
	}
	val := core.Scalar(fill)
	for i, lv := range l.levels {
		if lv.n == 0 {
			continue
		}
		block := l.total / lv.n // level i has one slot per index of the first i+1 dimensions
		bm, err := lv.validBits()
		if err != nil {
			return err
		}
		if bm == nil || block == 0 {
			continue
		}
		for j := range lv.n {
			if bitutil.BitIsSet(bm, int(lv.start+j)) {
				continue
			}
			dst, err := flat.Slice(0, j*block, (j+1)*block, 1)
			if err != nil {
				return err
			}
			src, err := val.BroadcastTo(block)
			if err != nil {
				return err
			}
			if err := memory.Copy(dst, src); err != nil {
				return wrapf(err, "filling nulls of level %d", i)
			}
		}
	}
	return nil
}
