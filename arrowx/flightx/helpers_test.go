package flightx_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// noLeaks records the goroutines and foreign memory before a test and checks, at its end, that
// both came back (settling for up to 10 s), and that the checked allocator it returns is empty.
func noLeaks(t *testing.T) *memory.CheckedAllocator {
	t.Helper()
	baseForeign := leakcheck.Settle()
	baseG := runtime.NumGoroutine()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() {
		var n int
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if n = runtime.NumGoroutine(); n <= baseG {
				break
			}
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
		}
		if n > baseG {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%d goroutines left behind (%d before):\n%s", n-baseG, baseG, buf)
		}
		if got := leakcheck.Settle(); got != baseForeign {
			t.Errorf("core.LiveForeign is %d, was %d before the test", got, baseForeign)
		}
		mem.AssertSize(t, 0)
	})
	return mem
}

// serve starts a server on 127.0.0.1:0 and returns it and its address; the test's end stops it
// and releases its tensors.
func serve(t *testing.T, opts ...flightx.Option) (*flightx.Server, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := flightx.NewServer(opts...)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
		srv.Close()
	})
	return srv, lis.Addr().String()
}

func dial(t *testing.T, addr string, opts ...flightx.Option) *flightx.Client {
	t.Helper()
	c, err := flightx.Dial(addr, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// filled makes a C-order tensor whose byte k is k*7+seed (mod 256), valid for every dtype whose
// every bit pattern is allowed.
func filled(t *testing.T, dt core.DLDataType, seed byte, shape ...int64) *core.Tensor {
	t.Helper()
	x, err := core.New(dt, shape...)
	require.NoError(t, err)
	b, err := x.Bytes()
	require.NoError(t, err)
	for k := range b {
		b[k] = byte(k*7) + seed
	}
	if dt == core.Bool {
		for k := range b {
			b[k] &= 1
		}
	}
	return x
}

func bytesOf(t *testing.T, x *core.Tensor) []byte {
	t.Helper()
	b, err := x.ReadOnlyBytes()
	require.NoError(t, err)
	return append([]byte{}, b...)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// helperEnv makes the test binary run helperServer instead of the tests.
const helperEnv = "FLIGHTX_HELPER_SERVER"

// helperBytes is the size of the tensor "x" the helper serves (float32, one batch).
const helperBytes = 8 << 20

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "1":
		helperServer()
		return
	case "put":
		helperPutServer()
		return
	}
	os.Exit(m.Run())
}

// helperPattern fills b as filled does with seed 1.
func helperPattern(b []byte) {
	for k := range b {
		b[k] = byte(k*7) + 1
	}
}

// helperServer serves "x" on 127.0.0.1, prints its address, and stops when stdin closes (or
// after a minute).
func helperServer() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return
	}
	srv := flightx.NewServer(flightx.WithChunkBytes(15 << 20))
	x := core.MustNew(core.Float32, helperBytes/4)
	b, _ := x.Bytes()
	helperPattern(b)
	if err := srv.Put("x", x, nil); err != nil {
		fmt.Println("error", err)
		return
	}
	serveUntilStdinCloses(srv, lis)
}

// startHelper runs helperServer in a child process and returns its address; the test's end
// stops it.
func startHelper(t *testing.T) string {
	t.Helper()
	addr, _, _ := startChild(t, helperEnv+"=1")
	return addr
}

// serveUntilStdinCloses serves srv on lis, prints lis's address for the parent test, and stops
// srv when stdin closes (the parent's cleanup) or after a minute, whichever comes first.
func serveUntilStdinCloses(srv *flightx.Server, lis net.Listener) {
	go srv.Serve(lis)
	fmt.Println(lis.Addr())
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
	srv.Stop()
}

// startChild runs this test binary as a helper server with env added to its environment, reads
// the address it prints first, and returns it with the rest of its output and a function that
// kills it (SIGKILL: its kernel closes its sockets, nothing of it says goodbye). The test's end
// closes its stdin and waits for it to stop.
func startChild(t *testing.T, env ...string) (string, *bufio.Reader, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Error("the helper server did not stop")
		}
	})
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	addr := strings.TrimSpace(line)
	require.False(t, strings.HasPrefix(addr, "error"), addr)
	kill := func() {
		cmd.Process.Kill()
		<-exited
	}
	return addr, out, kill
}
