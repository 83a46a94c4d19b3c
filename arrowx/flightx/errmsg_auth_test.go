package flightx_test

import (
	"context"
	"testing"
	"time"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// TestAuthErrorMessages holds the refusals of access control to the module's rule for error
// messages (TestErrorMessages).
func TestAuthErrorMessages(t *testing.T) {
	ctx := context.Background()
	_, addr := serve(t, flightx.WithTokens(tokens))
	x := core.MustFromSlice([]float32{1})
	cases := []errstest.Case{
		{Name: "Dial token in clear text", Want: flightx.ErrInsecure, Err: func() error {
			_, err := flightx.Dial("192.0.2.1:8815", flightx.WithToken("t"))
			return err
		}},
		{Name: "Put without a token", Want: flightx.ErrUnauthenticated, Err: func() error {
			return dial(t, addr).Put(ctx, "x", x, nil)
		}},
		{Name: "Delete with a read-only token", Want: flightx.ErrPermission, Err: func() error {
			return dial(t, addr, flightx.WithToken(roToken)).Delete(ctx, "x")
		}},
		{Name: "Delete empty name", Want: flightx.ErrName, Err: func() error {
			return dial(t, addr, flightx.WithToken(rwToken)).Delete(ctx, "")
		}},
		{Name: "SelfSigned without hosts", Want: flightx.ErrTransport, Err: func() error {
			_, _, err := flightx.SelfSigned(nil, time.Hour)
			return err
		}},
	}
	errstest.Run(t, `^flightx: `, cases, flightx.ErrNotFound, flightx.ErrProtocol, flightx.ErrTooLarge,
		flightx.ErrBusy, flightx.ErrIdle, flightx.ErrTransport, flightx.ErrMismatch, flightx.ErrName, flightx.ErrServing,
		flightx.ErrUnauthenticated, flightx.ErrPermission, flightx.ErrInsecure)
}
