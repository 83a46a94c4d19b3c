package flightx_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// watchedListener counts the bytes the server reads from its connections and, once they pass
// after, calls fire once (on its own goroutine) with the connection that crossed the mark: the
// server's side of the socket, which fire may close. fire is set before Serve starts.
type watchedListener struct {
	net.Listener
	after int64
	fire  func(net.Conn)
	read  atomic.Int64
	once  sync.Once
	// once stalled is set, reads wait for stall to close: a server that hangs
	stalled atomic.Bool
	stall   chan struct{}
}

func (l *watchedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &watchedConn{Conn: c, l: l}, nil
}

type watchedConn struct {
	net.Conn
	l *watchedListener
}

func (c *watchedConn) Read(b []byte) (int, error) {
	if c.l.stalled.Load() {
		<-c.l.stall
	}
	n, err := c.Conn.Read(b)
	if c.l.read.Add(int64(n)) >= c.l.after {
		c.l.once.Do(func() { go c.l.fire(c.Conn) })
	}
	return n, err
}

// putBound is how long a Put to a server that went away may take to fail.
const putBound = 10 * time.Second

// putFails runs c.Put of x under "big" and checks that it fails within putBound with an error
// that wraps ErrTransport and names the tensor.
func putFails(t *testing.T, c *flightx.Client, x *core.Tensor) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- c.Put(context.Background(), "big", x, nil) }()
	select {
	case err := <-done:
		require.Error(t, err, "the server went away mid-transfer, yet Put succeeded")
		assert.ErrorIs(t, err, flightx.ErrTransport)
		assert.Contains(t, err.Error(), `put "big"`)
		t.Logf("Put failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(putBound):
		t.Fatalf("Put did not return within %v of a server going away", putBound)
	}
}

// serveWatched starts a server on a watchedListener on 127.0.0.1:0 (after and fire as its
// fields) and returns the server, the listener and the channel Serve's result arrives on; the
// test's end stops the server, lets a stalled listener go, and releases the server's tensors.
func serveWatched(t *testing.T, mem *memory.CheckedAllocator, after int64, fire func(*flightx.Server, *watchedListener, net.Conn)) (*flightx.Server, *watchedListener, chan error) {
	t.Helper()
	srv := flightx.NewServer(flightx.WithAllocator(mem))
	t.Cleanup(srv.Close)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lis := &watchedListener{Listener: inner, after: after, stall: make(chan struct{})}
	lis.fire = func(c net.Conn) { fire(srv, lis, c) }
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	t.Cleanup(func() { close(lis.stall) }) // runs first
	return srv, lis, served
}

// TestServerDiesMidPut: a client sending a large tensor in chunks (64 MiB in 1024 batches) to a
// server that goes away once it has received 8 MiB: stopped hard, its side of the connection
// closed or reset, its listener failing, or its process killed. Put fails with ErrTransport
// within a bounded time, the server stores nothing, and neither side leaks foreign memory, Arrow
// allocations or goroutines.
func TestServerDiesMidPut(t *testing.T) {
	const size, after = 64 << 20, 8 << 20
	cases := []struct {
		name string
		fire func(srv *flightx.Server, lis *watchedListener, c net.Conn)
		// alive: the server still serves other calls afterwards (only the connection went)
		alive bool
	}{
		{"Stop", func(srv *flightx.Server, _ *watchedListener, _ net.Conn) { srv.Stop() }, false},
		{"connection closed", func(_ *flightx.Server, _ *watchedListener, c net.Conn) { c.Close() }, true},
		{"connection reset", func(_ *flightx.Server, _ *watchedListener, c net.Conn) {
			c.(*net.TCPConn).SetLinger(0) // close with a RST, as a crashed peer's kernel does
			c.Close()
		}, true},
		{"listener fails", func(_ *flightx.Server, lis *watchedListener, _ net.Conn) { lis.Listener.Close() }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := noLeaks(t)
			srv, lis, served := serveWatched(t, mem, after, tc.fire)
			c := dial(t, lis.Addr().String(), flightx.WithAllocator(mem), flightx.WithChunkBytes(1<<16))
			x := filled(t, core.Float32, 3, size/4)

			putFails(t, c, x)
			assert.GreaterOrEqual(t, lis.read.Load(), int64(after), "the server went away mid-transfer")
			assert.Less(t, lis.read.Load(), int64(size), "the server went away mid-transfer")
			assert.Empty(t, srv.Names(), "a partial tensor is not stored")

			if tc.alive {
				// the client reconnects, the server serves
				small := filled(t, core.Int8, 1, 1000)
				require.NoError(t, c.Put(context.Background(), "small", small, nil))
				assert.Equal(t, []string{"small"}, srv.Names())
				return
			}
			// Serve returned (a failed listener's error wraps ErrTransport), and the server
			// serves no more
			select {
			case err := <-served:
				if tc.name == "listener fails" {
					assert.ErrorIs(t, err, flightx.ErrTransport)
				} else {
					assert.NoError(t, err)
				}
				served <- nil // for the cleanup
			case <-time.After(putBound):
				t.Fatal("Serve did not return after the server went away")
			}
			ctx, cancel := context.WithTimeout(context.Background(), putBound)
			defer cancel()
			err := c.Put(ctx, "small", filled(t, core.Int8, 1, 1000), nil)
			assert.ErrorIs(t, err, flightx.ErrTransport)
		})
	}

	// a server that hangs (stops reading, keeps its connection open) is noticed through the
	// context's deadline: the transport has nothing else to go by. It hangs after 1 MiB, well
	// inside the deadline: 8 MiB took up to half of it under the race detector on a loaded
	// 2-core machine, and a deadline that came first failed the test.
	t.Run("server hangs", func(t *testing.T) {
		mem := noLeaks(t)
		srv, lis, _ := serveWatched(t, mem, 1<<20, func(_ *flightx.Server, lis *watchedListener, _ net.Conn) {
			lis.stalled.Store(true)
		})
		c := dial(t, lis.Addr().String(), flightx.WithAllocator(mem), flightx.WithChunkBytes(1<<16))
		x := filled(t, core.Float32, 3, size/4)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		err := c.Put(ctx, "big", x, nil)
		require.Error(t, err)
		assert.ErrorIs(t, err, flightx.ErrTransport)
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
		assert.Less(t, time.Since(start), putBound)
		assert.True(t, lis.stalled.Load(), "the server hung mid-transfer")
		assert.Empty(t, srv.Names())
	})

	t.Run("process killed", func(t *testing.T) {
		mem := noLeaks(t)
		addr, received, kill := startPutHelper(t, after)
		c := dial(t, addr, flightx.WithAllocator(mem), flightx.WithChunkBytes(1<<16))
		x := filled(t, core.Float32, 3, size/4)
		go func() {
			select {
			case <-received:
				kill()
			case <-time.After(putBound):
			}
		}()
		putFails(t, c, x)
		select {
		case <-received:
		default:
			t.Error("Put failed before the server had received 8 MiB")
		}
	})
}

// helperPutEnv holds how many bytes helperPutServer reads before it says so.
const helperPutEnv = "FLIGHTX_HELPER_AFTER"

// helperPutServer serves on 127.0.0.1 (to store what clients put), prints its address, prints
// "received" once it has read the number of bytes helperPutEnv says from its connections, and
// stops when stdin closes (or after a minute); the test kills it in between.
func helperPutServer() {
	var after int64
	fmt.Sscan(os.Getenv(helperPutEnv), &after)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return
	}
	lis := &watchedListener{Listener: inner, after: after, fire: func(net.Conn) { fmt.Println("received") }}
	srv := flightx.NewServer()
	serveUntilStdinCloses(srv, lis)
}

// startPutHelper runs helperPutServer in a child process and returns its address, a channel
// closed when it has received after bytes, and a function that kills it (SIGKILL: its kernel
// closes its sockets, nothing of it says goodbye).
func startPutHelper(t *testing.T, after int64) (string, <-chan struct{}, func()) {
	t.Helper()
	addr, out, kill := startChild(t, helperEnv+"=put", fmt.Sprintf("%s=%d", helperPutEnv, after))
	received := make(chan struct{})
	go func() {
		if line, _ := out.ReadString('\n'); strings.TrimSpace(line) == "received" {
			close(received)
		}
	}()
	return addr, received, kill
}
