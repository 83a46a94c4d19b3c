package flightx

import (
	"log"
	"runtime/debug"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// panicHook, when a test sets it, runs at points of the handlers (where names the handler
// and the flight) so that a test can make one panic.
var panicHook func(where, name string)

func hook(where, name string) {
	if panicHook != nil {
		panicHook(where, name)
	}
}

// Panics returns how many times a handler of the server (DoGet, DoPut, ListFlights,
// GetFlightInfo, or the sends of a DoGet) panicked since NewServer. Each panic ends only its
// own call, with gRPC status Internal, after what the call held is released; it is logged
// (with its stack, through package log), counted here, and the server goes on serving. A
// count that grows is a bug to report: no input is meant to reach one.
func (s *Server) Panics() int64 { return s.panics.Load() }

// recovered, deferred by a handler, turns a panic of the handler into the Internal status
// *err for that one call.
func (s *Server) recovered(method string, err *error) {
	if p := recover(); p != nil {
		*err = s.panicked(method, p)
	}
}

// panicked logs and counts a recovered panic p of method and returns the status for its call.
func (s *Server) panicked(method string, p any) error {
	s.panics.Add(1)
	log.Printf("flightx: %s panicked (the call fails with Internal, the server goes on): %v\n%s", method, p, debug.Stack())
	return status.Errorf(codes.Internal, "flightx: %s failed: an internal error (a panic, recovered: %v)", method, p)
}

// recoveringSend is DoGet's send with a panic of its own (on the goroutine DoGet runs it on, where
// the handler's recover cannot reach) turned into the call's error; its deferred release of
// the views runs either way.
func (s *Server) recoveringSend(name string, send func(func(*flight.FlightData) error) error) func(func(*flight.FlightData) error) error {
	return func(f func(*flight.FlightData) error) (err error) {
		defer s.recovered("DoGet", &err)
		hook("DoGet", name)
		return send(f)
	}
}
