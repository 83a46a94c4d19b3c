package flightx

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// busyMark and idleMark are in the messages of ErrBusy and ErrIdle, old and new, so that a
// client tells them from ErrTooLarge and other deadlines in the server's gRPC status.
const (
	busyMark = "server memory in flight"
	idleMark = "flightx: stream idle"
)

// budget is a server's memory in flight: what its receivers hold, against its limit.
type budget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes, or fails with ErrBusy when that would pass the limit. A nil budget
// (a client's) has no limit.
func (b *budget) take(n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	for {
		u := b.used.Load()
		if u+n > b.limit || u+n < u {
			return errs.Errorf(ErrBusy, "flightx: %d more bytes would put %d bytes of "+busyMark+", over its limit of %d", n, u+n, b.limit)
		}
		if b.used.CompareAndSwap(u, u+n) {
			return nil
		}
	}
}

// give returns n bytes that take reserved.
func (b *budget) give(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}

// idleReader passes on the messages of a stream, failing with ErrIdle when none comes for
// idle. A gRPC stream's Recv cannot be interrupted except by ending the call, so one goroutine
// receives and hands each message over; stop lets it go (it returns once its Recv does: at the
// next message, or when the call ends, which the handler's return brings about).
type idleReader struct {
	msgs  chan received
	done  chan struct{}
	once  sync.Once
	idle  time.Duration
	timer *time.Timer
	n     int // messages passed on
}

type received struct {
	fd  *flight.FlightData
	err error
}

func newIdleReader(src flight.DataStreamReader, idle time.Duration) *idleReader {
	r := &idleReader{msgs: make(chan received), done: make(chan struct{}), idle: idle}
	go func() {
		for {
			fd, err := src.Recv()
			select {
			case r.msgs <- received{fd, err}:
			case <-r.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *idleReader) Recv() (*flight.FlightData, error) {
	if r.timer == nil {
		r.timer = time.NewTimer(r.idle)
	} else {
		r.timer.Reset(r.idle)
	}
	select {
	case m := <-r.msgs:
		r.timer.Stop()
		r.n++
		return m.fd, m.err
	case <-r.timer.C:
		return nil, errs.Errorf(ErrIdle, idleMark+" for %v after %d messages", r.idle, r.n)
	}
}

// stop lets the receiving goroutine go.
func (r *idleReader) stop() {
	r.once.Do(func() {
		close(r.done)
		if r.timer != nil {
			r.timer.Stop()
		}
	})
}
