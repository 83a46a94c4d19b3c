package flightx_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

func TestPutGetList(t *testing.T) {
	mem := noLeaks(t)
	dtypes := []core.DLDataType{core.Float32, core.Float64, core.Float16, core.BFloat16, core.Int8, core.Int64,
		core.Uint16, core.Bool, core.Complex64, core.Complex128,
		{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}}
	shapes := [][]int64{{}, {0}, {3, 0}, {5}, {2, 3, 4}, {7, 1, 9}}
	for _, chunk := range []int{16, 1 << 20} { // many batches, and one
		t.Run(fmt.Sprintf("chunk%d", chunk), func(t *testing.T) {
			srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(chunk))
			c := dial(t, addr, flightx.WithAllocator(mem), flightx.WithChunkBytes(chunk))
			ctx := context.Background()
			for i, dt := range dtypes {
				for j, sh := range shapes {
					name := fmt.Sprintf("%s-%d", dt, j)
					x := filled(t, dt, byte(i+j), sh...)
					meta := map[string]string{"source": name, "unit": "m/s"}
					require.NoError(t, c.Put(ctx, name, x, meta), name)
					got, gotMeta, err := c.Get(ctx, name)
					require.NoError(t, err, name)
					assert.Equal(t, dt, got.DType(), name)
					assert.Equal(t, sh, got.Shape(), name)
					assert.Equal(t, meta, gotMeta, name)
					assert.Equal(t, bytesOf(t, x), bytesOf(t, got), name)
					// the server stored what came
					st, _, err := srv.Get(name)
					require.NoError(t, err)
					assert.Equal(t, bytesOf(t, x), bytesOf(t, st), name)
					st.Release()
					got.Release()
				}
			}
			infos, err := c.List(ctx)
			require.NoError(t, err)
			require.Len(t, infos, len(dtypes)*len(shapes))
			for _, in := range infos {
				assert.Equal(t, in.Name, in.Meta["source"])
			}
			_, _, err = c.Get(ctx, "nope")
			require.ErrorIs(t, err, flightx.ErrNotFound)
		})
	}
}

// recorder keeps the body of every FlightData a client stream receives.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

type recStream struct {
	grpc.ClientStream
	rec *recorder
}

func (s recStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if fd, ok := m.(*flight.FlightData); ok && err == nil && len(fd.DataBody) > 0 {
		s.rec.mu.Lock()
		s.rec.bodies = append(s.rec.bodies, fd.DataBody)
		s.rec.mu.Unlock()
	}
	return err
}

func (r *recorder) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return recStream{cs, r}, nil
}

// TestGetSingleBatchIsAView: a tensor that arrives in one batch is the received message itself:
// its first element is the first byte of the body of the FlightData message that gRPC decoded
// (seen by a stream interceptor), it is read-only and not flagged as a copy. The server runs in
// another process.
func TestGetSingleBatchIsAView(t *testing.T) {
	mem := noLeaks(t)
	const n = helperBytes / 4
	addr := startHelper(t)
	rec := &recorder{}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)), grpc.WithStreamInterceptor(rec.intercept))
	require.NoError(t, err)
	defer conn.Close()
	c := flightx.NewClient(conn, flightx.WithAllocator(mem))
	ctx := context.Background()
	got, _, err := c.Get(ctx, "x")
	require.NoError(t, err)
	defer got.Release()
	require.Len(t, rec.bodies, 1, "one data message")
	body := rec.bodies[0]
	require.GreaterOrEqual(t, len(body), n*4)
	assert.Equal(t, unsafe.Pointer(&body[0]), got.Data(), "the tensor is the received message body")
	want := make([]byte, n*4)
	helperPattern(want)
	assert.Equal(t, want, bytesOf(t, got))
	assert.True(t, got.ReadOnly())
	assert.True(t, got.Foreign(), "the tensor holds the received buffer")
	assert.Zero(t, got.Flags()&core.FlagIsCopied)

	// a multi-batch tensor is assembled once, and says so
	x := filled(t, core.Float32, 1, n)
	srv2, addr2 := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(1<<16))
	require.NoError(t, srv2.Put("x", x, nil))
	c2 := dial(t, addr2, flightx.WithAllocator(mem))
	many, _, err := c2.Get(ctx, "x")
	require.NoError(t, err)
	defer many.Release()
	assert.NotZero(t, many.Flags()&core.FlagIsCopied)
	assert.Equal(t, bytesOf(t, x), bytesOf(t, many))
}

// TestStreamChunksAreViews: every chunk Stream hands over is the body of its message.
func TestStreamChunksAreViews(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(1024))
	require.NoError(t, srv.Put("x", filled(t, core.Uint8, 2, 5000), nil))
	rec := &recorder{}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStreamInterceptor(rec.intercept))
	require.NoError(t, err)
	defer conn.Close()
	c := flightx.NewClient(conn, flightx.WithAllocator(mem))
	var addrs []unsafe.Pointer
	err = c.Stream(context.Background(), "x", func(_ flightx.Info, chunk *core.Tensor, _ int64) error {
		addrs = append(addrs, chunk.Data())
		return nil
	})
	require.NoError(t, err)
	require.Len(t, addrs, 5)
	require.Len(t, rec.bodies, 5)
	for i, a := range addrs {
		assert.Equal(t, unsafe.Pointer(&rec.bodies[i][0]), a, "chunk %d is its message's body", i)
	}
}

func TestGetInto(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(1000))
	c := dial(t, addr, flightx.WithAllocator(mem))
	x := filled(t, core.Int16, 4, 30, 70)
	require.NoError(t, srv.Put("x", x, map[string]string{"a": "b"}))
	ctx := context.Background()
	for _, shape := range [][]int64{{30, 70}, {2100}} { // any shape of the same size
		dst := core.MustNew(core.Int16, shape...)
		meta, err := c.GetInto(ctx, "x", dst)
		require.NoError(t, err)
		assert.Equal(t, "b", meta["a"])
		assert.Equal(t, bytesOf(t, x), bytesOf(t, dst))
	}
	for _, bad := range []*core.Tensor{core.MustNew(core.Int16, 7), core.MustNew(core.Int32, 30, 70), nil} {
		_, err := c.GetInto(ctx, "x", bad)
		require.ErrorIs(t, err, flightx.ErrMismatch)
	}
	ro, err := core.MustNew(core.Int16, 2100).AsReadOnly()
	require.NoError(t, err)
	_, err = c.GetInto(ctx, "x", ro)
	require.ErrorIs(t, err, flightx.ErrMismatch)
}

func TestStreamChunks(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(4096))
	c := dial(t, addr, flightx.WithAllocator(mem))
	x := filled(t, core.Float64, 3, 100, 33)
	require.NoError(t, srv.Put("x", x, map[string]string{"k": "v"}))
	want := bytesOf(t, x)
	var got []byte
	chunks := 0
	err := c.Stream(context.Background(), "x", func(info flightx.Info, chunk *core.Tensor, off int64) error {
		assert.Equal(t, []int64{100, 33}, info.Shape)
		assert.Equal(t, "v", info.Meta["k"])
		assert.Equal(t, int64(len(got)/8), off)
		assert.LessOrEqual(t, chunk.NumBytes(), int64(4096))
		got = append(got, bytesOf(t, chunk)...)
		chunks++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, (100*33*8+4095)/4096, chunks)
}

func TestConcurrentTransfers(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(8192))
	c := dial(t, addr, flightx.WithAllocator(mem), flightx.WithChunkBytes(8192))
	shared := filled(t, core.Float32, 9, 64, 1024) // 256 KiB that every goroutine fetches
	require.NoError(t, srv.Put("shared", shared, nil))
	want := bytesOf(t, shared)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const workers, rounds = 8, 4
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*2)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				name := fmt.Sprintf("w%d-r%d", w, r)
				x := filled(t, core.Int32, byte(w*rounds+r), int64(1000+w*100+r))
				if err := c.Put(ctx, name, x, map[string]string{"w": name}); err != nil {
					errs <- err
					return
				}
				got, meta, err := c.Get(ctx, name)
				if err != nil {
					errs <- err
					return
				}
				gb, _ := got.ReadOnlyBytes()
				xb, _ := x.ReadOnlyBytes()
				if string(gb) != string(xb) || meta["w"] != name {
					errs <- fmt.Errorf("%s came back different", name)
				}
				got.Release()
				sh, _, err := c.Get(ctx, "shared")
				if err != nil {
					errs <- err
					return
				}
				if b, _ := sh.ReadOnlyBytes(); string(b) != string(want) {
					errs <- errors.New("shared came back different")
				}
				sh.Release()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Len(t, srv.Names(), workers*rounds+1)
}

// TestClientDisconnectsMidStream: a consumer that gives up after the first chunk, and one whose
// context is cancelled, end the transfer on both sides; nothing leaks on the server.
func TestClientDisconnectsMidStream(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(1<<16))
	c := dial(t, addr, flightx.WithAllocator(mem))
	x := filled(t, core.Float32, 5, 8<<20) // 32 MiB, 512 batches
	require.NoError(t, srv.Put("big", x, nil))
	stop := errors.New("enough")
	n := 0
	err := c.Stream(context.Background(), "big", func(_ flightx.Info, _ *core.Tensor, _ int64) error {
		n++
		return stop
	})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)

	ctx, cancel := context.WithCancel(context.Background())
	err = c.Stream(ctx, "big", func(_ flightx.Info, _ *core.Tensor, off int64) error {
		if off > 0 {
			cancel()
		}
		return nil
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, flightx.ErrTransport)
	cancel()

	// the server still serves
	got, _, err := c.Get(context.Background(), "big")
	require.NoError(t, err)
	got.Release()

	// a Put whose client gives up (its deadline passes mid-stream) stores nothing
	pctx, pcancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer pcancel()
	err = c.Put(pctx, "partial", x, nil)
	require.ErrorIs(t, err, flightx.ErrTransport)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(srv.Names()) == 1 {
			break
		}
	}
	assert.Equal(t, []string{"big"}, srv.Names())
}

// TestServerKeepsStridedTensorsInCOrder: a transposed tensor is copied once when stored, and
// served in C order.
func TestServerKeepsStridedTensorsInCOrder(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem))
	c := dial(t, addr, flightx.WithAllocator(mem))
	x := core.MustFromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	xt, err := x.Transpose()
	require.NoError(t, err)
	require.NoError(t, srv.Put("xt", xt, nil))
	got, _, err := c.Get(context.Background(), "xt")
	require.NoError(t, err)
	defer got.Release()
	assert.Equal(t, []int64{3, 2}, got.Shape())
	vals, err := core.ReadOnlyElements[int32](got)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 4, 2, 5, 3, 6}, vals)
	// and a client sends one the same way
	require.NoError(t, c.Put(context.Background(), "xt2", xt, nil))
	st, _, err := srv.Get("xt2")
	require.NoError(t, err)
	defer st.Release()
	sv, err := core.ReadOnlyElements[int32](st)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 4, 2, 5, 3, 6}, sv)
}

// TestServerDiesMidTransfer: a server stopped while a tensor streams fails the transfer with a
// transport error, and the client leaks nothing.
func TestServerDiesMidTransfer(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(1<<16))
	c := dial(t, addr, flightx.WithAllocator(mem))
	x := filled(t, core.Float32, 5, 8<<20)
	require.NoError(t, srv.Put("big", x, nil))
	chunks := 0
	err := c.Stream(context.Background(), "big", func(_ flightx.Info, _ *core.Tensor, _ int64) error {
		chunks++
		if chunks == 2 {
			go srv.Stop()
		}
		return nil
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, flightx.ErrTransport)
	assert.Less(t, chunks, 512, "the stream ended early")

	// a put to the dead server fails too
	err = c.Put(context.Background(), "y", x, nil)
	require.ErrorIs(t, err, flightx.ErrTransport)
}

func TestGetFlightInfo(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(1000))
	// [50 10] float64, 4000 bytes: rows of 10 float64, 12 rows a batch of at most 1000 bytes, 5 batches
	require.NoError(t, srv.Put("x", filled(t, core.Float64, 1, 50, 10), nil))
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	fc := flight.NewFlightServiceClient(conn)
	ctx := context.Background()
	fi, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"x"}})
	require.NoError(t, err)
	assert.Equal(t, int64(4000), fi.TotalBytes)
	assert.Equal(t, int64(5), fi.TotalRecords)
	require.Len(t, fi.Endpoint, 1)
	assert.Equal(t, []byte("x"), fi.Endpoint[0].Ticket.Ticket)
	s, err := flight.DeserializeSchema(fi.Schema, mem)
	require.NoError(t, err)
	info, err := flightx.DecodeSchema(s)
	require.NoError(t, err)
	assert.Equal(t, []int64{50, 10}, info.Shape)
	_, err = fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"y"}})
	assert.Equal(t, codes.NotFound, status.Code(err))
	_, err = fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("x")})
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
}

func TestServeOnce(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem))
	_, err := dial(t, addr).List(context.Background()) // the first Serve is running
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.ErrorIs(t, srv.Serve(lis), flightx.ErrServing)
	stopped := flightx.NewServer()
	stopped.Stop()
	lis2, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.ErrorIs(t, stopped.Serve(lis2), flightx.ErrServing)
}

func TestLimitsAndNames(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithMaxBytes(1024))
	c := dial(t, addr, flightx.WithAllocator(mem), flightx.WithMaxBytes(1024))
	ctx := context.Background()
	big := filled(t, core.Float64, 1, 200) // 1600 bytes
	err := c.Put(ctx, "big", big, nil)
	require.ErrorIs(t, err, flightx.ErrTooLarge)
	require.NoError(t, srv.Put("big", big, nil))
	_, _, err = c.Get(ctx, "big")
	require.ErrorIs(t, err, flightx.ErrTooLarge)
	require.ErrorIs(t, c.Put(ctx, "", big, nil), flightx.ErrName)
	err = c.Put(ctx, "m", filled(t, core.Int8, 1, 2), map[string]string{"dlpack.shape": "1"})
	require.ErrorIs(t, err, flightx.ErrProtocol)
	assert.True(t, contains(err.Error(), "reserved"))
	// one element repeated into 2^64 bytes: no stream can say its size
	huge, err := filled(t, core.Float64, 1).BroadcastTo(1<<31, 1<<31)
	require.NoError(t, err)
	require.ErrorIs(t, c.Put(ctx, "huge", huge, nil), core.ErrOverflow)
	require.ErrorIs(t, srv.Put("huge", huge, nil), core.ErrOverflow)
}

// TestStreamCallbackPanics: a panic of the caller's function is the caller's: it goes on up
// through Stream, rather than coming back as a malformed stream (ErrProtocol) that blames the
// peer; the transfer's stream is ended on the way.
func TestStreamCallbackPanics(t *testing.T) {
	srv, addr := serve(t, flightx.WithChunkBytes(64))
	c := dial(t, addr)
	require.NoError(t, srv.Put("x", filled(t, core.Float32, 1, 64), nil))
	var err error
	got := func() (r any) {
		defer func() { r = recover() }()
		err = c.Stream(context.Background(), "x", func(flightx.Info, *core.Tensor, int64) error {
			panic("the caller's bug")
		})
		return nil
	}()
	assert.Equal(t, "the caller's bug", got, "Stream returned %v", err)

	// the client still works
	x, _, err := c.Get(context.Background(), "x")
	require.NoError(t, err)
	x.Release()
}
