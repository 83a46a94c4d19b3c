package flightx

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTransportErr: a client reads the sentinel from the status the server ended a call with;
// the status stays inside.
func TestTransportErr(t *testing.T) {
	cases := []struct {
		code codes.Code
		msg  string
		want error
	}{
		{codes.NotFound, "flightx: no tensor", ErrNotFound},
		{codes.InvalidArgument, "bad", ErrProtocol},
		{codes.ResourceExhausted, ErrTooLarge.Error() + ": 2 bytes", ErrTooLarge},
		{codes.ResourceExhausted, "grpc: received message larger than max", ErrTooLarge},
		{codes.ResourceExhausted, ErrBusy.Error() + ": 5 bytes more", ErrBusy},
		{codes.DeadlineExceeded, ErrIdle.Error() + ": no message for 1s", ErrIdle},
		{codes.ResourceExhausted, (&budget{limit: 4}).take(5).Error() + ` (DoPut "w")`, ErrBusy},
		{codes.DeadlineExceeded, "flightx: stream idle for 1s after 0 messages", ErrIdle},
		{codes.DeadlineExceeded, "context deadline exceeded", ErrTransport},
		{codes.Unavailable, "connection refused", ErrTransport},
	}
	for _, c := range cases {
		err := transportErr(status.Error(c.code, c.msg))
		assert.ErrorIs(t, err, c.want, "%v %q", c.code, c.msg)
		assert.Equal(t, c.code, status.Code(err))
		for _, other := range []error{ErrBusy, ErrIdle, ErrTooLarge} {
			if other != c.want {
				assert.False(t, errors.Is(err, other), "%v %q is also %v", c.code, c.msg, other)
			}
		}
	}
}
