package flightx

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// A variable-shape flight is a list of tensors of one dtype and number of dimensions, each of
// its own shape, as one arrow.variable_shape_tensor column (see the package documentation).

// tensorOverhead is what each tensor of a list counts for against a receiver's WithMaxBytes
// and a server's WithMaxInFlight besides its elements: a stream of many empty tensors costs a
// receiver a header each.
const tensorOverhead = 64

// listInfo checks a list of tensors for PutTensors and describes it: all non-nil, in host
// memory, of one dtype (with an Arrow carrier) and number of dimensions, each dimension and
// each tensor's carrier elements within int32 (Arrow's shapes and list offsets). An empty list
// is float32 of one dimension.
func listInfo(name string, ts []*core.Tensor, meta map[string]string) (Info, error) {
	info := Info{Name: name, DType: core.Float32, Shape: []int64{int64(len(ts))}, Meta: meta, Variable: true, Ndim: 1}
	if len(ts) > 0 {
		if ts[0] == nil {
			return Info{}, errs.Errorf(core.ErrNil, "flightx: tensor 0 of the list is nil")
		}
		info.DType, info.Ndim = ts[0].DType(), ts[0].Ndim()
	}
	_, extra, err := carrier(info.DType)
	if err != nil {
		return Info{}, err
	}
	if w := wireNdim(info.Ndim, extra); w > core.MaxNdim-1 {
		return Info{}, errs.Errorf(core.ErrShape, "flightx: a list of %s tensors of %d dimensions takes %d in arrow.variable_shape_tensor (at most %d)",
			info.DType, info.Ndim, w, core.MaxNdim-1)
	}
	per := int64(1)
	for _, d := range extra {
		per *= d
	}
	total := uint64(0)
	for k, t := range ts {
		if t == nil {
			return Info{}, errs.Errorf(core.ErrNil, "flightx: tensor %d of the list is nil", k)
		}
		if t.DType() != info.DType || t.Ndim() != info.Ndim {
			return Info{}, errs.Errorf(ErrMismatch, "flightx: tensor %d of the list is %s of %d dimensions, tensor 0 %s of %d (a list has one dtype and number of dimensions)",
				k, t.DType(), t.Ndim(), info.DType, info.Ndim)
		}
		if !t.HostAccessible() {
			return Info{}, errs.Errorf(core.ErrNotHost, "flightx: tensor %d of the list, %s, is not in host memory", k, t)
		}
		for _, d := range t.Shape() {
			if d > math.MaxInt32 {
				return Info{}, errs.Errorf(ErrTooLarge, "flightx: tensor %d of the list has shape %v: a dimension over 2^31-1", k, t.Shape())
			}
		}
		n := t.Len()
		if hi, lo := bits.Mul64(uint64(n), uint64(per)); hi != 0 || lo > math.MaxInt32 {
			return Info{}, errs.Errorf(ErrTooLarge, "flightx: tensor %d of the list, %s %v, has more than 2^31-1 elements of %s",
				k, t.DType(), t.Shape(), info.DType)
		}
		if total += uint64(n); total > math.MaxInt64/uint64(info.DType.Size()) {
			return Info{}, errs.Errorf(core.ErrOverflow, "flightx: the list's elements take more than 2^63 bytes")
		}
	}
	info.Elements = int64(total)
	for k := range meta {
		if strings.HasPrefix(k, keyPrefix) {
			return Info{}, errs.Errorf(ErrProtocol, "flightx: metadata key %q uses the reserved prefix %q", k, keyPrefix)
		}
	}
	return info, nil
}

// wireNdim is the number of dimensions of a list's column: the tensors' and the carrier's
// (complex pairs, lanes); one at least (arrow-go has no FixedSizeList of 0: a 0-d tensor is a
// row of shape [1]).
func wireNdim(ndim int, extra []int64) int { return max(ndim+len(extra), 1) }

// listType is the arrow.variable_shape_tensor type of info's list.
func listType(info Info) (*arrowx.VariableShapeTensorType, []int64, error) {
	at, extra, err := carrier(info.DType)
	if err != nil {
		return nil, nil, err
	}
	vt, err := arrowx.NewVariableShapeTensorType(at, wireNdim(info.Ndim, extra), nil, nil, nil)
	if err != nil {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: a list of %s tensors of %d dimensions: %v", info.DType, info.Ndim, err)
	}
	return vt, extra, nil
}

// listSchema is the schema of a variable-shape flight.
func listSchema(info Info) (*arrow.Schema, error) {
	vt, _, err := listType(info)
	if err != nil {
		return nil, err
	}
	keys := []string{KeyDType, KeyOrder, KeyNdim, KeyTensors, KeyElements}
	vals := []string{info.DType.String(), "C", strconv.Itoa(info.Ndim), strconv.FormatInt(info.Shape[0], 10),
		strconv.FormatInt(info.Elements, 10)}
	for k, v := range info.Meta {
		if strings.HasPrefix(k, keyPrefix) {
			return nil, errs.Errorf(ErrProtocol, "flightx: metadata key %q uses the reserved prefix %q", k, keyPrefix)
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema([]arrow.Field{{Name: column, Type: vt}}, &md), nil
}

// decodeListSchema reads the schema of a variable-shape flight (untrusted): dlpack.dtype,
// dlpack.order, dlpack.ndim, dlpack.tensors and dlpack.elements, and one column of
// arrow.variable_shape_tensor of the dtype's carrier and number of dimensions, without a
// permutation.
func decodeListSchema(s *arrow.Schema, get func(string) (string, bool)) (Info, error) {
	info := Info{Variable: true}
	ds, _ := get(KeyDType)
	dt, err := ParseDType(ds)
	if err != nil {
		return Info{}, err
	}
	if dt.Size() == 0 || dt.Bits%8 != 0 {
		return Info{}, errs.Errorf(ErrProtocol, "flightx: sub-byte dtype %s cannot travel in a tensor stream", dt)
	}
	info.DType = dt
	num := func(key string, limit int64) (int64, error) {
		v, _ := get(key)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > limit || v == "" || v[0] < '0' || v[0] > '9' || (len(v) > 1 && v[0] == '0') {
			return 0, errs.Errorf(ErrProtocol, "flightx: %s %q is not a decimal of 0 to %d", key, truncate(v), limit)
		}
		return n, nil
	}
	ndim, err := num(KeyNdim, core.MaxNdim)
	if err != nil {
		return Info{}, err
	}
	count, err := num(KeyTensors, math.MaxInt64)
	if err != nil {
		return Info{}, err
	}
	elems, err := num(KeyElements, math.MaxInt64/int64(dt.Size()))
	if err != nil {
		return Info{}, err
	}
	info.Ndim, info.Shape, info.Elements = int(ndim), []int64{count}, elems
	if o, _ := get(KeyOrder); o != "C" {
		return Info{}, errs.Errorf(ErrProtocol, "flightx: %s %q (want \"C\")", KeyOrder, truncate(o))
	}
	if s.NumFields() != 1 {
		return Info{}, errs.Errorf(ErrProtocol, "flightx: schema of %d columns (want 1)", s.NumFields())
	}
	if _, err := listColumn(s.Field(0).Type, info); err != nil {
		return Info{}, err
	}
	info.Meta = map[string]string{}
	md := s.Metadata()
	for i, k := range md.Keys() {
		if !strings.HasPrefix(k, keyPrefix) {
			info.Meta[k] = md.Values()[i]
		}
	}
	return info, nil
}

// listColumn checks the column type of a variable-shape flight against info and returns it
// with the carrier's trailing dimensions.
func listColumn(typ arrow.DataType, info Info) (*arrowx.VariableShapeTensorType, error) {
	vt, ok := typ.(*arrowx.VariableShapeTensorType)
	if !ok {
		return nil, errs.Errorf(ErrProtocol, "flightx: column of type %s carries a list of %s (want %s)", typ, info.DType,
			arrowx.VariableShapeTensorName)
	}
	at, extra, err := carrier(info.DType)
	if err != nil {
		return nil, err
	}
	switch {
	case !arrow.TypeEqual(vt.ValueType(), at):
		return nil, errs.Errorf(ErrProtocol, "flightx: column %s carries %s: its value type is not %s", vt, info.DType, at)
	case vt.Ndim() != wireNdim(info.Ndim, extra):
		return nil, errs.Errorf(ErrProtocol, "flightx: column %s carries %s tensors of %d dimensions (want ndim %d)", vt,
			info.DType, info.Ndim, wireNdim(info.Ndim, extra))
	case !identityPermutation(vt.Permutation()):
		return nil, errs.Errorf(ErrProtocol, "flightx: column %s has a permutation (tensor streams have none)", vt)
	}
	return vt, nil
}

// listBatches cuts a list into batches of whole tensors: as many as fit chunkBytes (one at
// least), and at most 2^31-1 carrier elements (Arrow's list offsets). It returns each batch's
// end.
func listBatches(ts []*core.Tensor, size, per int64, chunkBytes int) []int {
	var ends []int
	var bytes, elems int64
	start := 0
	for k, t := range ts {
		b, e := t.Len()*size, t.Len()*per
		if k > start && (bytes+b > int64(chunkBytes) || elems+e > math.MaxInt32) {
			ends, start = append(ends, k), k
			bytes, elems = 0, 0
		}
		bytes, elems = bytes+b, elems+e
	}
	if len(ts) > 0 {
		ends = append(ends, len(ts))
	}
	return ends
}

// sendList writes a list of tensors (that the caller holds, checked by listInfo) as a
// variable-shape stream: the schema, then batches of whole tensors of at most chunkBytes of
// elements (one tensor at least). With packed (a list packList made: the tensors lie one after
// the other in one block) a batch's values are the block itself; otherwise they are copied
// once into one buffer.
func sendList(send func(*flight.FlightData) error, desc *flight.FlightDescriptor, info Info, ts []*core.Tensor,
	chunkBytes int, mem amemory.Allocator, packed bool) error {
	schema, err := listSchema(info)
	if err != nil {
		return err
	}
	vt := schema.Field(0).Type.(*arrowx.VariableShapeTensorType)
	_, extra, _ := carrier(info.DType)
	per := int64(1)
	for _, d := range extra {
		per *= d
	}
	size := int64(info.DType.Size())
	pw := &payloadWriter{send: send, descriptor: desc}
	w := ipc.NewWriterWithPayloadWriter(pw, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	defer w.Close()
	start := 0
	var staging []byte
	for _, end := range listBatches(ts, size, per, chunkBytes) {
		rec, err := listBatch(schema, vt, ts[start:end], extra, per, size, packed, &staging)
		if err != nil {
			return err
		}
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			return err
		}
		start = end
	}
	return w.Close()
}

// listBatch makes the record batch of tensors ts: their values (with packed, the block they
// lie in one after the other; else copied into staging), offsets and shapes.
func listBatch(schema *arrow.Schema, vt *arrowx.VariableShapeTensorType, ts []*core.Tensor, extra []int64, per, size int64,
	packed bool, staging *[]byte) (arrow.RecordBatch, error) {
	ndim := vt.Ndim()
	offsets := make([]byte, 4*(len(ts)+1))
	shapes := make([]byte, 0, 4*len(ts)*ndim)
	total := int64(0)
	for k, t := range ts {
		row := append(slices.Clone(t.Shape()), extra...)
		if len(row) == 0 {
			row = []int64{1}
		}
		for _, d := range row {
			shapes = binary.NativeEndian.AppendUint32(shapes, uint32(d))
		}
		total += t.Len()
		binary.NativeEndian.PutUint32(offsets[4*(k+1):], uint32(total*per))
	}
	var vals []byte
	switch {
	case total == 0:
	case packed:
		// the tensors lie one after the other in one block (packList): the batch's values are
		// that stretch of it
		first := slices.IndexFunc(ts, func(t *core.Tensor) bool { return t.Len() > 0 })
		vals = unsafe.Slice((*byte)(ts[first].Data()), total*size)
	default:
		if int64(cap(*staging)) < total*size {
			*staging = make([]byte, total*size)
		}
		vals = (*staging)[:total*size]
		at := int64(0)
		for _, t := range ts {
			if t.Len() == 0 {
				continue
			}
			src := t
			if !t.IsContiguous() {
				c, err := memory.Contiguous(t)
				if err != nil {
					return nil, wrapf(err, "")
				}
				defer c.Release()
				src = c
			}
			b, err := src.ReadOnlyBytes()
			if err != nil {
				return nil, wrapf(err, "")
			}
			at += int64(copy(vals[at:], b))
		}
	}
	st := vt.Storage.(*arrow.StructType)
	listT := st.Field(0).Type.(*arrow.ListType)
	values := array.NewData(listT.Elem(), int(total*per), []*amemory.Buffer{nil, amemory.NewBufferBytes(vals)}, nil, 0, 0)
	defer values.Release()
	list := array.NewData(listT, len(ts), []*amemory.Buffer{nil, amemory.NewBufferBytes(offsets)}, []arrow.ArrayData{values}, 0, 0)
	defer list.Release()
	shapeVals := array.NewData(arrow.PrimitiveTypes.Int32, len(ts)*ndim, []*amemory.Buffer{nil, amemory.NewBufferBytes(shapes)}, nil, 0, 0)
	defer shapeVals.Release()
	shapeCol := array.NewData(st.Field(1).Type, len(ts), []*amemory.Buffer{nil}, []arrow.ArrayData{shapeVals}, 0, 0)
	defer shapeCol.Release()
	sd := array.NewData(st, len(ts), []*amemory.Buffer{nil}, []arrow.ArrayData{list, shapeCol}, 0, 0)
	defer sd.Release()
	storage := array.MakeFromData(sd)
	defer storage.Release()
	ext := array.NewExtensionArrayWithStorage(vt, storage)
	defer ext.Release()
	return array.NewRecordBatch(schema, []arrow.Array{ext}, int64(len(ts))), nil
}

// listReceiver gathers the tensors of a variable-shape stream: each a read-only view of the
// values of its batch's message (holding the message buffer) where they may be viewed, else a
// copy of its own. Every message body it keeps a view of is taken from the server's budget
// (nil in a client) and given back at release.
type listReceiver struct {
	info   Info
	vt     *arrowx.VariableShapeTensorType
	extra  []int64
	per    int64
	budget *budget
	held   int64
	body   *int
	ts     []*core.Tensor
	elems  int64
	// plain: a plain Arrow stream (no dlpack.* metadata), whose number of tensors and elements
	// only its end tells: every tensor is checked against maxBytes (its elements and
	// tensorOverhead, with those before it) before it is kept
	plain    bool
	maxBytes int64
}

func (r *listReceiver) release() {
	for _, t := range r.ts {
		t.Release()
	}
	r.ts = nil
	r.budget.give(r.held)
	r.held = 0
}

// what names the list for an error: its announced count, or how many came so far in a plain
// stream, which announces none.
func (r *listReceiver) what() string {
	if r.plain {
		return fmt.Sprintf("a plain list of %s tensors (%d so far)", r.info.DType, len(r.ts))
	}
	return fmt.Sprintf("a list of %d %s tensors", r.info.Shape[0], r.info.DType)
}

// add takes one batch: every row checked (untrusted) against the schema and what remains.
func (r *listReceiver) add(rec arrow.RecordBatch) error {
	if rec.NumCols() != 1 {
		return errs.Errorf(ErrProtocol, "flightx: record batch of %d columns (want 1)", rec.NumCols())
	}
	arr, ok := rec.Column(0).(*arrowx.VariableShapeTensorArray)
	if !ok {
		return errs.Errorf(ErrProtocol, "flightx: a list's batch of %s", rec.Column(0).DataType())
	}
	n := int64(arr.Len())
	if r.plain && n == 0 {
		return nil
	}
	if !r.plain && (n <= 0 || n > r.info.Shape[0]-int64(len(r.ts))) {
		return errs.Errorf(ErrProtocol, "flightx: batch of %d tensors when %d remain", n, r.info.Shape[0]-int64(len(r.ts)))
	}
	if err := nullRow(arr, r.vt, int64(len(r.ts))); err != nil {
		return err
	}
	rows, err := listRows(arr.Storage().Data(), r.vt)
	if err != nil {
		return err
	}
	body := int64(0)
	if r.body != nil {
		body = int64(*r.body)
	}
	// a view holds the whole message: only when it is little more than the batch's values,
	// offsets and shapes
	view := body <= int64(len(rows.values))+int64(len(rows.offsets)+len(rows.shapes))+3*looseSlack
	if view && body > 0 {
		if err := r.budget.take(body); err != nil {
			return fmt.Errorf("%w, receiving %s", err, r.what())
		}
		r.held += body
	}
	size := int64(r.info.DType.Size())
	// what the batch's tensors hold beyond the message viewed: a header each, and the values
	// of those copied out (all with view false; a misaligned or non-0/1 bool row with it true),
	// no more than the message that came, taken once the batch is read
	cost := n * tensorOverhead
	for i := range n {
		t, err := r.row(rows, i, size, view)
		if err != nil {
			return fmt.Errorf("%w (tensor %d of the list)", err, int64(len(r.ts)))
		}
		if t.Flags()&core.FlagIsCopied != 0 {
			cost += t.NumBytes()
		}
		r.ts = append(r.ts, t)
	}
	if err := r.budget.take(cost); err != nil {
		return fmt.Errorf("%w, receiving %s", err, r.what())
	}
	r.held += cost
	return nil
}

// row makes tensor i of a batch.
func (r *listReceiver) row(rows listData, i, size int64, view bool) (*core.Tensor, error) {
	ndim := int64(r.vt.Ndim())
	wire := make([]int64, ndim)
	elems := int64(1)
	for k := range wire {
		d := int64(int32(binary.NativeEndian.Uint32(rows.shapes[4*(i*ndim+int64(k)):])))
		if d < 0 {
			return nil, errs.Errorf(ErrProtocol, "flightx: a tensor's shape has dimension %d", d)
		}
		hi, lo := bits.Mul64(uint64(elems), uint64(d))
		if hi != 0 || lo > math.MaxInt32 {
			return nil, errs.Errorf(ErrProtocol, "flightx: a tensor's shape %v overflows", wire)
		}
		wire[k], elems = d, int64(lo)
	}
	shape := wire
	if len(r.extra) > 0 || r.info.Ndim == 0 {
		tail := r.extra
		if len(tail) == 0 {
			tail = []int64{1}
		}
		if !slices.Equal(wire[len(wire)-len(tail):], tail) {
			return nil, errs.Errorf(ErrProtocol, "flightx: a %s tensor's shape %v does not end in %v", r.info.DType, wire, tail)
		}
		shape = wire[:r.info.Ndim]
	}
	start := int64(int32(binary.NativeEndian.Uint32(rows.offsets[4*i:])))
	end := int64(int32(binary.NativeEndian.Uint32(rows.offsets[4*(i+1):])))
	if start < 0 || end < start || end-start != elems || end > rows.count {
		return nil, errs.Errorf(ErrProtocol, "flightx: a tensor of shape %v has values %d to %d of %d", wire, start, end, rows.count)
	}
	n := elems / r.per
	if r.plain {
		// what the list takes with this tensor, checked before it is kept: the tensors so far
		// are within maxBytes, so used does not overflow
		used := (int64(len(r.ts))+1)*tensorOverhead + r.elems*size
		if used > r.maxBytes || n > (r.maxBytes-used)/size {
			return nil, errs.Errorf(ErrTooLarge, "flightx: a plain list of %s tensors passes the limit of %d bytes with a tensor "+
				"of shape %v (%d bytes of elements before it, %d bytes a tensor counted besides)", r.info.DType, r.maxBytes,
				shape, r.elems*size, tensorOverhead)
		}
	} else if n > r.info.Elements-r.elems {
		return nil, errs.Errorf(ErrProtocol, "flightx: the list brings more than the %d elements it announced", r.info.Elements)
	}
	r.elems += n
	if n == 0 {
		e, err := core.New(r.info.DType, shape...)
		if err != nil {
			return nil, err
		}
		defer e.Release()
		return e.WithFlags(core.FlagReadOnly)
	}
	w := rows.width
	flat, err := chunkFrom(rows.values[start*w:end*w], rows.buf, r.info.DType, view)
	if err != nil {
		return nil, err
	}
	defer flat.Release()
	return flat.Reshape(shape...)
}

// listData is what the rows of a variable-shape batch are read from, every length checked.
type listData struct {
	offsets []byte // count+1 int32 offsets, from the batch's first row
	shapes  []byte // the rows' shapes, ndim int32 each
	values  []byte // the values the offsets index, from the first
	buf     *amemory.Buffer
	count   int64 // carrier elements in values
	width   int64 // bytes of a carrier element
}

// listRows reads the buffers of a variable-shape batch's storage (untrusted): no nulls, and
// buffers long enough for the rows' offsets, shapes and values.
func listRows(st arrow.ArrayData, vt *arrowx.VariableShapeTensorType) (listData, error) {
	var out listData
	rows, off := int64(st.Len()), int64(st.Offset())
	if st.NullN() != 0 || len(st.Children()) != 2 || off < 0 {
		return out, errs.Errorf(ErrProtocol, "flightx: a list's batch with null tensors or %d children", len(st.Children()))
	}
	dataIdx, shapeIdx := 0, 1
	if vt.Storage.(*arrow.StructType).Field(0).Name == "shape" {
		dataIdx, shapeIdx = 1, 0
	}
	lst, shp := st.Children()[dataIdx], st.Children()[shapeIdx]
	if lst.NullN() != 0 || shp.NullN() != 0 || len(lst.Children()) != 1 || len(shp.Children()) != 1 {
		return out, errs.Errorf(ErrProtocol, "flightx: a list's batch with null data or shapes")
	}
	lo := off + int64(lst.Offset())
	if bs := lst.Buffers(); len(bs) < 2 || bs[1] == nil || lo < 0 || int64(bs[1].Len())/4 < lo+rows+1 {
		return out, errs.Errorf(ErrProtocol, "flightx: a list's batch of %d tensors with short offsets", rows)
	} else {
		out.offsets = bs[1].Bytes()[4*lo : 4*(lo+rows+1)]
	}
	sv := shp.Children()[0]
	ndim := int64(vt.Ndim())
	so := (off+int64(shp.Offset()))*ndim + int64(sv.Offset())
	if bs := sv.Buffers(); sv.NullN() != 0 || len(bs) < 2 || bs[1] == nil || so < 0 || int64(bs[1].Len())/4 < so+rows*ndim {
		return out, errs.Errorf(ErrProtocol, "flightx: a list's batch of %d tensors with short or null shapes", rows)
	} else {
		out.shapes = bs[1].Bytes()[4*so : 4*(so+rows*ndim)]
	}
	v := lst.Children()[0]
	out.width = int64(vt.ValueType().(arrow.FixedWidthDataType).BitWidth() / 8)
	bs := v.Buffers()
	vo := int64(v.Offset())
	if v.NullN() != 0 || vo < 0 || (v.Len() > 0 && (len(bs) < 2 || bs[1] == nil || int64(bs[1].Len())/out.width < vo+int64(v.Len()))) {
		return out, errs.Errorf(ErrProtocol, "flightx: a list's batch with short or null values")
	}
	out.count = int64(v.Len())
	if out.count > 0 {
		out.buf = bs[1]
		out.values = bs[1].Bytes()[vo*out.width : (vo+out.count)*out.width]
	}
	return out, nil
}

// receiveList reads the batches of a variable-shape stream whose schema was decoded into
// info, and returns the list with info, whose count and elements a plain stream (info.Unsized)
// gives only at its end. body points at the length of the message body of the batch rd read
// last.
func receiveList(rd *flight.Reader, info Info, cfg config, body *int) ([]*core.Tensor, Info, error) {
	plain := info.Unsized()
	count := info.Shape[0]
	var vt *arrowx.VariableShapeTensorType
	var extra []int64
	if plain {
		t, ok := rd.Schema().Field(0).Type.(*arrowx.VariableShapeTensorType)
		if !ok {
			return nil, info, errs.Errorf(ErrProtocol, "flightx: a plain list's column of type %s", rd.Schema().Field(0).Type)
		}
		vt = t
	} else {
		if hi, lo := bits.Mul64(uint64(count), tensorOverhead); hi != 0 || lo > math.MaxInt64-uint64(info.Bytes()) ||
			int64(lo)+info.Bytes() > cfg.maxBytes {
			return nil, info, errs.Errorf(ErrTooLarge, "flightx: a list of %d %s tensors of %d bytes together, over the limit of %d (%d bytes a tensor counted besides)",
				count, info.DType, info.Bytes(), cfg.maxBytes, tensorOverhead)
		}
		t, err := listColumn(rd.Schema().Field(0).Type, info)
		if err != nil {
			return nil, info, err
		}
		vt = t
		_, extra, _ = carrier(info.DType)
	}
	per := int64(1)
	for _, d := range extra {
		per *= d
	}
	r := &listReceiver{info: info, vt: vt, extra: extra, per: per, budget: cfg.inFlight, body: body, plain: plain,
		maxBytes: cfg.maxBytes}
	defer r.release()
	for rd.Next() {
		if err := r.add(rd.RecordBatch()); err != nil {
			return nil, info, err
		}
	}
	if err := rd.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, info, readErr(err)
	}
	if plain {
		info.Shape, info.Elements = []int64{int64(len(r.ts))}, r.elems
	} else if int64(len(r.ts)) != count || r.elems != info.Elements {
		return nil, info, errs.Errorf(ErrProtocol, "flightx: the list ended after %d of %d tensors, %d of %d elements", len(r.ts), count,
			r.elems, info.Elements)
	}
	ts := r.ts
	if ts == nil {
		ts = []*core.Tensor{}
	}
	r.ts = nil
	return ts, info, nil
}

// nullRow refuses a batch of a variable-shape stream with a null: a null tensor, a tensor of
// null data or a null shape, or one with a null element or dimension; the error names the
// tensor's index in the list (first, that of the batch's first row) and wraps both ErrProtocol
// and arrowx.ErrNulls.
func nullRow(arr *arrowx.VariableShapeTensorArray, vt *arrowx.VariableShapeTensorType, first int64) error {
	st, ok := arr.Storage().(*array.Struct)
	if !ok || st.NumField() != 2 {
		return errs.Errorf(ErrProtocol, "flightx: a list's batch of storage %s", arr.Storage().DataType())
	}
	dataIdx, shapeIdx := 0, 1
	if vt.Storage.(*arrow.StructType).Field(0).Name == "shape" {
		dataIdx, shapeIdx = 1, 0
	}
	data, ok1 := st.Field(dataIdx).(*array.List)
	shape, ok2 := st.Field(shapeIdx).(*array.FixedSizeList)
	if !ok1 || !ok2 {
		return errs.Errorf(ErrProtocol, "flightx: a list's batch of storage %s", st.DataType())
	}
	vals, dims := data.ListValues(), shape.ListValues()
	if arr.NullN() == 0 && st.NullN() == 0 && data.NullN() == 0 && shape.NullN() == 0 && vals.NullN() == 0 && dims.NullN() == 0 {
		return nil
	}
	// every row needs an offset: a batch that claims more rows than its offsets hold is refused
	// before any row is looked at (listRows would refuse it too)
	if bs := data.Data().Buffers(); len(bs) < 2 || bs[1] == nil || int64(bs[1].Len())/4 < int64(data.Data().Offset())+int64(arr.Len())+1 {
		return errs.Errorf(ErrProtocol, "flightx: a list's batch of %d tensors with short offsets", arr.Len())
	}
	// the first null element and dimension, found once each: a row's check is then constant
	// time, whatever ranges hostile offsets give the rows
	firstNull := func(a arrow.Array) int64 {
		if a.NullN() == 0 {
			return -1
		}
		for j := range a.Len() {
			if a.IsNull(j) {
				return int64(j)
			}
		}
		return -1
	}
	nullVal, nullDim := firstNull(vals), firstNull(dims)
	offs := data.Offsets() // every row's two offsets (checked above)
	for i := range arr.Len() {
		what := ""
		switch {
		case arr.IsNull(i) || st.IsNull(i):
			what = "is null"
		case data.IsNull(i):
			what = "has null data"
		case shape.IsNull(i):
			what = "has a null shape"
		case nullVal >= 0 && int64(offs[i]) <= nullVal && nullVal < int64(offs[i+1]):
			what = "has a null element"
		case nullDim >= 0 && nullDim/int64(vt.Ndim()) == int64(i):
			what = "has a null dimension"
		default:
			continue
		}
		return errs.Errorf(ErrProtocol, "%w", errs.Errorf(arrowx.ErrNulls, "flightx: tensor %d of the list (row %d of its batch) %s: "+
			"a tensor has no nulls", first+int64(i), i, what))
	}
	return errs.Errorf(ErrProtocol, "%w", errs.Errorf(arrowx.ErrNulls, "flightx: a list's batch of %d tensors counts nulls "+
		"that no row has", arr.Len()))
}

// plainListSchema reads the schema of a plain Arrow stream (no dlpack.* metadata) whose one
// column is an arrow.variable_shape_tensor (see DecodeSchema): a list of tensors of the
// column's value type, which must be an Arrow primitive with a DLPack dtype, and number of
// dimensions, without a permutation. Its number of tensors is unknown (Shape [-1], Unsized),
// its elements too (0); every schema metadata key is the list's metadata, none starting with
// "dlpack.".
func plainListSchema(s *arrow.Schema, vt *arrowx.VariableShapeTensorType) (Info, error) {
	if !identityPermutation(vt.Permutation()) {
		return Info{}, errs.Errorf(ErrProtocol, "flightx: column %s has a permutation (plain tensor streams are read in "+
			"row-major order only)", vt)
	}
	dt, err := arrowx.FromDType(vt.ValueType())
	if err == nil {
		var at arrow.DataType
		var extra []int64
		if at, extra, err = carrier(dt); err == nil && (len(extra) > 0 || !arrow.TypeEqual(at, vt.ValueType())) {
			err = errs.Errorf(ErrProtocol, "booleans, bit-packed or arrow.bool8, are not read as bytes")
		}
	}
	if err != nil {
		return Info{}, errs.Errorf(ErrProtocol, "flightx: column of type %s without %s: %v", vt, KeyDType, err)
	}
	info := Info{DType: dt, Shape: []int64{-1}, Variable: true, Ndim: vt.Ndim(), Meta: map[string]string{}}
	md := s.Metadata()
	for i, k := range md.Keys() {
		if strings.HasPrefix(k, keyPrefix) {
			return Info{}, errs.Errorf(ErrProtocol, "flightx: metadata key %q of a plain list without %s uses the reserved prefix %q",
				k, KeyDType, keyPrefix)
		}
		info.Meta[k] = md.Values()[i]
	}
	return info, nil
}

// holdList checks the name and the list of a put (listInfo) and holds the list's tensors (nil
// entries, which listInfo refuses, are skipped) for the caller to release.
func holdList(name string, ts []*core.Tensor, meta map[string]string) (core.Held, Info, error) {
	if err := checkName(name); err != nil {
		return core.Held{}, Info{}, err
	}
	h, err := core.Hold(ts...)
	if err != nil {
		return core.Held{}, Info{}, wrapf(err, "put tensors %q", name)
	}
	info, err := listInfo(name, ts, meta)
	if err != nil {
		h.Release()
		return core.Held{}, Info{}, wrapf(err, "put tensors %q", name)
	}
	return h, info, nil
}

// PutTensors stores a list of tensors under name with its metadata (keys must not start with
// "dlpack."), replacing what was there: tensors of one dtype and number of dimensions (0 to
// core.MaxNdim-2; ErrMismatch for a list that mixes them), each of its own shape, served as one
// arrow.variable_shape_tensor column (see the package documentation). The tensors are copied,
// once, into one block of memory in C order, whose views GetTensors returns and whose stretches
// DoGet's batches carry without gathering them again; the caller keeps its own. An empty list is stored as a list of
// float32 tensors of one dimension (the column needs a type).
func (s *Server) PutTensors(name string, ts []*core.Tensor, meta map[string]string) error {
	h, info, err := holdList(name, ts, meta)
	if err != nil {
		return err
	}
	defer h.Release()
	list, err := packList(ts, info)
	if err != nil {
		return wrapf(err, "put tensors %q", name)
	}
	info.Meta = make(map[string]string, len(meta))
	for k, v := range meta {
		info.Meta[k] = v
	}
	s.store(name, entry{list: list, meta: info.Meta, info: info, packed: true})
	return nil
}

// packList copies the tensors into one block, in C order one after the other, and returns
// read-only tensors over it.
func packList(ts []*core.Tensor, info Info) ([]*core.Tensor, error) {
	size := int64(info.DType.Size())
	parts := make([]memory.Part, len(ts))
	at := int64(0)
	for k, t := range ts {
		parts[k] = memory.Part{Offset: at, DType: info.DType, Shape: t.Shape()}
		at += t.Len() * size
	}
	block, list, err := memory.NewUninitParts(max(at, 1), parts)
	if err != nil {
		return nil, err
	}
	block.Release() // the parts hold it
	out := make([]*core.Tensor, 0, len(ts))
	defer func() {
		for _, t := range list {
			t.Release()
		}
	}()
	for k, t := range ts {
		err := memory.Copy(list[k], t)
		var ro *core.Tensor
		if err == nil {
			ro, err = list[k].WithFlags(core.FlagReadOnly)
		}
		if err != nil {
			for _, o := range out {
				o.Release()
			}
			return nil, wrapf(err, "tensor %d of the list", k)
		}
		out = append(out, ro)
	}
	return out, nil
}

// GetTensors returns views of the list of tensors stored under name by PutTensors or a DoPut
// of a variable-shape stream, this package's or a plain Arrow one (release each when done), and its metadata; a single tensor
// stored under name is refused with ErrMismatch (Get returns it).
func (s *Server) GetTensors(name string) ([]*core.Tensor, map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.tensors[name]
	if !ok {
		return nil, nil, errs.Errorf(ErrNotFound, "flightx: no tensor %q", name)
	}
	if !e.info.Variable {
		return nil, nil, errs.Errorf(ErrMismatch, "flightx: %q is one tensor, %s %v, not a list (Get returns it)", name, e.t.DType(), e.t.Shape())
	}
	out := make([]*core.Tensor, 0, len(e.list))
	for _, t := range e.list {
		v, err := t.View()
		if err != nil {
			for _, o := range out {
				o.Release()
			}
			return nil, nil, err
		}
		out = append(out, v)
	}
	return out, e.meta, nil
}

// GetTensors fetches the list of tensors called name (a variable-shape flight: PutTensors) and
// its metadata. Each tensor is a read-only view of the received message its batch came in (no
// copy after the network read), holding that message until released; one whose values a sender
// misaligned, or bools of bytes other than 0 and 1, is a copy of its own (core.FlagIsCopied).
// A flight of one tensor is refused with ErrMismatch (Get fetches it); a list over the client's
// WithMaxBytes (its elements, and 64 bytes a tensor) with ErrTooLarge, before anything is
// allocated.
//
// A plain Arrow stream (no dlpack.* metadata, from pyarrow or arrow-go) whose one column is an
// arrow.variable_shape_tensor of an Arrow primitive is read too: one tensor a row, across all its
// batches, of the column's value type and number of dimensions, views of their messages as
// above. Its size is learnt as it comes: the stream is refused with ErrTooLarge as soon as the
// tensors kept so far and the next one would pass WithMaxBytes, before that one is kept. A null
// row (a null tensor, data, shape, element or dimension) is refused with an error that names the
// tensor's index and wraps both ErrProtocol and arrowx.ErrNulls.
func (c *Client) GetTensors(ctx context.Context, name string) ([]*core.Tensor, map[string]string, error) {
	if err := checkName(name); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream, whatever happened
	stream, err := c.fc.DoGet(ctx, &flight.Ticket{Ticket: []byte(name)})
	if err != nil {
		return nil, nil, wrapf(transportErr(err), "get tensors %q", name)
	}
	info, t, list, err := readAny(stream, c.cfg, nil, nil, nil, true)
	if err != nil {
		return nil, nil, wrapf(err, "get tensors %q", name)
	}
	if !info.Variable {
		t.Release()
		return nil, nil, errs.Errorf(ErrMismatch, "flightx: %q is one tensor, %s %v, not a list (Get fetches it)", name, info.DType, info.Shape)
	}
	return list, info.Meta, nil
}

// PutTensors sends a list of tensors to the server under name, with its metadata (keys must
// not start with "dlpack."), as one arrow.variable_shape_tensor column: tensors of one dtype and
// number of dimensions (0 to core.MaxNdim-2; ErrMismatch for a list that mixes them), each of
// its own shape, in batches of whole tensors of at most the chunk size (WithChunkBytes; one
// tensor at least). Each batch's tensors are copied once into one buffer (Arrow's list holds its
// values in one). The server refuses a list over its WithMaxBytes with ErrTooLarge.
func (c *Client) PutTensors(ctx context.Context, name string, ts []*core.Tensor, meta map[string]string) error {
	h, info, err := holdList(name, ts, meta)
	if err != nil {
		return err
	}
	defer h.Release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.fc.DoPut(ctx)
	if err != nil {
		return wrapf(transportErr(err), "put tensors %q", name)
	}
	desc := &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}}
	sendErr := sendList(stream.Send, desc, info, ts, c.cfg.chunkBytes, c.cfg.mem, false)
	return putVerdict(stream, sendErr, "put tensors", name)
}
