package flightx_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// TestPutHoldsWhatGRPCReads: a Put on Dial's connection hands gRPC the tensor's own memory
// (sendbody.go), which gRPC may read after SendMsg returned and after the call failed. The
// tensor here is over memory unmapped at its release, its caller releases it the moment Put
// returns, and collections run throughout: a chunk read after its hold went faults. Whether the
// Put is stored, the server's connection goes away mid-stream, or the caller cancels it, the
// release runs exactly once, and only after gRPC let go of every chunk; a stored tensor has the
// values sent.
func TestPutHoldsWhatGRPCReads(t *testing.T) {
	const size, after = 32 << 20, 4 << 20
	cases := []struct {
		name   string
		fire   func(c net.Conn, cancel context.CancelFunc)
		stored bool
	}{
		{"stored", nil, true},
		{"connection closed", func(c net.Conn, _ context.CancelFunc) { c.Close() }, false},
		{"cancelled", func(_ net.Conn, cancel context.CancelFunc) { cancel() }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := noLeaks(t)
			foreignmem.Collect(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fire := func(*flightx.Server, *watchedListener, net.Conn) {}
			if tc.fire != nil {
				fire = func(_ *flightx.Server, _ *watchedListener, c net.Conn) { tc.fire(c, cancel) }
			}
			srv, lis, _ := serveWatched(t, mem, after, fire)
			c := dial(t, lis.Addr().String(), flightx.WithAllocator(mem), flightx.WithChunkBytes(1<<20))
			src := filled(t, core.Float32, 5, size/4)
			want, err := src.Bytes()
			require.NoError(t, err)
			x, err := foreignmem.Twin(src)
			require.NoError(t, err)

			err = c.Put(ctx, "big", x.Tensor, nil)
			x.Tensor.Release()
			if tc.stored {
				require.NoError(t, err)
				got, _, err := srv.Get("big")
				require.NoError(t, err)
				defer got.Release()
				b, err := got.Bytes()
				require.NoError(t, err)
				assert.Equal(t, want, b, "the stored tensor has the values sent")
			} else {
				require.Error(t, err, "the Put was cut off mid-stream")
				assert.Empty(t, srv.Names(), "a partial tensor is not stored")
			}
			require.True(t, leakcheck.Until(func() bool { return x.Releases.Load() > 0 }),
				"gRPC never let go of the tensor's chunks")
			time.Sleep(20 * time.Millisecond)
			assert.True(t, foreignmem.ReleasedOnce(x.Releases), "released %d times", x.Releases.Load())
		})
	}
}

// TestRefusedPutLetsGo: a server that refuses a Put mid-stream (ErrBusy: over its memory in
// flight) ends the client's stream while gRPC still holds chunks of the tensor's memory; the
// client lets go of the tensor once gRPC freed them, exactly once, with collections running.
func TestRefusedPutLetsGo(t *testing.T) {
	mem := noLeaks(t)
	foreignmem.Collect(t)
	_, addr := serve(t, flightx.WithAllocator(mem), flightx.WithMaxInFlight(4<<20))
	c := dial(t, addr, flightx.WithAllocator(mem), flightx.WithChunkBytes(1<<20))
	x, err := foreignmem.Twin(filled(t, core.Float32, 3, 8<<20)) // 32 MiB: refused past 4 MiB
	require.NoError(t, err)
	err = c.Put(context.Background(), "big", x.Tensor, nil)
	x.Tensor.Release()
	require.ErrorIs(t, err, flightx.ErrBusy)
	require.True(t, leakcheck.Until(func() bool { return x.Releases.Load() > 0 }),
		"gRPC never let go of the tensor's chunks")
	time.Sleep(20 * time.Millisecond)
	assert.True(t, foreignmem.ReleasedOnce(x.Releases), "released %d times", x.Releases.Load())
}
