package flightx

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Receiving a message's body in one copy.
//
// gRPC's proto codec first gathers a received message out of gRPC's network buffers into one
// buffer, then protobuf copies each bytes field out of that: the body of a FlightData message (a
// megabyte of a tensor) is copied twice before the receiver places it. decodeFlightData reads
// the message's fields straight from gRPC's buffers instead, copying the body once into memory
// of its own (from the body pool below): the message owns its body as it owned protobuf's, and
// nothing is kept of gRPC's buffers. The other fields (a few hundred bytes) are gathered and
// decoded by protobuf, so that the result is proto.Unmarshal's, field for field; any message
// this reader does not take as it is (a group, a body field of another wire type, a truncated
// field) is decoded by gRPC's codec, which then also reports what is wrong with it. Dial's
// connections (bodyCodec, the client's side of Get and of every stream) and the gRPC server
// Serve runs (recvCodec, the server's side of DoPut) decode FlightData so; a connection from
// NewClient and a server given to Register keep their codecs.

// recvCodec is the codec of the gRPC server that Serve runs, which decodes FlightData messages
// with decodeFlightData.
var recvCodec = grpc.ForceServerCodecV2(flightCodec)

// decodeFlightData decodes the FlightData message in data into fd as proto.Unmarshal does, with
// each data_body copied once, straight out of data, into memory of its own from getBody (the
// last one counts, as protobuf's does). It reports false, leaving data as it was, for a message it does
// not take as it is (see above); fd is then to be decoded anew. The other fields go to protobuf
// as they came, byte for byte.
func decodeFlightData(data mem.BufferSlice, fd *flight.FlightData) bool {
	r := wireReader{bufs: data, left: data.Len()}
	var rest, body []byte
	var scratch [20]byte // a tag and a length, of at most ten bytes each
	for r.left > 0 {
		head := scratch[:0]
		v, ok := r.varint(&head)
		num, typ := protowire.DecodeTag(v)
		if !ok || v>>3 > uint64(protowire.MaxValidNumber) || !num.IsValid() {
			return false
		}
		switch typ {
		case protowire.VarintType:
			rest = append(rest, head...)
			_, ok = r.varint(&rest)
		case protowire.Fixed32Type, protowire.Fixed64Type:
			n := 4
			if typ == protowire.Fixed64Type {
				n = 8
			}
			ok = r.left >= n
			if ok {
				rest = r.appendTo(append(rest, head...), n)
			}
		case protowire.BytesType:
			v, ok = r.varint(&head)
			if !ok || v > uint64(r.left) {
				return false
			}
			if num == fieldDataBody {
				putBody(body) // an earlier body of the same message: protobuf keeps the last
				body = getBody(int(v))
				r.copyTo(body)
				continue
			}
			rest = r.appendTo(append(rest, head...), int(v))
		default: // groups, and the wire types protobuf refuses
			return false
		}
		if !ok || num == fieldDataBody { // truncated, or a body that is not bytes
			return false
		}
	}
	if err := proto.Unmarshal(rest, fd); err != nil {
		putBody(body)
		return false
	}
	if body != nil {
		fd.DataBody = body
	}
	return true
}

// wireReader reads protobuf's wire format across the buffers of a received message.
type wireReader struct {
	bufs mem.BufferSlice
	cur  []byte // what is left of the buffer being read
	next int    // the buffer after it
	left int    // bytes left in all
}

// more makes cur hold unread bytes, if any are left.
func (r *wireReader) more() {
	for len(r.cur) == 0 && r.next < len(r.bufs) {
		r.cur = r.bufs[r.next].ReadOnlyData()
		r.next++
	}
}

// varint reads a varint as protowire.ConsumeVarint does, refusing what it refuses (more than ten
// bytes, or a tenth byte over 1), and appends the bytes it read to *raw.
func (r *wireReader) varint(raw *[]byte) (uint64, bool) {
	var v uint64
	for i := 0; i < 10 && r.left > 0; i++ {
		r.more()
		b := r.cur[0]
		r.cur, r.left = r.cur[1:], r.left-1
		*raw = append(*raw, b)
		if i == 9 && b > 1 {
			return 0, false
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, true
		}
	}
	return 0, false
}

// copyTo fills dst with the next len(dst) bytes, which the caller made sure are left.
func (r *wireReader) copyTo(dst []byte) {
	for len(dst) > 0 {
		r.more()
		n := copy(dst, r.cur)
		dst, r.cur, r.left = dst[n:], r.cur[n:], r.left-n
	}
}

// appendTo appends the next n bytes, which the caller made sure are left, to b.
func (r *wireReader) appendTo(b []byte, n int) []byte {
	b = append(b, make([]byte, n)...)
	r.copyTo(b[len(b)-n:])
	return b
}

// The body pool: memory for the bodies decodeFlightData copies, given back by the receivers that
// copied a body into their tensor (verified.spent, receiver.spendParts). A megabyte's body then
// lands in memory that was written a batch ago, instead of in a new allocation that Go zeroes and
// the processor faults in first, which costs more than the copy itself
// (BenchmarkDecodeFlightData). A body that is given back is one nothing points into any more: the
// receiver copied it and keeps no view of it, and the message it came in is read no more. Every
// byte of a body taken from the pool is overwritten before the message is handed on.
//
// Bodies from minPooledBody to maxMessage bytes are pooled by size class, four to each power of
// two (2^k·5/4, 6/4, 7/4, 2^(k+1)): a body is at most a quarter larger than its bytes, which
// matters for the one-batch tensors that stay views of their bodies. A class holds buffers of at
// least its size (a body given back may come from protobuf, of any capacity).
const minPooledBody = 64 << 10

var bodyPools [4 * 64]sync.Pool // by class (bodyClass)

// bodiesReused counts the bodies getBody took from the pool (for the tests).
var bodiesReused atomic.Int64

// bodyClass returns the class of the smallest size at least n (up, for getBody) or of the largest
// size at most n (for putBody), and that size. n is at least minPooledBody, so a class's step,
// 2^(k-2), is a whole number of bytes.
func bodyClass(n int, up bool) (class, size int) {
	k := bits.Len(uint(n)) - 1 // 2^k <= n < 2^(k+1)
	step := 1 << (k - 2)
	j := (n - 1<<k) / step // 0..3: 2^k + j·step <= n
	if up && n > 1<<k+j*step {
		j++ // n > 2^k + j·step: the next size (j = 4 is 2^(k+1))
	}
	return 4*k + j, 1<<k + j*step
}

// getBody returns memory for a body of n bytes: from the pool, for the sizes it keeps.
func getBody(n int) []byte {
	if n < minPooledBody || n > maxMessage {
		return make([]byte, n)
	}
	c, size := bodyClass(n, true)
	if b, ok := bodyPools[c].Get().(*[]byte); ok {
		bodiesReused.Add(1)
		return (*b)[:n]
	}
	return make([]byte, n, size)
}

// putBody gives b, a body nothing uses any more, to the pool, if it is of a size it keeps.
func putBody(b []byte) {
	if cap(b) < minPooledBody || cap(b) > maxMessage {
		return
	}
	c, _ := bodyClass(cap(b), false)
	b = b[:cap(b)]
	bodyPools[c].Put(&b)
}
