package flightx

import (
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers gRPC's proto codec, which bodyCodec wraps
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/dlpack-go/dlpack/core"
)

// Sending a tensor without copying it into messages.
//
// gRPC's proto codec marshals a FlightData message into one buffer, copying the body (a chunk of
// the tensor) into it, and zeroes that buffer first: two passes over every byte before the
// transport copies it once more onto the socket. A Put on a connection Dial made sends each body
// that lies in the tensor's memory as that memory instead: bodyCodec marshals the other fields
// and hands gRPC the chunk as a buffer of its own, which gRPC frees once written (or once the
// stream is dropped). gRPC may still read a chunk after SendMsg returns, and after the call
// ended in an error, so the chunks do not live on the Put's hold: a bodySender holds a view of
// the tensor until the Put and every chunk buffer are done with it. Should gRPC drop a buffer
// without freeing it (its connection dying mid-write), the view is collected with it and lets go
// of its hold then. A connection the caller made (NewClient) keeps gRPC's codec: its interceptors
// may expect proto messages.
//
// A server's DoGet keeps gRPC's codec, on purpose. When a DoGet client stops reading, the idle
// timeout ends the handler, but gRPC's server queues the stream's trailers behind the data frames
// the client's window holds back, and frees those frames only once they are written: chunks of
// the tensor's own memory would keep the whole stored tensor alive for as long as the client
// stalls, where protobuf's copies keep only what is queued (TestStalledGetIsEnded). A client's
// Put has no such case: a cancelled or failed client stream is reset, and gRPC frees its queued
// frames then (TestRefusedPutLetsGo). Copying each body into a buffer that is not zeroed first
// (protobuf's codec zeroes its pooled buffer, then fills it) was measured too: no gain beyond
// the runs' noise (BenchmarkConcurrentGet).

// minOwnBody is the smallest body sent as the tensor's own memory: below it a copy costs less
// than a buffer of its own.
const minOwnBody = 16 << 10

// fieldDataBody is FlightData's data_body field number (Flight.proto).
const fieldDataBody = 1000

// bodyCodec is gRPC's proto codec, which marshals a bodyMessage as its FlightData with the body
// as a buffer of its own.
type bodyCodec struct{ proto encoding.CodecV2 }

// flightCodec is the codec of Dial's connections and of the server Serve runs: gRPC's proto
// codec, but for FlightData bodies, sent as the tensor's memory and received in one copy.
var flightCodec = bodyCodec{proto: encoding.GetCodecV2("proto")}

// dialCodec is the codec of Dial's connections (every call on them).
var dialCodec = grpc.ForceCodecV2(flightCodec)

// Name is the proto codec's: the content type on the wire is the usual one.
func (c bodyCodec) Name() string { return c.proto.Name() }

// Marshal marshals v, a proto message or a bodyMessage.
func (c bodyCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*bodyMessage)
	if !ok {
		return c.proto.Marshal(v)
	}
	fd := m.fd
	// the fields protobuf would write before data_body, the last by number, then its tag and length
	head, err := proto.Marshal(&flight.FlightData{FlightDescriptor: fd.FlightDescriptor, DataHeader: fd.DataHeader,
		AppMetadata: fd.AppMetadata})
	if err != nil {
		return nil, err
	}
	head = protowire.AppendTag(head, fieldDataBody, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(len(fd.DataBody)))
	m.s.refs.Add(1) // the chunk's buffer's, let go when gRPC frees it (bodyRelease.Put)
	body := fd.DataBody
	return mem.BufferSlice{mem.SliceBuffer(head), mem.NewBuffer(&body, bodyRelease{m.s})}, nil
}

// Unmarshal decodes data into v: a FlightData message with decodeFlightData (recvbody.go),
// anything else, or a FlightData message decodeFlightData does not take, with the proto codec.
func (c bodyCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if fd, ok := v.(*flight.FlightData); ok && decodeFlightData(data, fd) {
		return nil
	}
	return c.proto.Unmarshal(data, v)
}

// bodyMessage is a FlightData message whose body lies in the memory s holds.
type bodyMessage struct {
	fd *flight.FlightData
	s  *bodySender
}

// bodySender sends the messages of one Put on a stream that uses bodyCodec, holding a view of the
// tensor while the Put (one reference) or a chunk's buffer (one each) may read it.
type bodySender struct {
	stream grpc.ClientStream
	view   *core.Tensor
	lo, hi uintptr // the view's bytes when they are contiguous (else none)
	refs   atomic.Int64
}

// newBodySender holds t, which the caller holds, for the messages sent on stream; done lets go
// of the caller's reference.
func newBodySender(stream grpc.ClientStream, t *core.Tensor) (*bodySender, error) {
	v, err := t.View()
	if err != nil {
		return nil, err
	}
	s := &bodySender{stream: stream, view: v}
	if v.IsContiguous() && v.HostAccessible() && v.Data() != nil {
		s.lo = uintptr(v.Data())
		s.hi = s.lo + uintptr(v.NumBytes())
	}
	s.refs.Store(1)
	return s, nil
}

// send sends fd: its body as the tensor's memory when it lies there, else as gRPC's codec does.
func (s *bodySender) send(fd *flight.FlightData) error {
	if s.owns(fd.DataBody) {
		return s.stream.SendMsg(&bodyMessage{fd: fd, s: s})
	}
	return s.stream.SendMsg(fd)
}

// owns reports whether body is sent as the tensor's memory: at least minOwnBody bytes of it.
func (s *bodySender) owns(body []byte) bool {
	p, n := uintptr(unsafe.Pointer(unsafe.SliceData(body))), uintptr(len(body))
	return n >= minOwnBody && p >= s.lo && p+n <= s.hi
}

// done lets go of one reference: the last releases the view.
func (s *bodySender) done() {
	if s.refs.Add(-1) == 0 {
		s.view.Release()
	}
}

// bodyRelease is the pool of a chunk's buffer: gRPC puts the buffer back when it has written it
// or dropped it, which lets go of the chunk's reference. Nothing is ever taken from it.
type bodyRelease struct{ s *bodySender }

func (r bodyRelease) Get(n int) *[]byte { b := make([]byte, n); return &b }
func (r bodyRelease) Put(*[]byte)       { r.s.done() }
