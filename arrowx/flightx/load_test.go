package flightx_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
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

// The load of the review that found the stalled-stream problem: a real server on loopback,
// 64 clients each putting and getting tensors of 1–16 MiB with every byte checked, while
// stalled streams announce 1 GiB, send 1 KiB and stall, and hostile streams send what a broken
// or malicious peer would.
const (
	loadClients   = 64
	loadMaxTensor = 16 << 20
	loadCap       = 256 << 20       // the server's WithMaxInFlight
	loadIdle      = 5 * time.Second // well over what one batch (at most 256 KiB) takes to come
	loadStalled   = 8               // stalled streams at any time
	loadAnnounced = 1 << 30         // bytes each stalled stream announces (the server's WithMaxBytes)
)

// loadStats is what the load test measures.
type loadStats struct {
	moved, puts, busy, idle, stalled, hostile atomic.Int64
	peakHeap, peakInFlight, peakG             atomic.Int64
}

func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// TestLoad runs the load, reports throughput, peak memory, goroutines and core.LiveForeign
// before and after, and checks that every tensor came back byte for byte, that the server's
// memory in flight never passed its cap, that the heap's peak stays within what the caps and
// the clients' own tensors allow (the stalled streams announce 8 GiB together: holding that
// would pass it), that each stalled stream was ended by the idle timeout and each hostile one
// refused as it should be, and that goroutines and core.LiveForeign come back to where they
// were. Under -short or the race detector each client does one round instead of two, and only
// every fourth client sends more than 1 MiB (the sizes still run from 1 to 16 MiB).
func TestLoad(t *testing.T) {
	mem := noLeaks(t)
	rounds, small, limit := 2, false, int64(256<<20) // limit: the server's WithMaxInFlight
	if testing.Short() || raceOn {
		rounds, small, limit = 1, true, 64<<20
	}
	baseForeign := leakcheck.Settle()
	baseG := runtime.NumGoroutine()
	runtime.GC()
	baseHeap := heapBytes()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := flightx.NewServer(flightx.WithAllocator(mem), flightx.WithMaxInFlight(limit),
		flightx.WithIdleTimeout(loadIdle), flightx.WithMaxBytes(loadAnnounced))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	addr := lis.Addr().String()

	// every Put sends a window of this pattern (views: the clients hold no copies)
	pat := make([]byte, 2*loadMaxTensor)
	words := unsafe.Slice((*uint64)(unsafe.Pointer(&pat[0])), len(pat)/8)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range words {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		words[i] = x
	}

	var st loadStats
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			storeMax(&st.peakHeap, heapBytes())
			storeMax(&st.peakInFlight, srv.InFlight())
			storeMax(&st.peakG, int64(runtime.NumGoroutine()))
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	errs := make(chan error, 4*loadClients+64)
	rc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	fc := flight.NewFlightServiceClient(rc)
	done := make(chan struct{}) // the clients finished: the stalled and hostile loops end
	var side sync.WaitGroup
	for i := range loadStalled {
		side.Add(1)
		go func() {
			defer side.Done()
			for first := true; first || !closed(done); first = false {
				if err := stallOnce(ctx, fc, fmt.Sprintf("stalled%d", i)); err != nil {
					errs <- err
					return
				}
				st.stalled.Add(1)
			}
		}()
	}
	side.Add(1)
	go func() {
		defer side.Done()
		for first := true; first || !closed(done); first = false {
			n, err := hostileOnce(ctx, t, srv, fc)
			st.hostile.Add(int64(n))
			if err != nil {
				errs <- err
				return
			}
		}
	}()

	start := time.Now()
	var wg sync.WaitGroup
	for i := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := loadClient(ctx, srv, addr, pat, i, rounds, small, &st); err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(done)
	side.Wait()
	close(stopSampling)
	<-sampled
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	rc.Close()
	srv.Stop()
	require.NoError(t, <-served)
	srv.Close()
	afterForeign := leakcheck.Settle()
	afterG := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); afterG > baseG && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		afterG = runtime.NumGoroutine()
	}

	// what the caps allow: the server's memory in flight (limit); per client its largest
	// tensor twice (stored on the server, and the one Get returns) and the messages in gRPC's
	// hands on both sides (4 MiB each); the pattern; twice all that for the garbage the
	// collector has not yet taken (GOGC=100). The stalled streams' 8 GiB would pass it.
	bound := limit + int64(len(pat))
	for i := range loadClients {
		largest := 0
		for r := range rounds {
			largest = max(largest, loadSize(i, r, small))
		}
		bound += int64(2*largest + 2*(4<<20))
	}
	bound *= 2
	peak := st.peakHeap.Load() - baseHeap
	mb := func(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }
	t.Logf("%d clients x %d rounds, 1-16 MiB each way: %s moved in %v, %.0f MB/s; %d puts, %d refused busy and retried, %d cut off idle and retried",
		loadClients, rounds, mb(st.moved.Load()), elapsed.Round(time.Millisecond),
		float64(st.moved.Load())/elapsed.Seconds()/1e6, st.puts.Load(), st.busy.Load(), st.idle.Load())
	t.Logf("beside them: %d stalled streams (%d at a time, each announcing %s) ended by the %v idle timeout, %d hostile streams",
		st.stalled.Load(), loadStalled, mb(loadAnnounced), loadIdle, st.hostile.Load())
	t.Logf("peak: heap %s over the %s before (bound %s), server memory in flight %s (cap %s), %d goroutines",
		mb(peak), mb(baseHeap), mb(bound), mb(st.peakInFlight.Load()), mb(limit), st.peakG.Load())
	t.Logf("goroutines %d before, %d after; core.LiveForeign %d before, %d after", baseG, afterG, baseForeign, afterForeign)

	assert.LessOrEqual(t, st.peakInFlight.Load(), limit, "the server's memory in flight passed its cap")
	assert.Less(t, peak, bound, "the heap grew past what the caps allow")
	assert.Equal(t, int64(loadClients*rounds), st.puts.Load())
	assert.LessOrEqual(t, st.idle.Load(), st.puts.Load()/2, "the idle timeout cut off many honest streams")
	assert.GreaterOrEqual(t, st.stalled.Load(), int64(loadStalled))
	assert.LessOrEqual(t, afterG, baseG, "goroutines left behind")
	assert.Equal(t, baseForeign, afterForeign, "core.LiveForeign did not come back")
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// loadClient is client i: rounds of Put (retried while the server is busy, or when a loaded
// machine made a batch take longer than the idle timeout to come), Get, a check of every byte,
// and the server's Delete. small: only every fourth client sends more than 1 MiB.
func loadClient(ctx context.Context, srv *flightx.Server, addr string, pat []byte, i, rounds int, small bool, st *loadStats) error {
	chunk := []int{256 << 10, 128 << 10, 64 << 10, 32 << 10}[i%4]
	c, err := flightx.Dial(addr, flightx.WithChunkBytes(chunk))
	if err != nil {
		return err
	}
	defer c.Close()
	for r := range rounds {
		size := loadSize(i, r, small)
		off := (i*40960 + r*8192) % (len(pat) - size)
		win := pat[off : off+size]
		var x *core.Tensor
		switch i % 3 {
		case 0:
			x, err = core.FromSlice(win)
		case 1:
			x, err = core.FromSlice(unsafe.Slice((*float32)(unsafe.Pointer(&win[0])), size/4), int64(size/4096), 1024)
		default:
			x, err = core.FromSlice(unsafe.Slice((*float64)(unsafe.Pointer(&win[0])), size/8))
		}
		if err != nil {
			return err
		}
		name := fmt.Sprintf("c%d-r%d", i, r)
		meta := map[string]string{"client": strconv.Itoa(i)}
		for {
			err = c.Put(ctx, name, x, meta)
			if errors.Is(err, flightx.ErrIdle) {
				st.idle.Add(1)
				continue
			}
			if !errors.Is(err, flightx.ErrBusy) {
				break
			}
			st.busy.Add(1)
			time.Sleep(time.Duration(5+i%20) * time.Millisecond)
		}
		if err != nil {
			return err
		}
		st.puts.Add(1)
		got, gotMeta, err := c.Get(ctx, name)
		if err != nil {
			return err
		}
		b, err := got.ReadOnlyBytes()
		if err == nil && (!bytes.Equal(b, win) || got.DType() != x.DType() || gotMeta["client"] != meta["client"]) {
			k := 0
			for k < min(len(b), len(win)) && b[k] == win[k] {
				k++
			}
			err = fmt.Errorf("%s came back as %s, %d bytes, first difference at byte %d", x, got, len(b), k)
		}
		got.Release()
		if err != nil {
			return err
		}
		srv.Delete(name)
		st.moved.Add(int64(2 * size))
	}
	return nil
}

// loadSize is the bytes client i sends in round r: 1 to 16 MiB; with small, only every fourth
// client sends more than 1 MiB.
func loadSize(i, r int, small bool) int {
	if small && i%4 != 0 {
		return 1 << 20
	}
	return ((i*5+r*7)%16 + 1) << 20
}

// stallOnce opens a DoPut announcing loadAnnounced bytes, sends 1 KiB and stalls: the server's
// idle timeout must end it.
func stallOnce(ctx context.Context, fc flight.FlightServiceClient, name string) error {
	p, err := openRawPut(ctx, fc, name, arrow.PrimitiveTypes.Float32, "float32", strconv.Itoa(loadAnnounced/4))
	if err != nil {
		return err
	}
	defer p.close()
	if err := p.send(make([]byte, 1024)); err != nil {
		return err
	}
	err = p.wait()
	if status.Code(err) != codes.DeadlineExceeded || !bytes.Contains([]byte(err.Error()), []byte("stream idle")) {
		return fmt.Errorf("stalled stream %s: ended with %v, not the idle timeout", name, err)
	}
	return nil
}

// hostileOnce sends one of each hostile stream and checks the server's answer; it returns how
// many it sent.
func hostileOnce(ctx context.Context, t *testing.T, srv *flightx.Server, fc flight.FlightServiceClient) (int, error) {
	type answer struct {
		code codes.Code
		says string
	}
	desc := &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"hostile"}}
	cases := []struct {
		name string
		run  func() error
		want answer
	}{
		{"garbage header", func() error {
			return sendRaw(ctx, fc, []*flight.FlightData{{DataHeader: []byte("not a flatbuffer"), FlightDescriptor: desc}})
		}, answer{codes.InvalidArgument, "unreadable"}},
		{"more elements than announced", func() error {
			p, err := openRawPut(ctx, fc, "hostile", arrow.PrimitiveTypes.Int8, "int8", "4")
			if err != nil {
				return err
			}
			defer p.close()
			_ = p.send([]byte{1, 2, 3, 4, 5})
			return p.verdict()
		}, answer{codes.InvalidArgument, "5 elements when 4 remain"}},
		{"fewer elements than announced", func() error {
			p, err := openRawPut(ctx, fc, "hostile", arrow.PrimitiveTypes.Int8, "int8", "4")
			if err != nil {
				return err
			}
			defer p.close()
			_ = p.send([]byte{1, 2})
			return p.verdict()
		}, answer{codes.InvalidArgument, "after 2 of 4"}},
		{"column of another type", func() error {
			p, err := openRawPut(ctx, fc, "hostile", arrow.PrimitiveTypes.Int32, "float32", "4")
			if err != nil {
				return err
			}
			defer p.close()
			return p.verdict()
		}, answer{codes.InvalidArgument, "column of type int32"}},
		{"over the size limit", func() error {
			p, err := openRawPut(ctx, fc, "hostile", arrow.PrimitiveTypes.Float32, "float32", strconv.Itoa(loadAnnounced))
			if err != nil {
				return err
			}
			defer p.close()
			_ = p.send(make([]byte, 64))
			return p.verdict()
		}, answer{codes.ResourceExhausted, "over the limit of"}},
		{"tiny batches, then a stall", func() error {
			p, err := openRawPut(ctx, fc, "hostile", arrow.PrimitiveTypes.Int8, "int8", strconv.Itoa(64<<20))
			if err != nil {
				return err
			}
			defer p.close()
			for range 1000 {
				if p.send(make([]byte, 16)) != nil {
					break
				}
			}
			return p.wait()
		}, answer{codes.DeadlineExceeded, "stream idle"}},
		{"one element in a 256 KiB message", func() error {
			if err := sendRaw(ctx, fc, looseMessages(t, "loose", 256<<10)); err != nil {
				return err
			}
			x, _, err := srv.Get("loose")
			if err != nil {
				return err
			}
			defer x.Release()
			if x.Flags()&core.FlagIsCopied == 0 {
				return errors.New("kept as a view of its 256 KiB message")
			}
			srv.Delete("loose")
			return nil
		}, answer{codes.OK, ""}},
		{"bool bytes other than 0 and 1", func() error {
			p, err := openRawPut(ctx, fc, "bools", &arrow.FixedSizeBinaryType{ByteWidth: 1}, "bool", "4")
			if err != nil {
				return err
			}
			defer p.close()
			if err := p.send([]byte{0, 2, 255, 1}); err != nil {
				return err
			}
			if err := p.verdict(); err != nil {
				return err
			}
			x, _, err := srv.Get("bools")
			if err != nil {
				return err
			}
			defer x.Release()
			if b, _ := x.ReadOnlyBytes(); !bytes.Equal(b, []byte{0, 1, 1, 1}) {
				return fmt.Errorf("stored as %v", b)
			}
			srv.Delete("bools")
			return nil
		}, answer{codes.OK, ""}},
	}
	for i, c := range cases {
		err := c.run()
		if status.Code(err) != c.want.code || (err != nil && !bytes.Contains([]byte(err.Error()), []byte(c.want.says))) {
			return i, fmt.Errorf("hostile stream %q: the server answered %v, want %v with %q", c.name, err, c.want.code, c.want.says)
		}
	}
	return len(cases), nil
}
