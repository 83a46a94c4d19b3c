package flightx_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// TestErrorMessages provokes flightx's refusals, on both ends of a real Flight connection, and
// holds each message to the module's rule: what was wrong first, "flightx:" once, errors.Is
// still matching the sentinel (through the gRPC status for the server's refusals).
func TestErrorMessages(t *testing.T) {
	ctx := context.Background()
	srv, addr := serve(t, flightx.WithMaxBytes(64))
	require.NoError(t, srv.Put("w", core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2), nil))
	c := dial(t, addr)
	small := dial(t, addr, flightx.WithMaxBytes(8))
	released := core.MustFromSlice([]float32{1, 2})
	released.Release()
	big := core.MustNew(core.Float32, 100) // 400 bytes, over the server's 64
	plainNulls := dial(t, startPlain(t, nullBatch(t, []int{1, 2}, 1, "tensor")))
	_, bigList := plainList(t, plainListCase{"big", core.Float32, [][][]int64{{{100}}}}, 1, nil)
	plainBig := dial(t, startPlain(t, bigList...), flightx.WithMaxBytes(64))
	cases := []errstest.Case{
		{Name: "Server.Put empty name", Want: flightx.ErrName, Err: func() error {
			return srv.Put("", core.MustFromSlice([]float32{1}), nil)
		}},
		{Name: "Server.Put long name", Want: flightx.ErrName, Err: func() error {
			return srv.Put(strings.Repeat("n", 5000), core.MustFromSlice([]float32{1}), nil)
		}},
		{Name: "Server.Put nil", Want: core.ErrNil, Err: func() error { return srv.Put("x", nil, nil) }},
		{Name: "Server.Put reserved key", Want: flightx.ErrProtocol, Err: func() error {
			return srv.Put("x", core.MustFromSlice([]float32{1}), map[string]string{"dlpack.dtype": "int8"})
		}},
		{Name: "Server.Put released", Want: core.ErrReleased, Err: func() error { return srv.Put("x", released, nil) }},
		{Name: "Server.Get missing", Want: flightx.ErrNotFound, Err: func() error {
			_, _, err := srv.Get("missing")
			return err
		}},
		{Name: "Get missing", Want: flightx.ErrNotFound, Err: func() error {
			_, _, err := c.Get(ctx, "missing")
			return err
		}},
		{Name: "Get empty name", Want: flightx.ErrName, Err: func() error {
			_, _, err := c.Get(ctx, "")
			return err
		}},
		{Name: "Get over the client's limit", Want: flightx.ErrTooLarge, Err: func() error {
			_, _, err := small.Get(ctx, "w")
			return err
		}},
		{Name: "GetInto nil", Want: flightx.ErrMismatch, Err: func() error {
			_, err := c.GetInto(ctx, "w", nil)
			return err
		}},
		{Name: "GetInto wrong dtype", Want: flightx.ErrMismatch, Err: func() error {
			_, err := c.GetInto(ctx, "w", core.MustNew(core.Int32, 2, 2))
			return err
		}},
		{Name: "GetInto released", Want: core.ErrReleased, Err: func() error {
			_, err := c.GetInto(ctx, "w", released)
			return err
		}},
		{Name: "Put nil", Want: core.ErrNil, Err: func() error { return c.Put(ctx, "x", nil, nil) }},
		{Name: "Put empty name", Want: flightx.ErrName, Err: func() error {
			return c.Put(ctx, "", core.MustFromSlice([]float32{1}), nil)
		}},
		{Name: "Put reserved key", Want: flightx.ErrProtocol, Err: func() error {
			return c.Put(ctx, "x", core.MustFromSlice([]float32{1}), map[string]string{"dlpack.shape": "1"})
		}},
		{Name: "Put released", Want: core.ErrReleased, Err: func() error { return c.Put(ctx, "x", released, nil) }},
		{Name: "Put over the server's limit", Want: flightx.ErrTooLarge, Err: func() error {
			return c.Put(ctx, "big", big, nil)
		}},
		{Name: "GetTensors of a plain list with a null row", Want: flightx.ErrProtocol, Err: func() error {
			_, _, err := plainNulls.GetTensors(ctx, "x")
			return err
		}},
		{Name: "GetTensors of a plain list over the client's limit", Want: flightx.ErrTooLarge, Err: func() error {
			_, _, err := plainBig.GetTensors(ctx, "x")
			return err
		}},
	}
	errstest.Run(t, `^flightx: `, cases, flightx.ErrNotFound, flightx.ErrProtocol, flightx.ErrTooLarge,
		flightx.ErrBusy, flightx.ErrIdle, flightx.ErrTransport, flightx.ErrMismatch, flightx.ErrName, flightx.ErrServing)
}
