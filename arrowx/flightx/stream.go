package flightx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
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
	chunkBytes int, mem memory.Allocator) error {
	h, err := core.Hold(t)
	if err != nil {
		return err
	}
	defer h.Release()
	if !t.HostAccessible() {
		return fmt.Errorf("flightx: sending %s: %w", t, core.ErrNotHost)
	}
	src := t
	if !t.IsContiguous() {
		if src, err = adapters.Contiguous(t); err != nil {
			return fmt.Errorf("flightx: %w", err)
		}
	}
	schema, err := schemaOf(info)
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
	for off := int64(0); off < total; off += per {
		n := min(per, total-off)
		buf := memory.NewBufferBytes(base[off*size : (off+n)*size])
		data := array.NewData(schema.Field(0).Type, int(n), []*memory.Buffer{nil, buf}, nil, 0, 0)
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

// receiver assembles a tensor from the batches of a stream.
type receiver struct {
	info     Info
	maxBytes int64
	got      int64        // elements received
	single   *core.Tensor // the first chunk, while it is the only one
	dst      *core.Tensor // the assembled tensor, once a second chunk came
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
}

// chunkOf makes a 1-D tensor over the values of a batch's column, holding its buffer, after
// checking the batch against the schema and the elements still expected; values misaligned for
// their dtype are copied instead.
func chunkOf(rec arrow.RecordBatch, info Info, want int64) (*core.Tensor, error) {
	if rec.NumCols() != 1 {
		return nil, fmt.Errorf("%w: batch of %d columns", ErrProtocol, rec.NumCols())
	}
	d := rec.Column(0).Data()
	n, off := int64(d.Len()), int64(d.Offset())
	if n <= 0 || n > want {
		return nil, fmt.Errorf("%w: batch of %d elements when %d remain", ErrProtocol, n, want)
	}
	if d.NullN() != 0 {
		return nil, fmt.Errorf("%w: batch with %d nulls", ErrProtocol, d.NullN())
	}
	bs := d.Buffers()
	size := int64(info.DType.Size())
	if len(bs) < 2 || bs[1] == nil || off < 0 || int64(bs[1].Len())/size < off+n {
		return nil, fmt.Errorf("%w: values buffer too short for %d elements", ErrProtocol, n)
	}
	buf := bs[1]
	b := buf.Bytes()
	vals := b[off*size : (off+n)*size]
	if uintptr(unsafe.Pointer(&vals[0]))%uintptr(min(size, 8)) != 0 {
		// IPC aligns every buffer to 8 bytes; values a sender put elsewhere would be read
		// through misaligned pointers, so they are copied into a tensor of their own
		t, err := core.New(info.DType, n)
		if err != nil {
			return nil, err
		}
		copy(unsafe.Slice((*byte)(t.Data()), len(vals)), vals)
		return t.WithFlags(core.FlagIsCopied)
	}
	buf.Retain()
	return core.Wrap(core.Desc{Data: unsafe.Pointer(&vals[0]), Device: core.CPUDevice, DType: info.DType,
		Shape: []int64{n}, Flags: core.FlagReadOnly}, buf.Release)
}

// add takes one batch.
func (r *receiver) add(rec arrow.RecordBatch) error {
	total := r.info.Len()
	chunk, err := chunkOf(rec, r.info, total-r.got)
	if err != nil {
		return err
	}
	defer func() {
		if chunk != nil {
			chunk.Release()
		}
	}()
	n := chunk.Len()
	if r.dst == nil && r.got == 0 && n == total {
		r.single, chunk = chunk, nil
		r.got = n
		return nil
	}
	if r.dst == nil {
		if r.dst, err = core.New(r.info.DType, total); err != nil {
			return err
		}
		if r.single != nil {
			if err := r.place(r.single, 0); err != nil {
				return err
			}
			r.single.Release()
			r.single = nil
		}
	}
	if err := r.place(chunk, r.got); err != nil {
		return err
	}
	r.got += n
	return nil
}

// place copies a chunk into dst at element off.
func (r *receiver) place(chunk *core.Tensor, off int64) error {
	h, err := core.Hold(chunk, r.dst)
	if err != nil {
		return err
	}
	defer h.Release()
	src, err := chunk.ReadOnlyBytes()
	if err != nil {
		return err
	}
	dst, err := r.dst.Bytes()
	if err != nil {
		return err
	}
	copy(dst[off*int64(r.info.DType.Size()):], src)
	return nil
}

// finish returns the tensor once every element came.
func (r *receiver) finish() (*core.Tensor, error) {
	if r.got != r.info.Len() {
		return nil, fmt.Errorf("%w: stream ended after %d of %d elements", ErrProtocol, r.got, r.info.Len())
	}
	var t *core.Tensor
	var err error
	switch {
	case r.single != nil:
		t, err = r.single.Reshape(r.info.Shape...)
	case r.dst != nil && r.got == 0: // GetInto of an empty tensor
		t, err = r.dst.Reshape(r.info.Shape...)
	case r.dst != nil:
		if t, err = r.dst.Reshape(r.info.Shape...); err == nil {
			t, err = t.WithFlags(core.FlagIsCopied)
		}
	default: // no elements
		t, err = core.New(r.info.DType, r.info.Shape...)
	}
	r.release()
	return t, err
}

// receive reads a whole tensor from rd, whose schema was decoded into info, into a new tensor,
// or into into's memory (a writable C-contiguous tensor of info's dtype and shape), or chunk by
// chunk into each.
func receive(rd *flight.Reader, info Info, maxBytes int64, into *core.Tensor, each func(chunk *core.Tensor, off int64) error) (*core.Tensor, error) {
	if info.Bytes() > maxBytes {
		return nil, fmt.Errorf("%w: %s %v is %d bytes, the limit %d", ErrTooLarge, info.DType, info.Shape, info.Bytes(), maxBytes)
	}
	r := &receiver{info: info, maxBytes: maxBytes}
	if into != nil {
		if into.DType() != info.DType || into.Len() != info.Len() || !into.IsContiguous() || into.ReadOnly() || !into.HostAccessible() {
			return nil, fmt.Errorf("%w: the stream holds %s %v, the destination is %s", ErrMismatch, info.DType, info.Shape, into)
		}
		flat, err := into.Reshape(info.Len())
		if err != nil {
			return nil, err
		}
		r.dst = flat
	}
	defer r.release()
	for rd.Next() {
		if each != nil {
			chunk, err := chunkOf(rd.RecordBatch(), info, info.Len()-r.got)
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
	}
	if err := rd.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, readErr(err)
	}
	if each != nil {
		if r.got != info.Len() {
			return nil, fmt.Errorf("%w: stream ended after %d of %d elements", ErrProtocol, r.got, info.Len())
		}
		return nil, nil
	}
	return r.finish()
}

// readErr classifies an error of the IPC reader: a gRPC status is the transport's, anything
// else is a malformed stream.
func readErr(err error) error {
	if isStatus(err) {
		return transportErr(err)
	}
	return fmt.Errorf("%w: %v", ErrProtocol, err)
}

// readStream reads a tensor stream from src: the schema (decoded into info), then the batches,
// into one tensor (each == nil) or chunk by chunk into each. before, if not nil, sees the first
// message's descriptor and the schema before any batch is read, and may refuse. A panic of the
// IPC reader on garbage becomes ErrProtocol; a panic of each, the caller's code, goes on.
func readStream(src flight.DataStreamReader, cfg config, before func(*flight.FlightDescriptor, *Info) error,
	into *core.Tensor, each func(Info, *core.Tensor, int64) error) (info Info, t *core.Tensor, err error) {
	inEach := false
	defer func() {
		if r := recover(); r != nil {
			if inEach {
				panic(r)
			}
			if t != nil {
				t.Release()
			}
			t, err = nil, fmt.Errorf("%w: unreadable stream: %v", ErrProtocol, r)
		}
	}()
	rd, err := flight.NewRecordReader(verified{src}, ipc.WithAllocator(cfg.mem))
	if err != nil {
		return info, nil, readErr(err)
	}
	defer rd.Release()
	if info, err = DecodeSchema(rd.Schema()); err != nil {
		return info, nil, err
	}
	if before != nil {
		if err := before(rd.LatestFlightDescriptor(), &info); err != nil {
			return info, nil, err
		}
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
	t, err = receive(rd, info, cfg.maxBytes, into, inner)
	return info, t, err
}
