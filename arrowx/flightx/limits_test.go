package flightx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// rawPut is a DoPut stream driven by hand: a schema that announces any tensor, then whatever
// batches the test writes, as a hostile or stalled client would send them.
type rawPut struct {
	stream flight.FlightService_DoPutClient
	w      *flight.Writer
	schema *arrow.Schema
	mem    memory.Allocator
	cancel context.CancelFunc
}

// rawConn is a plain Flight client of the server at addr (no flightx on the client side).
func rawConn(t *testing.T, addr string) flight.FlightServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(32<<20)))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return flight.NewFlightServiceClient(conn)
}

// startRawPut opens a DoPut of name and sends a schema announcing dtype (a column of typ) and
// shape; ctx bounds the stream, and the test's end cancels it.
func startRawPut(t *testing.T, ctx context.Context, fc flight.FlightServiceClient, name string, typ arrow.DataType,
	dtype, shape string) *rawPut {
	t.Helper()
	p, err := openRawPut(ctx, fc, name, typ, dtype, shape)
	require.NoError(t, err)
	t.Cleanup(p.close)
	return p
}

// openRawPut is startRawPut for any goroutine: the caller closes the stream.
func openRawPut(ctx context.Context, fc flight.FlightServiceClient, name string, typ arrow.DataType,
	dtype, shape string) (*rawPut, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := fc.DoPut(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	md := arrow.MetadataFrom(map[string]string{flightx.KeyDType: dtype, flightx.KeyShape: shape, flightx.KeyOrder: "C"})
	s := arrow.NewSchema([]arrow.Field{{Name: "data", Type: typ}}, &md)
	w := flight.NewRecordWriter(stream, ipc.WithSchema(s))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}})
	return &rawPut{stream: stream, w: w, schema: s, mem: memory.DefaultAllocator, cancel: cancel}, nil
}

// send writes one batch whose column holds the bytes of vals (len a multiple of the width).
func (p *rawPut) send(vals []byte) error {
	typ := p.schema.Field(0).Type
	width := typ.(arrow.FixedWidthDataType).Bytes()
	data := array.NewData(typ, len(vals)/width, []*memory.Buffer{nil, memory.NewBufferBytes(vals)}, nil, 0, 0)
	col := array.MakeFromData(data)
	data.Release()
	rec := array.NewRecordBatch(p.schema, []arrow.Array{col}, int64(len(vals)/width))
	col.Release()
	defer rec.Release()
	return p.w.Write(rec)
}

// verdict ends the stream's sending side and returns what the server answered: nil when it
// took the tensor.
func (p *rawPut) verdict() error {
	_ = p.w.Close()
	_ = p.stream.CloseSend()
	for {
		if _, err := p.stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// wait returns what the server answered while the stream stays open (a stalled client).
func (p *rawPut) wait() error {
	for {
		if _, err := p.stream.Recv(); err != nil {
			return err
		}
	}
}

func (p *rawPut) close() { p.cancel() }

// heapBytes is the bytes of live (and not yet swept) heap objects.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// waitFor polls cond every few milliseconds for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestStalledPutsHoldLittle: four DoPuts that each announce a 256 MiB tensor, send one 1 KiB
// batch and stall hold what came (rounded up to the receiver's first step), not what they
// announced; the idle timeout ends them with ErrIdle's status, and nothing of them is left.
func TestStalledPutsHoldLittle(t *testing.T) {
	noLeaks(t)
	const idle = 300 * time.Millisecond
	srv, addr := serve(t, flightx.WithIdleTimeout(idle))
	fc := rawConn(t, addr)
	runtime.GC()
	before := heapBytes()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var puts []*rawPut
	for i := range 4 {
		p := startRawPut(t, ctx, fc, fmt.Sprintf("stalled%d", i), arrow.PrimitiveTypes.Float32, "float32",
			strconv.Itoa(64<<20))
		require.NoError(t, p.send(make([]byte, 1024)))
		puts = append(puts, p)
	}
	// the server has taken the four batches when it holds memory for them (or, without the
	// fix, when its heap has grown by the tensors announced)
	waitFor(t, "the server to take the batches", func() bool {
		return srv.InFlight() >= 4*1024 || heapBytes()-before > 512<<20
	})
	grown := heapBytes() - before
	t.Logf("4 stalled streams: server holds %d bytes in flight, heap grew by %d bytes", srv.InFlight(), grown)
	assert.Less(t, grown, int64(64<<20), "four stalled streams pinned the memory they announced")
	assert.LessOrEqual(t, srv.InFlight(), int64(4*(64<<10)), "each stalled stream holds at most the first step")
	start := time.Now()
	for _, p := range puts {
		err := p.wait()
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err), err)
		assert.Contains(t, err.Error(), "idle")
	}
	t.Logf("the idle timeout (%v) ended the stalled streams after %v", idle, time.Since(start).Round(time.Millisecond))
	waitFor(t, "the stalled streams to let go", func() bool { return srv.InFlight() == 0 })
	assert.Empty(t, srv.Names())
}

// TestIdleTimeoutBeforeSchema: a DoPut that sends nothing at all is ended by the idle timeout
// too; a slow but steady sender (every gap under the timeout) is not.
func TestIdleTimeoutBeforeSchema(t *testing.T) {
	noLeaks(t)
	const idle = 400 * time.Millisecond
	srv, addr := serve(t, flightx.WithIdleTimeout(idle))
	fc := rawConn(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	stream, err := fc.DoPut(sctx)
	require.NoError(t, err)
	_, err = stream.Recv()
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), err)
	assert.Contains(t, err.Error(), "stream idle")

	p := startRawPut(t, ctx, fc, "slow", arrow.PrimitiveTypes.Int8, "int8", "3")
	for range 3 {
		time.Sleep(idle / 4)
		require.NoError(t, p.send([]byte{7}))
	}
	require.NoError(t, p.verdict())
	x, _, err := srv.Get("slow")
	require.NoError(t, err)
	assert.Equal(t, []byte{7, 7, 7}, bytesOf(t, x))
	x.Release()
}

// TestMaxInFlight: the server refuses, with ErrBusy, a DoPut that would take its memory in
// flight over WithMaxInFlight; once the streams holding memory end, the same Put goes through.
func TestMaxInFlight(t *testing.T) {
	noLeaks(t)
	const limit = 4 << 20
	srv, addr := serve(t, flightx.WithMaxInFlight(limit))
	c := dial(t, addr, flightx.WithChunkBytes(1<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// 8 MiB can never come in under a 4 MiB limit
	big := filled(t, core.Float32, 1, 2<<20)
	err := c.Put(ctx, "big", big, nil)
	require.ErrorIs(t, err, flightx.ErrBusy)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, err.Error(), strconv.Itoa(limit))
	t.Log(err)

	// a stalled stream holding 3 MiB leaves no room for a 2 MiB tensor
	fc := rawConn(t, addr)
	p := startRawPut(t, ctx, fc, "stalled", arrow.PrimitiveTypes.Uint8, "uint8", strconv.Itoa(64<<20))
	for range 3 {
		require.NoError(t, p.send(make([]byte, 1<<20)))
	}
	waitFor(t, "the stalled stream's 3 MiB", func() bool { return srv.InFlight() >= 3<<20 })
	small := filled(t, core.Uint8, 2, 2<<20)
	require.ErrorIs(t, c.Put(ctx, "small", small, nil), flightx.ErrBusy)
	p.close()
	waitFor(t, "the stalled stream to let go", func() bool { return srv.InFlight() == 0 })
	require.NoError(t, c.Put(ctx, "small", small, nil))
	got, _, err := srv.Get("small")
	require.NoError(t, err)
	assert.Equal(t, bytesOf(t, small), bytesOf(t, got))
	got.Release()
	assert.Zero(t, srv.InFlight(), "a stored tensor is no longer in flight")
}

// TestLooseBodyIsNotKept: a batch of one element whose message body carries 8 MiB more is not
// kept as a view (which would pin the 8 MiB for as long as the tensor is stored): the element is
// copied out, and the tensor says so.
func TestLooseBodyIsNotKept(t *testing.T) {
	noLeaks(t)
	srv, addr := serve(t)
	fc := rawConn(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, sendRaw(ctx, fc, looseMessages(t, "loose", 8<<20)))
	x, _, err := srv.Get("loose")
	require.NoError(t, err)
	defer x.Release()
	v, err := core.ReadOnlyElements[int64](x)
	require.NoError(t, err)
	assert.Equal(t, []int64{42}, v)
	assert.NotZero(t, x.Flags()&core.FlagIsCopied, "a one-element tensor kept as a view of an 8 MiB message")
}

// looseMessages is a DoPut stream of an int64 tensor of one element, 42, whose batch's message
// body carries pad bytes more than the value.
func looseMessages(t *testing.T, name string, pad int) []*flight.FlightData {
	md := arrow.MetadataFrom(map[string]string{flightx.KeyDType: "int64", flightx.KeyShape: "1", flightx.KeyOrder: "C"})
	s := arrow.NewSchema([]arrow.Field{{Name: "data", Type: arrow.PrimitiveTypes.Int64}}, &md)
	var fds []*flight.FlightData
	w := flight.NewRecordWriter(&capturer{fds: &fds}, ipc.WithSchema(s))
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.Append(42)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(s, []arrow.Array{col}, 1)
	col.Release()
	if err := w.Write(rec); err != nil {
		t.Error(err)
	}
	rec.Release()
	if err := w.Close(); err != nil || len(fds) != 2 {
		t.Errorf("%d messages, %v", len(fds), err)
		return nil
	}
	fds[0].FlightDescriptor = &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}}
	fds[1].DataBody = append(fds[1].DataBody, make([]byte, pad)...)
	return fds
}

// sendRaw sends the messages of a DoPut and returns the server's verdict: nil when it took the
// tensor.
func sendRaw(ctx context.Context, fc flight.FlightServiceClient, fds []*flight.FlightData) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := fc.DoPut(ctx)
	if err != nil {
		return err
	}
	for _, fd := range fds {
		if stream.Send(fd) != nil {
			break // the server ended the call: Recv says why
		}
	}
	_ = stream.CloseSend()
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// capturer collects the FlightData a writer sends.
type capturer struct{ fds *[]*flight.FlightData }

func (c *capturer) Send(fd *flight.FlightData) error {
	*c.fds = append(*c.fds, &flight.FlightData{DataHeader: append([]byte{}, fd.DataHeader...),
		DataBody: append([]byte{}, fd.DataBody...)})
	return nil
}

// TestBoolBytesNormalised: bool bytes other than 0 and 1 from the wire become 1 (a Go bool
// must hold 0 or 1: x && !x could be true otherwise), as numpyx does with such files: in a
// tensor that came in one batch (copied then, not a view), in one assembled from many, in
// GetInto's destination and in Stream's chunks.
func TestBoolBytesNormalised(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem))
	fc := rawConn(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wire := []byte{0, 1, 2, 255, 1, 0, 128, 7}
	want := []byte{0, 1, 1, 1, 1, 0, 1, 1}
	fsb := &arrow.FixedSizeBinaryType{ByteWidth: 1}
	for _, batches := range []int{1, 2, 8} {
		name := fmt.Sprintf("bools%d", batches)
		p := startRawPut(t, ctx, fc, name, fsb, "bool", "2,4")
		per := len(wire) / batches
		for i := 0; i < len(wire); i += per {
			require.NoError(t, p.send(append([]byte{}, wire[i:i+per]...)))
		}
		require.NoError(t, p.verdict(), name)
		x, _, err := srv.Get(name)
		require.NoError(t, err)
		assert.Equal(t, want, bytesOf(t, x), name)
		bs, err := x.ReadOnlyBools()
		require.NoError(t, err)
		for i, v := range bs {
			assert.False(t, v && !v, "%s element %d", name, i)
		}
		x.Release()
	}

	// from a server that sends such bytes: Get (one batch and many), GetInto, Stream
	for _, batches := range []int{1, 4} {
		per := len(wire) / batches
		addr := rogueServer(t, func(s flight.FlightService_DoGetServer) error {
			md := arrow.MetadataFrom(map[string]string{flightx.KeyDType: "bool", flightx.KeyShape: "8", flightx.KeyOrder: "C"})
			sc := arrow.NewSchema([]arrow.Field{{Name: "data", Type: fsb}}, &md)
			w := flight.NewRecordWriter(s, ipc.WithSchema(sc), ipc.WithAllocator(mem))
			defer w.Close()
			for i := 0; i < len(wire); i += per {
				data := array.NewData(fsb, per, []*memory.Buffer{nil, memory.NewBufferBytes(append([]byte{}, wire[i:i+per]...))}, nil, 0, 0)
				col := array.MakeFromData(data)
				data.Release()
				rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(per))
				col.Release()
				err := w.Write(rec)
				rec.Release()
				if err != nil {
					return err
				}
			}
			return nil
		})
		cl := dial(t, addr, flightx.WithAllocator(mem))
		x, _, err := cl.Get(ctx, "x")
		require.NoError(t, err)
		assert.Equal(t, want, bytesOf(t, x), "Get, %d batches", batches)
		x.Release()
		dst := core.MustNew(core.Bool, 8)
		_, err = cl.GetInto(ctx, "x", dst)
		require.NoError(t, err)
		assert.Equal(t, want, bytesOf(t, dst), "GetInto, %d batches", batches)
		var got []byte
		require.NoError(t, cl.Stream(ctx, "x", func(_ flightx.Info, c *core.Tensor, _ int64) error {
			got = append(got, bytesOf(t, c)...)
			return nil
		}))
		assert.Equal(t, want, got, "Stream, %d batches", batches)
	}
}

// rogueServer serves DoGet with send on 127.0.0.1 and returns its address; the test's end stops it.
func rogueServer(t *testing.T, send func(flight.FlightService_DoGetServer) error) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g := grpc.NewServer()
	flight.RegisterFlightServiceServer(g, &rogue{send: send})
	done := make(chan struct{})
	go func() { _ = g.Serve(lis); close(done) }()
	t.Cleanup(func() { g.Stop(); <-done })
	return lis.Addr().String()
}

// TestStalledGetIsEnded: a DoGet client that stops reading (its flow-control window full) has its
// stream ended by the server's idle timeout, so that the handler and its view of the tensor go
// while the client's connection stays open; the client, reading again, finds the idle status.
func TestStalledGetIsEnded(t *testing.T) {
	noLeaks(t)
	const idle = 300 * time.Millisecond
	srv, addr := serve(t, flightx.WithIdleTimeout(idle))
	// larger than every window gRPC may grant a stream that is not read (16 MiB) and the sockets
	mem := make([]float32, 12<<20)
	var released atomic.Bool
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{int64(len(mem))}}, func() { released.Store(true) })
	require.NoError(t, err)
	require.NoError(t, srv.Put("big", x, nil))
	x.Release()

	fc := rawConn(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: []byte("big")})
	require.NoError(t, err)
	_, err = stream.Recv() // the schema; then the client stops reading
	require.NoError(t, err)
	time.Sleep(3 * idle)
	srv.Delete("big")
	require.True(t, leakcheck.Until(released.Load), "the stalled DoGet still holds the tensor")

	n := 0
	for ; ; n++ {
		if _, err = stream.Recv(); err != nil {
			break
		}
	}
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), err)
	assert.Contains(t, err.Error(), "stopped reading")
	assert.Less(t, n, len(mem)*4/flightx.DefaultChunkBytes, "the stream ended before the tensor was sent")
	t.Logf("the client had %d batches buffered when the server ended the stream", n)
	runtime.KeepAlive(mem)
}
