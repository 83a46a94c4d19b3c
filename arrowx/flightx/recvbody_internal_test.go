package flightx

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/core"
)

// inFrames cuts b into buffers at random places (seed picks them), as gRPC receives a message in
// the frames it came in.
func inFrames(b []byte, seed uint64) mem.BufferSlice {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out mem.BufferSlice
	for len(b) > 0 {
		n := min(len(b), 1+rng.IntN(max(len(b)/3, 16)))
		out = append(out, mem.SliceBuffer(b[:n]))
		b = b[n:]
	}
	return out
}

// flightMessages are FlightData messages as senders write them, and as they may: fields in
// another order, a body twice, unknown fields, empty fields.
func flightMessages(t testing.TB) map[string][]byte {
	body := make([]byte, 100_000)
	for i := range body {
		body[i] = byte(i * 7)
	}
	marshal := func(fd *flight.FlightData) []byte {
		b, err := proto.Marshal(fd)
		require.NoError(t, err)
		return b
	}
	field := func(num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
	}
	full := &flight.FlightData{
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"x", "ÿ"}},
		DataHeader:       []byte{1, 2, 3, 4}, AppMetadata: []byte("meta"), DataBody: body}
	head := marshal(&flight.FlightData{DataHeader: []byte{9, 9}})
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 7, protowire.VarintType), 300)
	unknown = protowire.AppendFixed64(protowire.AppendTag(unknown, 8, protowire.Fixed64Type), 1<<60)
	unknown = protowire.AppendFixed32(protowire.AppendTag(unknown, 9, protowire.Fixed32Type), 5)
	nonMinimal := append(protowire.AppendTag(nil, 2, protowire.BytesType), 0x82, 0x80, 0x00, 'a', 'b')
	return map[string][]byte{
		"every field":           marshal(full),
		"body only":             marshal(&flight.FlightData{DataBody: body[:1<<10]}),
		"no body":               marshal(&flight.FlightData{DataHeader: []byte{5}}),
		"empty":                 nil,
		"empty body":            field(fieldDataBody, nil),
		"body first":            append(field(fieldDataBody, body[:5000]), head...),
		"body twice":            append(append(field(fieldDataBody, body[:7]), head...), field(fieldDataBody, body[9:20])...),
		"descriptor twice":      append(marshal(full), marshal(&flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Cmd: []byte("c")}})...),
		"unknown fields":        append(append(unknown, marshal(full)...), unknown...),
		"a non-minimal length":  nonMinimal,
		"a group":               append(protowire.AppendTag(nil, 12, protowire.StartGroupType), protowire.AppendTag(nil, 12, protowire.EndGroupType)...),
		"a body that is varint": protowire.AppendVarint(protowire.AppendTag(nil, fieldDataBody, protowire.VarintType), 1),
		"truncated body":        field(fieldDataBody, body[:100])[:50],
		"bad UTF-8 in a path":   field(1, field(3, []byte{0xff, 0xfe})),
		"field number 0":        protowire.AppendVarint(protowire.AppendTag(nil, 0, protowire.VarintType), 1),
	}
}

// TestDecodeFlightData: bodyCodec decodes every message as gRPC's proto codec does, however gRPC
// cut it into buffers; the body is copied once, into memory of its own (none of gRPC's buffers),
// by decodeFlightData, which leaves to the proto codec only what it does not take as it is.
func TestDecodeFlightData(t *testing.T) {
	codec := bodyCodec{proto: encoding.GetCodecV2("proto")}
	msgs := flightMessages(t)
	fallback := map[string]bool{"a group": true, "a body that is varint": true, "truncated body": true,
		"bad UTF-8 in a path": true, "field number 0": true}
	for name, b := range msgs {
		t.Run(name, func(t *testing.T) {
			var want flight.FlightData
			wantErr := proto.Unmarshal(b, &want)
			for seed := range uint64(5) {
				in := inFrames(append([]byte{}, b...), seed)
				var got flight.FlightData
				ok := decodeFlightData(in, &got)
				assert.Equal(t, !fallback[name], ok, "decodeFlightData takes it")
				if ok {
					assert.True(t, proto.Equal(&want, &got), "as protobuf decodes it")
					if len(got.DataBody) > 0 {
						for _, buf := range in {
							d := buf.ReadOnlyData()
							lo := uintptr(unsafe.Pointer(unsafe.SliceData(d)))
							p := uintptr(unsafe.Pointer(unsafe.SliceData(got.DataBody)))
							assert.False(t, p >= lo && p < lo+uintptr(len(d)), "the body is memory of its own")
						}
					}
				}
				var viaCodec flight.FlightData
				err := codec.Unmarshal(in, &viaCodec)
				if wantErr != nil {
					assert.Error(t, err)
					continue
				}
				require.NoError(t, err)
				assert.True(t, proto.Equal(&want, &viaCodec))
			}
		})
	}
}

// FuzzDecodeFlightData: on any bytes, cut anywhere, decodeFlightData either leaves the message to
// the proto codec or decodes exactly what proto.Unmarshal decodes; it never panics, and never
// allocates more than the message holds.
func FuzzDecodeFlightData(f *testing.F) {
	for _, b := range flightMessages(f) {
		if len(b) <= 4096 {
			f.Add(b, uint64(3))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		var got flight.FlightData
		if !decodeFlightData(inFrames(b, seed), &got) {
			return
		}
		var want flight.FlightData
		require.NoError(t, proto.Unmarshal(b, &want), "decodeFlightData took what protobuf refuses")
		require.True(t, proto.Equal(&want, &got))
		require.LessOrEqual(t, len(got.DataBody), len(b))
	})
}

// TestBodyPool: getBody gives n bytes in a buffer of its class (four to a power of two, from
// minPooledBody), a buffer putBody gave back serves the next body of its class, and sizes the
// pool does not keep are plain allocations.
func TestBodyPool(t *testing.T) {
	for _, tc := range []struct {
		n, up, down int // the sizes of the classes bodyClass rounds n up and down to
	}{
		{64 << 10, 64 << 10, 64 << 10},
		{64<<10 + 1, 80 << 10, 64 << 10},
		{80 << 10, 80 << 10, 80 << 10},
		{127 << 10, 128 << 10, 112 << 10},
		{1 << 20, 1 << 20, 1 << 20},
		{1<<20 + 8, 1<<20 + 256<<10, 1 << 20},
		{maxMessage - 1, maxMessage, maxMessage * 7 / 8},
	} {
		cu, up := bodyClass(tc.n, true)
		cd, down := bodyClass(tc.n, false)
		assert.Equal(t, tc.up, up, "n=%d up", tc.n)
		assert.Equal(t, tc.down, down, "n=%d down", tc.n)
		cs, _ := bodyClass(up, false)
		assert.Equal(t, cu, cs, "n=%d: a buffer of its size goes back to the class it came from", tc.n)
		assert.LessOrEqual(t, cd, cu)
	}

	for _, n := range []int{0, 1, minPooledBody - 1, minPooledBody, minPooledBody + 1, 1 << 20, maxMessage, maxMessage + 1} {
		b := getBody(n)
		require.Len(t, b, n)
		pooled := n >= minPooledBody && n <= maxMessage
		if pooled { // its class's size, or a given-back body of that class: under half as large again
			assert.LessOrEqual(t, cap(b), n*3/2, "n=%d", n)
		} else {
			assert.Equal(t, n, cap(b), "n=%d: not pooled", n)
		}
		putBody(b)
	}
	// sync.Pool may drop what it is given (always under the race detector, now and then): a
	// given-back buffer serves again within a few tries
	b := getBody(300 << 10)
	served := false
	for range 50 {
		putBody(b)
		c := getBody(400 << 10) // the same class, 512 KiB
		served = unsafe.SliceData(c) == unsafe.SliceData(b)
		if served {
			break
		}
		b = c
	}
	assert.True(t, served, "a body given back serves the next of its class")
}

// TestSpentBodiesAreNotShared: bodies go back to the pool only when the receiver copied them:
// a tensor that came in one batch is a view of its message (on the client and on the server),
// and stays as it came while many more batches are received into pooled bodies on both sides,
// with collections running; those batches do reuse the bodies, on both sides.
func TestSpentBodiesAreNotShared(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer(WithChunkBytes(minPooledBody))
	go srv.Serve(lis)
	defer srv.Close()
	defer srv.Stop()
	c, err := Dial(lis.Addr().String(), WithChunkBytes(minPooledBody))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	fill := func(seed byte, n int64) (*core.Tensor, []byte) {
		x := core.MustNew(core.Uint8, n)
		b, err := x.Bytes()
		require.NoError(t, err)
		for i := range b {
			b[i] = byte(i*7) + seed
		}
		return x, append([]byte{}, b...)
	}
	elements := func(x *core.Tensor) []byte {
		b, err := core.ReadOnlyElements[uint8](x)
		require.NoError(t, err)
		return b
	}

	one, oneBytes := fill(1, minPooledBody)
	require.NoError(t, c.Put(ctx, "one", one, nil)) // one batch: the server keeps a view of it
	many, manyBytes := fill(2, 32*minPooledBody)
	require.NoError(t, c.Put(ctx, "many", many, nil))
	got, _, err := c.Get(ctx, "one") // one batch: a view of the message here too
	require.NoError(t, err)
	defer got.Release()
	assert.Zero(t, got.Flags()&core.FlagIsCopied, "a view of its message")

	before := bodiesReused.Load()
	stop := foreignmem.Collect(t) // collections throughout: the pool is emptied now and then
	for i := range 8 {
		y, _, err := c.Get(ctx, "many")
		require.NoError(t, err)
		assert.Equal(t, manyBytes, elements(y), "get %d", i)
		y.Release()
		x, _ := fill(byte(10+i), 32*minPooledBody)
		require.NoError(t, c.Put(ctx, fmt.Sprint("other", i), x, nil))
		assert.Equal(t, oneBytes, elements(got), "the client's view, after round %d", i)
	}
	stop()
	stored, _, err := srv.Get("one")
	require.NoError(t, err)
	assert.Equal(t, oneBytes, elements(stored), "the server's view")
	stored.Release()
	stored, _, err = srv.Get("many")
	require.NoError(t, err)
	assert.Equal(t, manyBytes, elements(stored))
	stored.Release()
	assert.Greater(t, bodiesReused.Load()-before, int64(32), "the batches were received into pooled bodies")
}

// BenchmarkDecodeFlightData: a FlightData message of 1 MiB of body, received in gRPC's 16 KiB
// frames, decoded and its body copied into a tensor's memory, as a receiver places a batch:
// through gRPC's proto codec (gather into one buffer, protobuf copies the body into a new
// allocation), and through bodyCodec (one copy into a pooled body, given back once placed).
func BenchmarkDecodeFlightData(b *testing.B) {
	msg, err := proto.Marshal(&flight.FlightData{DataHeader: make([]byte, 200), DataBody: make([]byte, 1<<20)})
	require.NoError(b, err)
	var in mem.BufferSlice
	for off := 0; off < len(msg); off += 16 << 10 {
		in = append(in, mem.SliceBuffer(msg[off:min(off+16<<10, len(msg))]))
	}
	dst := make([]byte, 1<<20)
	for _, bc := range []struct {
		name  string
		codec encoding.CodecV2
	}{
		{"grpc-proto", encoding.GetCodecV2("proto")},
		{"flightx", bodyCodec{proto: encoding.GetCodecV2("proto")}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				var fd flight.FlightData
				if err := bc.codec.Unmarshal(in, &fd); err != nil {
					b.Fatal(err)
				}
				copy(dst, fd.DataBody)
				if bc.name == "flightx" {
					putBody(fd.DataBody) // as verified.spent does once the receiver placed it
				}
			}
		})
	}
}
