package flightx

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// TestHandlerPanicEndsOnlyItsCall: a handler forced to panic (a test hook in DoPut after the
// stream was received, in DoGet's sends, in ListFlights and GetFlightInfo) fails that one call
// with an error, is counted (Panics), releases what the call held (the received tensor: nothing
// in flight, nothing stored; the stored tensor's view: its memory is freed once it is deleted),
// and the same server then serves a normal Put and Get.
func TestHandlerPanicEndsOnlyItsCall(t *testing.T) {
	panicHook = func(where, name string) {
		if name == "boom-"+where {
			panic("forced in " + where)
		}
	}
	t.Cleanup(func() { panicHook = nil })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer(WithIdleTimeout(5 * time.Second))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	defer func() {
		srv.Stop()
		<-done
		srv.Close()
	}()
	c, err := Dial(lis.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer x.Release()

	err = c.Put(ctx, "boom-DoPut", x, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Internal")
	assert.Contains(t, err.Error(), "a panic, recovered: forced in DoPut")
	assert.Equal(t, int64(1), srv.Panics())
	assert.Zero(t, srv.InFlight(), "the stream's memory went back")
	assert.Empty(t, srv.Names(), "nothing stored")

	// a stored tensor whose memory says when its last holder lets go
	vals := []float32{7, 8, 9}
	var freed atomic.Bool
	watched, err := core.Wrap(core.Desc{Device: core.CPUDevice, DType: core.Float32, Shape: []int64{3},
		Data: unsafe.Pointer(&vals[0])}, func() { freed.Store(true) })
	require.NoError(t, err)
	require.NoError(t, srv.Put("boom-DoGet", watched, nil))
	watched.Release()
	for range 2 { // a DoGet that panics, twice: each call alone
		_, _, err = c.Get(ctx, "boom-DoGet")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "forced in DoGet")
	}
	assert.Equal(t, int64(3), srv.Panics())
	srv.Delete("boom-DoGet")
	assert.Eventually(t, freed.Load, 5*time.Second, 10*time.Millisecond, "the panicking DoGet let go of its view")

	require.NoError(t, srv.Put("boom-ListFlights", x, nil))
	_, err = c.List(ctx)
	assert.ErrorContains(t, err, "forced in ListFlights")
	srv.Delete("boom-ListFlights")
	_, err = srv.GetFlightInfo(ctx, nil)
	assert.ErrorContains(t, err, "descriptor must be a path")
	require.NoError(t, srv.Put("boom-GetFlightInfo", x, nil))
	_, err = srv.GetFlightInfo(ctx, &flight.FlightDescriptor{Path: []string{"boom-GetFlightInfo"}})
	assert.ErrorContains(t, err, "forced in GetFlightInfo")
	srv.Delete("boom-GetFlightInfo")
	assert.Equal(t, int64(5), srv.Panics())

	// the server goes on
	require.NoError(t, c.Put(ctx, "fine", x, map[string]string{"k": "v"}))
	got, meta, err := c.Get(ctx, "fine")
	require.NoError(t, err)
	defer got.Release()
	vs, err := core.ReadOnlyElements[float32](got)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, vs)
	assert.Equal(t, "v", meta["k"])
	infos, err := c.List(ctx)
	require.NoError(t, err)
	assert.Len(t, infos, 1)
	assert.Equal(t, int64(5), srv.Panics())
	assert.Zero(t, srv.InFlight())
}
