package flightx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// The peers of the DoGet benchmarks: the same 256 MiB through a plain gRPC stream of raw bytes
// (no Arrow, no protobuf: a codec that hands []byte through), and a local copy() (the floor).

const (
	bigBytes   = 256 << 20
	benchChunk = 4 << 20 // one batch / message: 4 MiB, for Flight and raw gRPC alike
)

// rawCodec marshals *[]byte as itself; unmarshalling copies into the *[]byte's destination
// (gRPC may reuse the buffer it hands over), as a receiver assembling the bytes must.
type rawCodec struct{}

func (rawCodec) Name() string { return "raw" }
func (rawCodec) Marshal(v any) ([]byte, error) {
	return *(v.(*[]byte)), nil
}
func (rawCodec) Unmarshal(data []byte, v any) error {
	dst := v.(*[]byte)
	*dst = append((*dst)[:0], data...)
	return nil
}

var _ encoding.Codec = rawCodec{}

// rawService streams src in chunks on "Get", echoes every message on "Echo", and copies what
// "Put" receives into a buffer of dsts (one a stream under way).
type rawService struct {
	src  []byte
	dsts chan []byte
}

var rawDesc = grpc.ServiceDesc{
	ServiceName: "raw.Raw",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{
		{StreamName: "Get", ServerStreams: true, Handler: func(srv any, s grpc.ServerStream) error {
			var req []byte
			if err := s.RecvMsg(&req); err != nil {
				return err
			}
			src := srv.(*rawService).src
			for off := 0; off < len(src); off += benchChunk {
				chunk := src[off:min(off+benchChunk, len(src))]
				if err := s.SendMsg(&chunk); err != nil {
					return err
				}
			}
			return nil
		}},
		{StreamName: "Echo", ServerStreams: true, ClientStreams: true, Handler: func(_ any, s grpc.ServerStream) error {
			var m []byte
			for {
				if err := s.RecvMsg(&m); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
				if err := s.SendMsg(&m); err != nil {
					return err
				}
			}
		}},
		{StreamName: "Put", ClientStreams: true, Handler: func(srv any, s grpc.ServerStream) error {
			// the receiving end of a Put: every message copied into place, as a receiver
			// assembling the tensor must
			dsts := srv.(*rawService).dsts
			dst := <-dsts
			defer func() { dsts <- dst }()
			off := 0
			var m []byte
			for {
				if err := s.RecvMsg(&m); err != nil {
					if errors.Is(err, io.EOF) {
						return s.SendMsg(&[]byte{})
					}
					return err
				}
				off += copy(dst[off:], m)
			}
		}},
	},
}

// rawServer serves rawService over src (and one Put at a time) and returns a connection to it.
func rawServer(b *testing.B, src []byte) *grpc.ClientConn {
	return rawDial(b, rawListen(b, src, 1))
}

// rawListen serves rawService over src on loopback, with puts buffers of len(src) for Puts
// under way at once, and returns its address.
func rawListen(b *testing.B, src []byte, puts int) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	g := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.MaxRecvMsgSize(16<<20), grpc.MaxSendMsgSize(16<<20))
	svc := &rawService{src: src, dsts: make(chan []byte, puts)}
	for range puts {
		svc.dsts <- make([]byte, len(src))
	}
	g.RegisterService(&rawDesc, svc)
	go g.Serve(lis)
	b.Cleanup(g.Stop)
	return lis.Addr().String()
}

// rawDial opens a connection of its own to a rawListen server.
func rawDial(b *testing.B, addr string) *grpc.ClientConn {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}), grpc.MaxCallRecvMsgSize(16<<20)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return conn
}

func bigTensor(b testing.TB) *core.Tensor {
	x := core.MustNew(core.Float32, bigBytes/4)
	v, _ := x.Float32s()
	for i := range v {
		v[i] = float32(i)
	}
	return x
}

func flightServer(b testing.TB, name string, x *core.Tensor) *flightx.Client {
	return flightClients(b, name, x, 1)[0]
}

// flightClients serves x as name on loopback (batches of benchChunk) and dials n clients to
// it, each on a connection of its own.
func flightClients(b testing.TB, name string, x *core.Tensor, n int) []*flightx.Client {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := flightx.NewServer(flightx.WithChunkBytes(benchChunk))
	if err := srv.Put(name, x, nil); err != nil {
		b.Fatal(err)
	}
	go srv.Serve(lis)
	b.Cleanup(func() { srv.Stop(); srv.Close() })
	cs := make([]*flightx.Client, n)
	for i := range cs {
		c, err := flightx.Dial(lis.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		cs[i] = c
	}
	return cs
}

// BenchmarkDoGet256MiB fetches a 256 MiB float32 tensor whole (Client.Get: 64 batches of
// 4 MiB assembled into a new tensor; Client.GetInto: into a preallocated one, like the raw peer)
// and chunk by chunk (Client.Stream: each batch a view, nothing assembled).
func BenchmarkDoGet256MiB(b *testing.B) {
	c := flightServer(b, "big", bigTensor(b))
	ctx := context.Background()
	b.Run("Get", func(b *testing.B) {
		b.SetBytes(bigBytes)
		// steady state, as the raw peer's preallocated buffer: the first Get maps (and faults in)
		// the block that the later ones reuse
		if t, _, err := c.Get(ctx, "big"); err == nil {
			t.Release()
		}
		for b.Loop() {
			t, _, err := c.Get(ctx, "big")
			if err != nil {
				b.Fatal(err)
			}
			t.Release()
		}
	})
	b.Run("GetInto", func(b *testing.B) {
		dst := core.MustNew(core.Float32, bigBytes/4)
		b.SetBytes(bigBytes)
		for b.Loop() {
			if _, err := c.GetInto(ctx, "big", dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Stream", func(b *testing.B) {
		b.SetBytes(bigBytes)
		for b.Loop() {
			n := int64(0)
			err := c.Stream(ctx, "big", func(_ flightx.Info, chunk *core.Tensor, _ int64) error {
				n += chunk.NumBytes()
				return nil
			})
			if err != nil || n != bigBytes {
				b.Fatal(err, n)
			}
		}
	})
}

// BenchmarkRawGRPC256MiB is the peer: the same bytes through a gRPC stream of raw 4 MiB
// messages, copied into one preallocated 256 MiB buffer as they arrive.
func BenchmarkRawGRPC256MiB(b *testing.B) {
	x := bigTensor(b)
	src, _ := x.Bytes()
	conn := rawServer(b, src)
	dst := make([]byte, bigBytes)
	ctx := context.Background()
	b.SetBytes(bigBytes)
	if err := rawGRPCGet(ctx, conn, dst); err != nil { // steady state: dst faulted in, as Get's block
		b.Fatal(err)
	}
	for b.Loop() {
		if err := rawGRPCGet(ctx, conn, dst); err != nil {
			b.Fatal(err)
		}
	}
}

// rawGRPCGet fetches the raw server's bytes into dst, which they must fill.
func rawGRPCGet(ctx context.Context, conn *grpc.ClientConn, dst []byte) error {
	s, err := conn.NewStream(ctx, &rawDesc.Streams[0], "/raw.Raw/Get")
	if err != nil {
		return err
	}
	req := []byte("big")
	if err := s.SendMsg(&req); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	off := 0
	var m []byte
	for {
		if err := s.RecvMsg(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		off += copy(dst[off:], m)
	}
	if off != len(dst) {
		return fmt.Errorf("raw Get brought %d bytes, want %d", off, len(dst))
	}
	return nil
}

// BenchmarkLocalCopy256MiB is the floor: copy() of the same 256 MiB in memory.
func BenchmarkLocalCopy256MiB(b *testing.B) {
	x := bigTensor(b)
	src, _ := x.Bytes()
	dst := make([]byte, bigBytes)
	copy(dst, src) // fault the pages in
	b.SetBytes(bigBytes)
	for b.Loop() {
		copy(dst, src)
	}
}

// BenchmarkRoundTrip1KiB puts a 1 KiB tensor and gets it back (two Flight calls), beside the
// raw peer: 1 KiB sent and echoed on an open gRPC stream (one message each way, no call set-up).
func BenchmarkRoundTrip1KiB(b *testing.B) {
	x := core.MustNew(core.Float32, 256)
	ctx := context.Background()
	b.Run("flight-put-get", func(b *testing.B) {
		c := flightServer(b, "seed", x)
		for b.Loop() {
			if err := c.Put(ctx, "small", x, nil); err != nil {
				b.Fatal(err)
			}
			t, _, err := c.Get(ctx, "small")
			if err != nil {
				b.Fatal(err)
			}
			t.Release()
		}
	})
	b.Run("flight-get", func(b *testing.B) {
		c := flightServer(b, "small", x)
		for b.Loop() {
			t, _, err := c.Get(ctx, "small")
			if err != nil {
				b.Fatal(err)
			}
			t.Release()
		}
	})
	b.Run("raw-grpc-echo", func(b *testing.B) {
		conn := rawServer(b, nil)
		s, err := conn.NewStream(ctx, &rawDesc.Streams[1], "/raw.Raw/Echo")
		if err != nil {
			b.Fatal(err)
		}
		msg, back := make([]byte, 1024), []byte(nil)
		for b.Loop() {
			if err := s.SendMsg(&msg); err != nil {
				b.Fatal(err)
			}
			if err := s.RecvMsg(&back); err != nil {
				b.Fatal(err)
			}
		}
		s.CloseSend()
	})
}

// BenchmarkPut64MiB sends a 64 MiB float32 tensor to a server (Client.Put; the server
// assembles it and stores it, replacing the last one; timed after two warm-up Puts) in batches of 1 MiB (the default: kept as
// views until half came, then copied once into the tensor) and of 32 KiB (copied into staging
// first, then into the tensor).
func BenchmarkPut64MiB(b *testing.B) {
	x := core.MustNew(core.Float32, 16<<20)
	ctx := context.Background()
	for _, chunk := range []int{1 << 20, 32 << 10} {
		b.Run(fmt.Sprintf("chunk%dKiB", chunk>>10), func(b *testing.B) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := flightx.NewServer()
			go srv.Serve(lis)
			b.Cleanup(func() { srv.Stop(); srv.Close() })
			c, err := flightx.Dial(lis.Addr().String(), flightx.WithChunkBytes(chunk))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			b.SetBytes(x.NumBytes())
			for range 2 { // steady state: the server's two blocks (stored, arriving) mapped in
				if err := c.Put(ctx, "x", x, nil); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if err := c.Put(ctx, "x", x, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPut64MiBColumn: a Put of 64 MiB of float32 in batches of 1 MiB, as an
// arrow.fixed_shape_tensor column (rows of the shape's trailing dimensions) and as the flat
// column of the earlier format (WithFlatColumn), for shapes whose rows are single elements,
// 16 KiB, and over the chunk (then rows of the last dimension).
func BenchmarkPut64MiBColumn(b *testing.B) {
	ctx := context.Background()
	for _, shape := range [][]int64{{16 << 20}, {4096, 4096}, {16, 1024, 1024}} {
		x := core.MustNew(core.Float32, shape...)
		for _, flat := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/flat=%v", shape, flat), func(b *testing.B) {
				lis, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				srv := flightx.NewServer()
				go srv.Serve(lis)
				b.Cleanup(func() { srv.Stop(); srv.Close() })
				opts := []flightx.Option{flightx.WithChunkBytes(1 << 20)}
				if flat {
					opts = append(opts, flightx.WithFlatColumn())
				}
				c, err := flightx.Dial(lis.Addr().String(), opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { c.Close() })
				b.SetBytes(x.NumBytes())
				for b.Loop() {
					if err := c.Put(ctx, "x", x, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRawGRPCPut64MiB is the peer of BenchmarkPut64MiB: the same 64 MiB through a client
// stream of raw 1 MiB messages, copied into one preallocated buffer on the server.
func BenchmarkRawGRPCPut64MiB(b *testing.B) {
	src := make([]byte, 64<<20)
	conn := rawServer(b, src)
	ctx := context.Background()
	b.SetBytes(int64(len(src)))
	if err := rawGRPCPut(ctx, conn, src); err != nil { // steady state: the server's buffer faulted in
		b.Fatal(err)
	}
	for b.Loop() {
		if err := rawGRPCPut(ctx, conn, src); err != nil {
			b.Fatal(err)
		}
	}
}

// rawGRPCPut sends src to the raw server in messages of 1 MiB and waits for its acknowledgement.
func rawGRPCPut(ctx context.Context, conn *grpc.ClientConn, src []byte) error {
	s, err := conn.NewStream(ctx, &rawDesc.Streams[2], "/raw.Raw/Put")
	if err != nil {
		return err
	}
	for off := 0; off < len(src); off += 1 << 20 {
		chunk := src[off:min(off+1<<20, len(src))]
		if err := s.SendMsg(&chunk); err != nil {
			return err
		}
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	var ack []byte
	return s.RecvMsg(&ack)
}
