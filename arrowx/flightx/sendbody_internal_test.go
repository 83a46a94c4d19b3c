package flightx

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/dlpack-go/dlpack/core"
)

// TestBodyCodecMarshal: bodyCodec writes a FlightData whose body lies in the sent tensor as
// exactly the bytes protobuf writes for it, with the body as the tensor's own memory (no copy),
// and holds the tensor until gRPC frees that buffer; a body elsewhere (scratch, a copy) and a
// small one go through protobuf as before.
func TestBodyCodecMarshal(t *testing.T) {
	x := core.MustNew(core.Uint8, 1<<20)
	b, err := x.Bytes()
	require.NoError(t, err)
	for i := range b {
		b[i] = byte(i * 13)
	}
	codec := bodyCodec{proto: encoding.GetCodecV2("proto")}
	s, err := newBodySender(nil, x)
	require.NoError(t, err)
	cases := []struct {
		name string
		fd   *flight.FlightData
	}{
		{"every field", &flight.FlightData{
			FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"x"}},
			DataHeader:       []byte{1, 2, 3, 4}, AppMetadata: []byte("meta"), DataBody: b[4096 : 4096+64<<10]}},
		{"body only", &flight.FlightData{DataBody: b[:1<<20]}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := proto.Marshal(tc.fd)
			require.NoError(t, err)
			out, err := codec.Marshal(&bodyMessage{fd: tc.fd, s: s})
			require.NoError(t, err)
			require.Len(t, out, 2)
			assert.Equal(t, unsafe.SliceData(tc.fd.DataBody), unsafe.SliceData(out[1].ReadOnlyData()),
				"the body is the tensor's memory")
			assert.Equal(t, want, out.Materialize(), "the bytes are protobuf's")
			assert.EqualValues(t, 2, s.refs.Load(), "the buffer holds the tensor")
			out.Free()
			assert.EqualValues(t, 1, s.refs.Load(), "freed, the buffer lets go")

			var back flight.FlightData
			require.NoError(t, codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(want)}, &back))
			assert.Equal(t, tc.fd.DataBody, back.DataBody)
			assert.Equal(t, tc.fd.DataHeader, back.DataHeader)
		})
	}
	s.done()
	assert.True(t, s.view.Released(), "the last reference releases the view")
	assert.False(t, x.Released(), "the caller's tensor is its own")

	// what send routes through protobuf: bodies outside the tensor, small ones, and any body of a
	// tensor whose bytes are not one run
	assert.True(t, s.owns(b[minOwnBody:2*minOwnBody]))
	assert.False(t, s.owns(make([]byte, 1<<20)), "scratch")
	assert.False(t, s.owns(b[:minOwnBody-8]), "small")
	assert.False(t, s.owns(b[len(b)-minOwnBody : len(b) : len(b)][:0]), "empty")
	strided, err := core.MustNew(core.Uint8, 1024, 1024).Permute(1, 0)
	require.NoError(t, err)
	ss, err := newBodySender(nil, strided)
	require.NoError(t, err)
	defer ss.done()
	sb := unsafe.Slice((*byte)(strided.Data()), 1<<20)
	assert.False(t, ss.owns(sb), "a transposed tensor's chunks are a copy's")
}
