package flightx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
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

// payloadWriter turns IPC payloads into FlightData messages. A record batch whose body is one
// buffer of a multiple of 8 bytes (every chunk of a tensor of 8n bytes) is sent with that buffer
// as the message body: for a chunk, the tensor's own memory, which gRPC's marshaller reads
// directly. Other bodies are assembled in a scratch buffer first.
type payloadWriter struct {
	send       func(*flight.FlightData) error
	descriptor *flight.FlightDescriptor
	scratch    bytes.Buffer
}

func (p *payloadWriter) Start() error { return nil }
func (p *payloadWriter) Close() error { return nil }

func (p *payloadWriter) WritePayload(pl ipc.Payload) error {
	meta := pl.Meta()
	defer meta.Release()
	fd := &flight.FlightData{DataHeader: meta.Bytes(), FlightDescriptor: p.descriptor}
	p.descriptor = nil
	// find out whether the body is one buffer that needs no padding
	var one []byte
	n := 0
	pw := &countWriter{}
	if err := pl.SerializeBody(pw); err != nil {
		return err
	}
	if pw.writes == 1 && pw.n%8 == 0 {
		one, n = pw.last, 1
	}
	if n == 1 {
		fd.DataBody = one
	} else if pw.n > 0 {
		p.scratch.Reset()
		if err := pl.SerializeBody(&p.scratch); err != nil {
			return err
		}
		fd.DataBody = p.scratch.Bytes()
	}
	return p.send(fd)
}

// countWriter records how a body would be written without copying it: the number of writes,
// the bytes, and the last slice written.
type countWriter struct {
	writes int
	n      int
	last   []byte
}

func (c *countWriter) Write(b []byte) (int, error) {
	c.writes++
	c.n += len(b)
	c.last = b
	return len(b), nil
}

// sendTensor writes t (a view the caller holds) as a stream: the schema, then batches of at most
// chunkBytes, each a column over the tensor's own memory when t is C-contiguous, else over one
// C-order copy made first.
func sendTensor(send func(*flight.FlightData) error, desc *flight.FlightDescriptor, info Info, t *core.Tensor,
	chunkBytes int, mem amemory.Allocator) error {
	return sendTensorAs(send, desc, info, t, chunkBytes, mem, false)
}

// sendTensorAs is sendTensor, in the flat column of the earlier format with legacy.
func sendTensorAs(send func(*flight.FlightData) error, desc *flight.FlightDescriptor, info Info, t *core.Tensor,
	chunkBytes int, mem amemory.Allocator, legacy bool) error {
	h, err := core.Hold(t)
	if err != nil {
		return err
	}
	defer h.Release()
	if !t.HostAccessible() {
		return errs.Errorf(core.ErrNotHost, "flightx: %s is not in host memory (sending it)", t)
	}
	src := t
	if !t.IsContiguous() {
		if src, err = memory.Contiguous(t); err != nil {
			return wrapf(err, "")
		}
	}
	schema, col, err := schemaFor(info, chunkBytes, legacy)
	if err != nil {
		return err
	}
	pw := &payloadWriter{send: send, descriptor: desc}
	w := ipc.NewWriterWithPayloadWriter(pw, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	defer w.Close()
	size := int64(info.DType.Size())
	total := info.Len()
	per := max(int64(chunkBytes)/size, 1)
	base := unsafe.Slice((*byte)(src.Data()), total*size)
	if col != nil {
		if err := sendRows(w, schema, *col, base, info, chunkBytes, mem); err != nil {
			return err
		}
		return w.Close()
	}
	for off := int64(0); off < total; off += per {
		n := min(per, total-off)
		buf := amemory.NewBufferBytes(base[off*size : (off+n)*size])
		data := array.NewData(schema.Field(0).Type, int(n), []*amemory.Buffer{nil, buf}, nil, 0, 0)
		col := array.MakeFromData(data)
		data.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, n)
		col.Release()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return w.Close()
}

// sendRows writes the elements in base as batches of a tensor column, each of as many rows as
// fit chunkBytes (one at least), over base itself.
func sendRows(w *ipc.Writer, schema *arrow.Schema, col tensorColumn, base []byte, info Info, chunkBytes int,
	mem amemory.Allocator) error {
	size := int64(info.DType.Size())
	rows, per := col.rows(info), col.batchRows(size, chunkBytes)
	listLen := int64(col.typ.Storage.(*arrow.FixedSizeListType).Len())
	for r := int64(0); r < rows; r += per {
		n := min(per, rows-r)
		vals := base[r*col.rowElem*size : (r+n)*col.rowElem*size]
		buf := amemory.NewBufferBytes(vals)
		child := array.NewData(col.typ.ValueType(), int(n*listLen), []*amemory.Buffer{nil, buf}, nil, 0, 0)
		buf.Release()
		list := array.NewData(col.typ.Storage, int(n), []*amemory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
		child.Release()
		storage := array.MakeFromData(list)
		list.Release()
		ext := array.NewExtensionArrayWithStorage(col.typ, storage)
		storage.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{ext}, n)
		ext.Release()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// Sizes that decide how a receiver keeps the batches of a tensor that is not yet assembled.
const (
	// minStage is the smallest staging buffer a receiver takes for batches it copies.
	minStage = 64 << 10
	// minView is the smallest batch kept as a view of its message until the tensor is
	// assembled: smaller ones are copied into staging, so that a stream of tiny batches costs
	// its bytes and not a tensor header per batch.
	minView = 64 << 10
	// looseSlack is how many bytes a message body may carry beyond its values and still be
	// kept as a view (IPC pads each buffer to 8 or 64 bytes; a validity bitmap of no nulls
	// takes none): a view holds the whole body.
	looseSlack = 4 << 10
)

// receiver assembles a tensor from the batches of a stream. It takes memory as batches come,
// never what the stream announces: until half the tensor has come it keeps the batches (large
// ones as views of their messages, small ones copied into staging buffers that grow with what
// came), then allocates the whole tensor and copies them in. So it holds at most about twice
// what arrived, and one and a half times the tensor's size while assembling it. Every byte it
// holds is taken from the server's budget (nil in a client) and given back at release.
type receiver struct {
	info   Info
	got    int64 // elements received
	budget *budget
	held   int64        // bytes taken from budget
	msgs   *verified    // what the stream's reader reads: the body of the batch being added
	spent  bool         // the batch just added was copied: nothing of the receiver's is over its body
	single *core.Tensor // the first chunk, while it is the whole tensor
	parts  []part       // the batches so far, until half the tensor came
	dst    *core.Tensor // the assembled tensor (or GetInto's destination), once half came
	// an unsized stream (a plain Arrow sender: info.Shape[0] unknown, 0 here until the end)
	// keeps every batch until it ends, up to limit elements
	open  bool
	limit int64
	rows  int64
}

// remaining is how many more elements the stream may bring.
func (r *receiver) remaining() int64 {
	if r.open {
		return r.limit - r.got
	}
	return r.info.Len() - r.got
}

// part is batches kept before the tensor is assembled: a view of one message's values, or a
// staging buffer of copied values with room for more.
type part struct {
	b    []byte
	buf  *amemory.Buffer // the message buffer b is a view of; nil for staging
	cost int64           // bytes taken from the budget for it
	body []byte          // the whole body of that message (see spendParts)
}

func (r *receiver) release() {
	if r.single != nil {
		r.single.Release()
		r.single = nil
	}
	if r.dst != nil {
		r.dst.Release()
		r.dst = nil
	}
	r.dropParts()
	r.budget.give(r.held)
	r.held = 0
}

// spendParts gives the bodies of the messages that parts are views of to the body pool, once
// their values were copied into the tensor: nothing else points into them (the reader's batches
// are long released). The parts are dropped.
func (r *receiver) spendParts() {
	for i := range r.parts {
		if p := &r.parts[i]; p.buf != nil {
			p.buf.Release()
			p.buf = nil
			putBody(p.body)
		}
	}
	r.dropParts()
}

func (r *receiver) dropParts() {
	for _, p := range r.parts {
		if p.buf != nil {
			p.buf.Release()
		}
		r.budget.give(p.cost)
		r.held -= p.cost
	}
	r.parts = nil
}

// take reserves n bytes of the budget for this receiver.
func (r *receiver) take(n int64) error {
	if err := r.budget.take(n); err != nil {
		return fmt.Errorf("%w, receiving %s %v", err, r.info.DType, r.info.Shape)
	}
	r.held += n
	return nil
}

// batchValues checks a batch against the schema and the elements still expected and returns
// the bytes of its values and the buffer that holds them.
func batchValues(rec arrow.RecordBatch, info Info, want int64) ([]byte, *amemory.Buffer, error) {
	if rec.NumCols() != 1 {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: record batch of %d columns (want 1)", rec.NumCols())
	}
	d := rec.Column(0).Data()
	if ft, ok := d.DataType().(*arrowx.FixedShapeTensorType); ok {
		return rowValues(d, ft, info, want)
	}
	n, off := int64(d.Len()), int64(d.Offset())
	if n <= 0 || n > want {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: batch of %d elements when %d remain", n, want)
	}
	if d.NullN() != 0 {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: batch with %d nulls", d.NullN())
	}
	bs := d.Buffers()
	size := int64(info.DType.Size())
	if len(bs) < 2 || bs[1] == nil || off < 0 || int64(bs[1].Len())/size < off+n {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: values buffer too short for %d elements", n)
	}
	return bs[1].Bytes()[off*size : (off+n)*size], bs[1], nil
}

// rowValues is batchValues for a batch of a tensor column: the bytes of its rows' elements and
// the buffer that holds them.
func rowValues(d arrow.ArrayData, ft *arrowx.FixedShapeTensorType, info Info, want int64) ([]byte, *amemory.Buffer, error) {
	col, err := columnFrom(ft, info)
	if err != nil {
		return nil, nil, err
	}
	rows, off := int64(d.Len()), int64(d.Offset())
	if rows <= 0 || col.rowElem == 0 || rows > want/col.rowElem {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: batch of %d rows of %d elements when %d elements remain", rows,
			col.rowElem, want)
	}
	if d.NullN() != 0 {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: batch with %d null rows", d.NullN())
	}
	if len(d.Children()) != 1 {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: tensor column with %d children", len(d.Children()))
	}
	c := d.Children()[0]
	if c.NullN() != 0 {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: batch with %d null elements", c.NullN())
	}
	listLen := int64(ft.Storage.(*arrow.FixedSizeListType).Len())
	start, count := off*listLen+int64(c.Offset()), rows*listLen
	bs := c.Buffers()
	if off < 0 || start < 0 || len(bs) < 2 || bs[1] == nil {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: batch of %d rows without its values buffer", rows)
	}
	width := int64(ft.ValueType().(arrow.FixedWidthDataType).BitWidth() / 8)
	if int64(bs[1].Len())/width < start+count {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: values buffer of %d bytes too short for %d rows of %d",
			bs[1].Len(), rows, listLen)
	}
	return bs[1].Bytes()[start*width : (start+count)*width], bs[1], nil
}

// viewable reports whether values may be handed out where they lie: aligned for their dtype
// (IPC aligns every buffer to 8 bytes; values a sender put elsewhere would be read through
// misaligned pointers) and, for bools, every byte 0 or 1 (a Go bool holding anything else makes
// x && !x true).
func viewable(vals []byte, dt core.DLDataType) bool {
	if uintptr(unsafe.Pointer(&vals[0]))%uintptr(min(dt.Size(), 8)) != 0 {
		return false
	}
	if dt.Code == core.CodeBool {
		for _, v := range vals {
			if v > 1 {
				return false
			}
		}
	}
	return true
}

// normalise makes every byte of bool values 0 or 1 (nonzero becomes 1), as numpyx does with
// the bool data of files; other dtypes are left alone.
func normalise(b []byte, dt core.DLDataType) {
	if dt.Code != core.CodeBool {
		return
	}
	for i, v := range b {
		if v > 1 {
			b[i] = 1
		}
	}
}

// chunkOf makes a 1-D tensor over the values of a batch's column, holding its buffer, after
// checking the batch against the schema and the elements still expected; values that are not
// viewable are copied (and bools normalised) instead.
func chunkOf(rec arrow.RecordBatch, info Info, want int64) (*core.Tensor, error) {
	vals, buf, err := batchValues(rec, info, want)
	if err != nil {
		return nil, err
	}
	return chunkFrom(vals, buf, info.DType, true)
}

// chunkFrom makes a 1-D tensor of vals: a read-only view holding buf when view is true and
// vals are viewable, else a copy of its own (flagged core.FlagIsCopied).
func chunkFrom(vals []byte, buf *amemory.Buffer, dt core.DLDataType, view bool) (*core.Tensor, error) {
	n := int64(len(vals) / dt.Size())
	if !view || buf == nil || !viewable(vals, dt) {
		t, err := core.New(dt, n)
		if err != nil {
			return nil, err
		}
		b := unsafe.Slice((*byte)(t.Data()), len(vals))
		copy(b, vals)
		normalise(b, dt)
		return t.WithFlags(core.FlagIsCopied)
	}
	buf.Retain()
	return core.Wrap(core.Desc{Data: unsafe.Pointer(&vals[0]), Device: core.CPUDevice, DType: dt,
		Shape: []int64{n}, Flags: core.FlagReadOnly}, buf.Release)
}

// bodyLen is the length of the message body of the batch being added (what a view of its
// values holds).
func (r *receiver) bodyLen(vals []byte) int64 {
	if r.msgs == nil {
		return int64(len(vals))
	}
	return int64(r.msgs.body)
}

// add takes one batch.
func (r *receiver) add(rec arrow.RecordBatch) error {
	if r.open {
		return r.addOpen(rec)
	}
	total, size := r.info.Len(), int64(r.info.DType.Size())
	vals, buf, err := batchValues(rec, r.info, total-r.got)
	if err != nil {
		return err
	}
	n := int64(len(vals)) / size
	body := r.bodyLen(vals)
	r.spent = false
	switch {
	case r.dst != nil:
		err = r.place(vals, r.got*size)
		r.spent = err == nil
	case r.got == 0 && n == total:
		// the whole tensor in one batch: a view of the message, unless the message carries
		// much more than the values (a view would hold it all) or they are not viewable
		view, cost := buf != nil && body <= int64(len(vals))+looseSlack, body
		if !view {
			cost = int64(len(vals))
		}
		if err := r.take(cost); err != nil {
			return err
		}
		r.single, err = chunkFrom(vals, buf, r.info.DType, view)
	case 2*(r.got+n) >= total || (r.budget == nil && r.got == 0):
		// a client (no budget) allocates the tensor at the first batch, so that each batch is
		// copied once while it is still in the cache, instead of being kept as a view and copied
		// cold at half: what it asked for, within WithMaxBytes, and a large tensor's mapped pages
		// (amemory.NewUninit) are committed only as the batches write them
		err = r.assemble(vals)
		r.spent = err == nil
	default:
		err = r.keep(vals, buf, body)
	}
	if err != nil {
		return err
	}
	r.got += n
	return nil
}

// addOpen takes one batch of an unsized stream: into GetInto's destination, or kept until the
// stream ends, within the receiver's limit.
func (r *receiver) addOpen(rec arrow.RecordBatch) error {
	per := int64(1)
	for _, d := range r.info.Shape[1:] {
		per *= d
	}
	if rows := rec.NumRows(); rows > 0 && per > 0 && rows > r.remaining()/per {
		if r.dst != nil {
			return errs.Errorf(ErrMismatch, "flightx: the stream holds more than the destination's %d elements", r.limit)
		}
		return errs.Errorf(ErrTooLarge, "flightx: an unsized stream of %s rows of %v passes %d elements "+
			"(the limit of %d bytes)", r.info.DType, r.info.Shape[1:], r.limit, r.limit*int64(r.info.DType.Size()))
	}
	vals, buf, err := batchValues(rec, r.info, r.remaining())
	if err != nil {
		return err
	}
	size := int64(r.info.DType.Size())
	if r.dst != nil {
		err = r.place(vals, r.got*size)
	} else {
		err = r.keep(vals, buf, r.bodyLen(vals))
	}
	if err != nil {
		return err
	}
	r.got += int64(len(vals)) / size
	r.rows += rec.NumRows()
	return nil
}

// closeOpen learns an unsized stream's shape once it ended and puts its tensor together: GetInto's
// destination must have been filled; one batch kept as a view is the tensor (no copy), any more
// are copied into one.
func (r *receiver) closeOpen() error {
	r.info.Shape[0] = r.rows
	switch {
	case r.dst != nil:
		if r.got != r.dst.Len() {
			return errs.Errorf(ErrMismatch, "flightx: the stream held %s %v, the destination %d elements", r.info.DType,
				r.info.Shape, r.dst.Len())
		}
	case len(r.parts) == 1 && r.parts[0].buf != nil:
		p := r.parts[0]
		t, err := chunkFrom(p.b, p.buf, r.info.DType, true)
		if err != nil {
			return err
		}
		r.single = t
		r.dropParts()
	case r.got > 0:
		if err := r.take(r.info.Bytes()); err != nil {
			return err
		}
		dst, err := memory.NewUninit(r.info.DType, r.info.Len())
		if err != nil {
			return err
		}
		r.dst = dst
		off := int64(0)
		for _, p := range r.parts {
			if err := r.place(p.b, off); err != nil {
				return err
			}
			off += int64(len(p.b))
		}
		r.spendParts()
	}
	return nil
}

// keep holds a batch until the tensor is assembled: a large one whose message is little more
// than its values as a view, any other copied into staging.
func (r *receiver) keep(vals []byte, buf *amemory.Buffer, body int64) error {
	if buf != nil && len(vals) >= minView && body <= int64(len(vals))+looseSlack && viewable(vals, r.info.DType) {
		if err := r.take(body); err != nil {
			return err
		}
		buf.Retain()
		p := part{b: vals, buf: buf, cost: body}
		if r.msgs != nil { // the view's message body is the part's now
			p.body, r.msgs.last = r.msgs.last, nil
		}
		r.parts = append(r.parts, p)
		return nil
	}
	if k := len(r.parts) - 1; k >= 0 && r.parts[k].buf == nil && cap(r.parts[k].b)-len(r.parts[k].b) >= len(vals) {
		p := &r.parts[k]
		at := len(p.b)
		p.b = append(p.b, vals...)
		normalise(p.b[at:], r.info.DType)
		return nil
	}
	// a new staging buffer: as large as what came so far (so they double), within what is left
	size := int64(r.info.DType.Size())
	c := min(r.remaining()*size, max(minStage, r.got*size, int64(len(vals))))
	if err := r.take(c); err != nil {
		return err
	}
	b := append(make([]byte, 0, c), vals...)
	normalise(b, r.info.DType)
	r.parts = append(r.parts, part{b: b, cost: c})
	return nil
}

// assemble allocates the whole tensor once half of it came, copies what was kept and this
// batch's values into it, and lets the kept batches go.
func (r *receiver) assemble(vals []byte) error {
	if err := r.take(r.info.Bytes()); err != nil {
		return err
	}
	// NewUninit: every byte is written (place) before the tensor is handed out, and a large
	// one comes from core's cache of mapped blocks, its pages already faulted in when a tensor
	// of the size was released before, instead of zeroed Go memory faulted in anew each time.
	dst, err := memory.NewUninit(r.info.DType, r.info.Len())
	if err != nil {
		return err
	}
	r.dst = dst
	off := int64(0)
	for _, p := range r.parts {
		if err := r.place(p.b, off); err != nil {
			return err
		}
		off += int64(len(p.b))
	}
	r.spendParts()
	return r.place(vals, off)
}

// place copies values into dst at byte off, normalising bools.
func (r *receiver) place(vals []byte, off int64) error {
	h, err := core.Hold(r.dst)
	if err != nil {
		return err
	}
	defer h.Release()
	dst, err := r.dst.Bytes()
	if err != nil {
		return err
	}
	b := dst[off : off+int64(len(vals))]
	copy(b, vals)
	normalise(b, r.info.DType)
	return nil
}

// finish returns the tensor once every element came.
func (r *receiver) finish() (*core.Tensor, error) {
	if r.open {
		if err := r.closeOpen(); err != nil {
			return nil, err
		}
	}
	if r.got != r.info.Len() {
		return nil, errs.Errorf(ErrProtocol, "flightx: stream ended after %d of %d elements", r.got, r.info.Len())
	}
	var t *core.Tensor
	var err error
	switch {
	case r.single != nil:
		t, err = r.single.Reshape(r.info.Shape...)
	case r.dst != nil && r.got == 0: // GetInto of an empty tensor
		t, err = r.dst.Reshape(r.info.Shape...)
	case r.dst != nil:
		var v *core.Tensor
		if v, err = r.dst.Reshape(r.info.Shape...); err == nil {
			t, err = v.WithFlags(core.FlagIsCopied)
			v.Release() // t holds the memory: v, dropped unreleased, would hold the block until a collection
		}
	default: // no elements
		t, err = core.New(r.info.DType, r.info.Shape...)
	}
	r.release()
	return t, err
}

// receive reads a whole tensor from rd, whose schema was decoded into info, into a new tensor,
// or into into's memory (a writable C-contiguous tensor of info's dtype and shape), or chunk by
// chunk into each. v is what rd reads: the length of the message body of the batch rd read last,
// and that body, which goes back to the body pool once it is copied into the tensor.
func receive(rd *flight.Reader, info Info, cfg config, v *verified, into *core.Tensor, each func(chunk *core.Tensor, off int64) error) (*core.Tensor, error) {
	open := info.Unsized()
	if open { // the receiver's own copy, the first dimension counted as rows come
		info.Shape = slices.Clone(info.Shape)
		info.Shape[0] = 0
	}
	if info.Bytes() > cfg.maxBytes {
		return nil, errs.Errorf(ErrTooLarge, "flightx: %s %v is %d bytes, over the limit of %d", info.DType, info.Shape, info.Bytes(), cfg.maxBytes)
	}
	r := &receiver{info: info, budget: cfg.inFlight, msgs: v, open: open,
		limit: cfg.maxBytes / int64(info.DType.Size())}
	if into != nil {
		if open {
			r.limit = into.Len()
		}
		if into.DType() != info.DType || (!open && into.Len() != info.Len()) || !into.IsContiguous() || into.ReadOnly() || !into.HostAccessible() {
			return nil, errs.Errorf(ErrMismatch, "flightx: the stream holds %s %v, the destination is %s", info.DType, info.Shape, into)
		}
		flat, err := into.Reshape(into.Len())
		if err != nil {
			return nil, err
		}
		r.dst = flat
	}
	defer r.release()
	for rd.Next() {
		if each != nil {
			chunk, err := chunkOf(rd.RecordBatch(), info, r.remaining())
			if err != nil {
				return nil, err
			}
			err = each(chunk, r.got)
			r.got += chunk.Len()
			chunk.Release()
			if err != nil {
				return nil, err
			}
			continue
		}
		if err := r.add(rd.RecordBatch()); err != nil {
			return nil, err
		}
		if r.spent { // the chunks given to each may be held: only here is a body known to be free
			v.spent()
		}
	}
	if err := rd.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, readErr(err)
	}
	if each != nil {
		if !open && r.got != info.Len() {
			return nil, errs.Errorf(ErrProtocol, "flightx: stream ended after %d of %d elements", r.got, info.Len())
		}
		return nil, nil
	}
	return r.finish()
}

// readErr classifies an error of the IPC reader: a gRPC status is the transport's, anything
// else is a malformed stream.
func readErr(err error) error {
	if errors.Is(err, ErrIdle) {
		return err
	}
	if isStatus(err) {
		return transportErr(err)
	}
	if strings.HasPrefix(err.Error(), "flightx: ") { // a refusal of verifyHeader, through the reader
		return errs.Errorf(ErrProtocol, "%v", err)
	}
	return errs.Errorf(ErrProtocol, "flightx: unreadable tensor stream: %v", err)
}

// readStream reads a tensor stream from src: the schema (decoded into info), then the batches,
// into one tensor (each == nil) or chunk by chunk into each. With a tensor, info's shape is the
// tensor's (a plain stream's first dimension counted). before, if not nil, sees the first
// message's descriptor and the schema before any batch is read, and may refuse. A panic of the
// IPC reader on garbage becomes ErrProtocol; a panic of each, the caller's code, goes on.
func readStream(src flight.DataStreamReader, cfg config, before func(*flight.FlightDescriptor, *Info) error,
	into *core.Tensor, each func(Info, *core.Tensor, int64) error) (info Info, t *core.Tensor, err error) {
	info, t, _, err = readAny(src, cfg, before, into, each, false)
	return info, t, err
}

// readAny is readStream that, with lists, also reads a variable-shape stream (info.Variable)
// into a list of tensors; without, it refuses one with ErrMismatch.
func readAny(src flight.DataStreamReader, cfg config, before func(*flight.FlightDescriptor, *Info) error,
	into *core.Tensor, each func(Info, *core.Tensor, int64) error, lists bool) (info Info, t *core.Tensor, list []*core.Tensor, err error) {
	inEach := false
	defer func() {
		if r := recover(); r != nil {
			if inEach {
				panic(r)
			}
			if t != nil {
				t.Release()
			}
			for _, x := range list {
				x.Release()
			}
			t, list, err = nil, nil, errs.Errorf(ErrProtocol, "flightx: unreadable tensor stream: %v", r)
		}
	}()
	v := &verified{src: src}
	rd, err := flight.NewRecordReader(v, ipc.WithAllocator(cfg.mem))
	if err != nil {
		return info, nil, nil, readErr(err)
	}
	defer rd.Release()
	if info, err = DecodeSchema(rd.Schema()); err != nil {
		return info, nil, nil, err
	}
	if before != nil {
		if err := before(rd.LatestFlightDescriptor(), &info); err != nil {
			return info, nil, nil, err
		}
	}
	if info.Variable {
		if !lists || into != nil || each != nil {
			if info.Unsized() {
				return info, nil, nil, errs.Errorf(ErrMismatch, "flightx: the flight is a plain list of %s tensors of %d dimensions "+
					"of their own shapes (GetTensors fetches it)", info.DType, info.Ndim)
			}
			return info, nil, nil, errs.Errorf(ErrMismatch, "flightx: the flight is a list of %d %s tensors of their own shapes "+
				"(GetTensors fetches it)", info.Shape[0], info.DType)
		}
		list, info, err = receiveList(rd, info, cfg, &v.body)
		return info, nil, list, err
	}
	var inner func(*core.Tensor, int64) error
	if each != nil {
		inner = func(c *core.Tensor, off int64) error {
			inEach = true
			err := each(info, c, off)
			inEach = false
			return err
		}
	}
	t, err = receive(rd, info, cfg, v, into, inner)
	if t != nil && info.Unsized() { // a plain stream has ended: its rows are known
		info.Shape = t.Shape()
	}
	return info, t, nil, err
}
