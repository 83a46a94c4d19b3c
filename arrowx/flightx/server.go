package flightx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Defaults of the options.
const (
	// DefaultChunkBytes is the largest batch body a sender writes: 1 MiB, well under gRPC's
	// default 4 MiB message limit.
	DefaultChunkBytes = 1 << 20
	// DefaultMaxBytes is the largest tensor a receiver accepts: 1 GiB.
	DefaultMaxBytes = 1 << 30
	// DefaultMaxInFlight bounds the memory a server's DoPut streams under way hold together:
	// 2 GiB, room for one tensor of DefaultMaxBytes (which takes 1.5 times its size for a
	// moment while it is assembled) and more.
	DefaultMaxInFlight = 2 << 30
	// DefaultIdleTimeout is how long a server's DoPut stream may go without a message, or its
	// DoGet stream without a send going through, before the server ends it: 30 s.
	DefaultIdleTimeout = 30 * time.Second
	// maxMessage is the gRPC message size limit that the server and Dial set: room for a
	// 15 MiB chunk and its header.
	maxMessage = 16 << 20
)

// config holds the options of a Server or Client.
type config struct {
	chunkBytes  int
	maxBytes    int64
	mem         amemory.Allocator
	maxInFlight int64         // a server's WithMaxInFlight
	idle        time.Duration // a server's WithIdleTimeout
	inFlight    *budget       // the server's memory in flight; nil in a client
	flat        bool          // WithFlatColumn
	sec         *security     // WithTLS, WithTokens, WithToken (auth.go)
}

func newConfig(opts []Option) config {
	c := config{chunkBytes: DefaultChunkBytes, maxBytes: DefaultMaxBytes, mem: amemory.DefaultAllocator,
		maxInFlight: DefaultMaxInFlight, idle: DefaultIdleTimeout}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Option configures a Server or a Client.
type Option func(*config)

// WithChunkBytes sets the largest batch body the sender writes (default DefaultChunkBytes;
// at most 15 MiB, the message limit of this package's gRPC settings, less room for headers).
func WithChunkBytes(n int) Option {
	return func(c *config) { c.chunkBytes = min(max(n, 8), maxMessage-(1<<20)) }
}

// WithMaxBytes sets the largest tensor the receiver accepts (default DefaultMaxBytes): a
// stream announcing more fails with ErrTooLarge before anything is allocated.
func WithMaxBytes(n int64) Option { return func(c *config) { c.maxBytes = n } }

// WithMaxInFlight bounds the memory that a Server's DoPut streams under way hold together
// (default DefaultMaxInFlight): the batches received and the tensors being assembled, until
// each is stored; for a list of tensors, the messages its tensors view, the tensors copied out
// of their messages and 64 bytes a tensor. A receiver takes memory as batches come, never what
// a stream merely announces: at most about twice what has arrived, and, while the whole tensor
// is put together, one and a half times its size. A stream whose next batch would take the
// total over n is refused with ErrBusy (gRPC status ResourceExhausted), which a Client's Put
// returns: try again later. Give at least 1.5 times WithMaxBytes for a tensor of the largest
// size to come in at all. Stored tensors do not count; neither does gRPC's buffer of the
// message being read (up to 16 MiB a stream). Zero or negative: no limit. A Client ignores
// this option.
func WithMaxInFlight(n int64) Option { return func(c *config) { c.maxInFlight = n } }

// WithIdleTimeout sets how long a Server's DoPut stream may go without a message, from its
// start to its last batch, before the server ends it (default DefaultIdleTimeout; zero or
// negative: never), releasing what it held: the client gets ErrIdle (gRPC status
// DeadlineExceeded). A stalled client thus holds memory for a bounded time. A slow sender is not
// cut off as long as each batch comes whole within d of the last: with the default and batches
// of 1 MiB (DefaultChunkBytes), a stream's share of the network must stay above about 35 KB/s.
// The same bound ends a DoGet whose client stops reading: when one send waits d for gRPC's
// flow control (the client's window full), the server ends the stream with DeadlineExceeded and
// lets go of the handler and its view of the tensor, which would otherwise stay until the
// connection closed. A Client ignores this option (give its calls a context with a deadline).
func WithIdleTimeout(d time.Duration) Option { return func(c *config) { c.idle = d } }

// WithFlatColumn makes a sender (a Client's Put, a Server's DoGet and ListFlights) write the
// earlier format of this package: one flat column of the elements (FixedSizeBinary for dtypes
// without an Arrow primitive, bool as bytes), the shape only in the dlpack.shape metadata. It is
// for receivers built before flightx sent arrow.fixed_shape_tensor columns; receivers read both.
func WithFlatColumn() Option { return func(c *config) { c.flat = true } }

// WithAllocator sets the Arrow allocator of the IPC readers and writers (for tests, a
// amemory.CheckedAllocator).
func WithAllocator(mem amemory.Allocator) Option { return func(c *config) { c.mem = mem } }

// entry is a stored tensor: a view of its own, and its metadata; or a stored list of tensors
// (info.Variable), views of one block.
type entry struct {
	t    *core.Tensor
	meta map[string]string
	list []*core.Tensor
	info Info // of a list: what listInfo said of it
	// packed: the list's tensors lie one after the other in one block (PutTensors), which
	// DoGet sends as it lies
	packed bool
}

// release lets go of the entry's tensors.
func (e entry) release() {
	if e.t != nil {
		e.t.Release()
	}
	for _, t := range e.list {
		t.Release()
	}
}

// Server serves named tensors over Arrow Flight: DoGet streams a tensor, DoPut stores one,
// ListFlights and GetFlightInfo describe them. It is safe for concurrent use.
type Server struct {
	flight.BaseFlightServer
	cfg config

	mu      sync.Mutex
	tensors map[string]entry
	grpc    *grpc.Server
	stopped bool         // Stop or GracefulStop was called: Serve returns at once
	panics  atomic.Int64 // handler panics recovered (Panics)
}

// NewServer makes a server with no tensors.
func NewServer(opts ...Option) *Server {
	cfg := newConfig(opts)
	cfg.inFlight = &budget{limit: cfg.maxInFlight}
	if cfg.maxInFlight <= 0 {
		cfg.inFlight.limit = math.MaxInt64
	}
	return &Server{cfg: cfg, tensors: map[string]entry{}}
}

// InFlight returns the bytes that the server's DoPut streams under way hold now: what
// WithMaxInFlight bounds.
func (s *Server) InFlight() int64 { return s.cfg.inFlight.used.Load() }

// Put stores t under name with its metadata (keys must not start with "dlpack."), replacing
// what was there. The server keeps a view of a C-contiguous t (t.View), so t's memory stays
// valid until the tensor is replaced or deleted or the server is closed, whatever the caller
// does with t, and every DoGet sends it without a copy; any other layout is copied once, here,
// into C order. A view that repeats elements into more than 2^63 bytes (BroadcastTo) is
// refused with core.ErrOverflow.
func (s *Server) Put(name string, t *core.Tensor, meta map[string]string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if t == nil {
		return errs.Errorf(core.ErrNil, "flightx: nil tensor")
	}
	if _, err := schemaOf(Info{DType: t.DType(), Shape: t.Shape(), Meta: meta}); err != nil {
		return err
	}
	if !t.HostAccessible() {
		return errs.Errorf(core.ErrNotHost, "flightx: %s is not in host memory (serving it)", t)
	}
	var v *core.Tensor
	var err error
	if t.IsContiguous() {
		v, err = t.View()
	} else {
		v, err = memory.Contiguous(t)
	}
	if err != nil {
		return wrapf(err, "")
	}
	m := make(map[string]string, len(meta))
	for k, val := range meta {
		m[k] = val
	}
	s.store(name, entry{t: v, meta: m})
	return nil
}

func (s *Server) store(name string, e entry) {
	s.mu.Lock()
	old, had := s.tensors[name]
	s.tensors[name] = e
	s.mu.Unlock()
	if had {
		old.release()
	}
}

// Get returns a view of the tensor stored under name (release it when done) and its metadata;
// a list of tensors stored under name (PutTensors) is refused with ErrMismatch.
func (s *Server) Get(name string) (*core.Tensor, map[string]string, error) {
	s.mu.Lock()
	e, ok := s.tensors[name]
	var v *core.Tensor
	var err error
	if ok && !e.info.Variable {
		v, err = e.t.View()
	}
	s.mu.Unlock()
	if !ok {
		return nil, nil, errs.Errorf(ErrNotFound, "flightx: no tensor %q", name)
	}
	if e.info.Variable {
		return nil, nil, errs.Errorf(ErrMismatch, "flightx: %q is a list of %d %s tensors, not one tensor (GetTensors returns it)",
			name, len(e.list), e.info.DType)
	}
	return v, e.meta, err
}

// Delete removes and releases the tensor stored under name; transfers under way finish.
func (s *Server) Delete(name string) { s.remove(name) }

// remove removes and releases the tensor, or list, stored under name, and reports whether there
// was one.
func (s *Server) remove(name string) bool {
	s.mu.Lock()
	e, ok := s.tensors[name]
	delete(s.tensors, name)
	s.mu.Unlock()
	if ok {
		e.release()
	}
	return ok
}

// Names lists the stored tensors, sorted.
func (s *Server) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.tensors))
	for n := range s.tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Register adds the Flight service to a gRPC server the caller runs (set
// grpc.MaxRecvMsgSize to at least the senders' chunk size plus headers). With WithTokens, every
// call is checked as under Serve; WithTLS is the caller's to give that server (grpc.Creds).
func (s *Server) Register(g *grpc.Server) { flight.RegisterFlightServiceServer(g, s.service()) }

// ErrServing: Serve was called twice, or after Stop.
var ErrServing = errors.New("flightx: server already serving or stopped")

// Serve runs a gRPC server with the Flight service on lis until Stop or GracefulStop (it then
// returns nil): over TLS with WithTLS (and WithClientCAs), admitting only the holders of tokens
// with WithTokens; without them, anyone who reaches lis may put, overwrite and delete tensors. It closes lis. A server serves once: a second Serve, or one after Stop, closes
// lis and fails with ErrServing.
//
// If lis fails (its Accept returns an error gRPC does not retry, or it is closed), the server
// stops as Stop stops it, failing the transfers under way, and Serve returns the error, wrapped
// in ErrTransport: once Serve has returned, nothing of the server runs (gRPC alone would go on
// serving the connections already open, with nobody left to stop them).
func (s *Server) Serve(lis net.Listener) error {
	s.mu.Lock()
	if s.grpc != nil || s.stopped {
		s.mu.Unlock()
		lis.Close()
		return ErrServing
	}
	g := grpc.NewServer(append(s.serverOptions(), recvCodec, grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))...)
	s.Register(g)
	s.grpc = g
	s.mu.Unlock()
	if err := g.Serve(lis); err != nil {
		s.Stop()
		return errs.Errorf(ErrTransport, "flightx: serving failed: %w", err)
	}
	return nil
}

// Stop stops the gRPC server that Serve runs at once, failing the transfers under way. A Serve
// called after it returns at once.
func (s *Server) Stop() {
	s.mu.Lock()
	g := s.grpc
	s.stopped = true
	s.mu.Unlock()
	if g != nil {
		g.Stop()
	}
}

// GracefulStop stops the gRPC server that Serve runs after the transfers under way end.
func (s *Server) GracefulStop() {
	s.mu.Lock()
	g := s.grpc
	s.stopped = true
	s.mu.Unlock()
	if g != nil {
		g.GracefulStop()
	}
}

// Close releases every stored tensor.
func (s *Server) Close() {
	s.mu.Lock()
	ts := s.tensors
	s.tensors = map[string]entry{}
	s.mu.Unlock()
	for _, e := range ts {
		e.release()
	}
}

func (s *Server) info(name string, e entry) (*flight.FlightInfo, error) {
	if e.info.Variable {
		return s.listFlightInfo(name, e)
	}
	info := Info{Name: name, DType: e.t.DType(), Shape: e.t.Shape(), Meta: e.meta}
	schema, col, err := schemaFor(info, s.cfg.chunkBytes, s.cfg.flat)
	if err != nil {
		return nil, err
	}
	per := max(int64(s.cfg.chunkBytes)/int64(info.DType.Size()), 1)
	records := (info.Len() + per - 1) / per
	if col != nil {
		rows, perRows := col.rows(info), col.batchRows(int64(info.DType.Size()), s.cfg.chunkBytes)
		records = (rows + perRows - 1) / perRows
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.cfg.mem),
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}},
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: []byte(name)}}},
		TotalRecords:     records,
		TotalBytes:       info.Bytes(),
	}, nil
}

// ListFlights describes every stored tensor.
func (s *Server) ListFlights(_ *flight.Criteria, stream flight.FlightService_ListFlightsServer) (err error) {
	defer s.recovered("ListFlights", &err)
	for _, name := range s.Names() {
		hook("ListFlights", name)
		s.mu.Lock()
		e, ok := s.tensors[name]
		s.mu.Unlock()
		if !ok {
			continue
		}
		fi, err := s.info(name, e)
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		if err := stream.Send(fi); err != nil {
			return err
		}
	}
	return nil
}

// GetFlightInfo describes one stored tensor (descriptor PATH [name]).
func (s *Server) GetFlightInfo(_ context.Context, d *flight.FlightDescriptor) (fi *flight.FlightInfo, err error) {
	defer s.recovered("GetFlightInfo", &err)
	if d == nil || len(d.Path) != 1 {
		return nil, status.Error(codes.InvalidArgument, "flightx: descriptor must be a path of one tensor name")
	}
	hook("GetFlightInfo", d.Path[0])
	s.mu.Lock()
	e, ok := s.tensors[d.Path[0]]
	s.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "flightx: no tensor %q", d.Path[0])
	}
	return s.info(d.Path[0], e)
}

// DoGet streams the tensor named by the ticket. A client that stops reading (so that a send
// waits for gRPC's flow control for the idle timeout, WithIdleTimeout) has its stream ended
// with DeadlineExceeded, which lets the tensor and the handler go.
func (s *Server) DoGet(tk *flight.Ticket, stream flight.FlightService_DoGetServer) (err error) {
	defer s.recovered("DoGet", &err)
	name := string(tk.GetTicket())
	send, release, err := s.sender(name)
	if errors.Is(err, ErrNotFound) {
		return status.Errorf(codes.NotFound, "flightx: no tensor %q", name)
	}
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	send = s.recoveringSend(name, send)
	if s.cfg.idle <= 0 {
		defer release()
		return getStatus(send(stream.Send))
	}
	// A gRPC Send blocked on flow control returns only when the call ends, and the call ends
	// when the handler returns: so the sends run on a goroutine of their own (which holds t), and
	// the handler returns when they stall, which makes the blocked Send fail and that goroutine
	// end. Progress is the time of the last Send's return.
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	done := make(chan error, 1)
	go func() {
		defer release()
		done <- send(func(fd *flight.FlightData) error {
			err := stream.Send(fd)
			last.Store(time.Now().UnixNano())
			return err
		})
	}()
	timer := time.NewTimer(s.cfg.idle)
	defer timer.Stop()
	for {
		select {
		case err := <-done:
			return getStatus(err)
		case <-timer.C:
			since := time.Since(time.Unix(0, last.Load()))
			if since < s.cfg.idle {
				timer.Reset(s.cfg.idle - since)
				continue
			}
			return status.Errorf(codes.DeadlineExceeded, idleMark+" for %v: the client of DoGet %q stopped reading",
				s.cfg.idle, name)
		}
	}
}

// sender returns what DoGet runs to send the flight called name, over views of the stored
// tensor or list (taken together with what describes them, under the lock) that release lets
// go.
func (s *Server) sender(name string) (send func(func(*flight.FlightData) error) error, release func(), err error) {
	s.mu.Lock()
	e, ok := s.tensors[name]
	var views []*core.Tensor
	if ok {
		for _, t := range append([]*core.Tensor{e.t}, e.list...) {
			if t == nil {
				continue
			}
			v, verr := t.View()
			if verr != nil {
				err = verr
				break
			}
			views = append(views, v)
		}
	}
	s.mu.Unlock()
	release = func() {
		for _, v := range views {
			v.Release()
		}
	}
	if !ok {
		return nil, nil, errs.Errorf(ErrNotFound, "flightx: no tensor %q", name)
	}
	if err != nil {
		release()
		return nil, nil, err
	}
	if e.info.Variable {
		info := e.info
		info.Name, info.Meta = name, e.meta
		return func(f func(*flight.FlightData) error) error {
			return sendList(f, nil, info, views, s.cfg.chunkBytes, s.cfg.mem, e.packed)
		}, release, nil
	}
	t := views[0]
	info := Info{Name: name, DType: t.DType(), Shape: t.Shape(), Meta: e.meta}
	return func(f func(*flight.FlightData) error) error {
		return sendTensorAs(f, nil, info, t, s.cfg.chunkBytes, s.cfg.mem, s.cfg.flat)
	}, release, nil
}

// listFlightInfo describes a stored list of tensors.
func (s *Server) listFlightInfo(name string, e entry) (*flight.FlightInfo, error) {
	info := e.info
	info.Name, info.Meta = name, e.meta
	schema, err := listSchema(info)
	if err != nil {
		return nil, err
	}
	_, extra, _ := carrier(info.DType)
	per := int64(1)
	for _, d := range extra {
		per *= d
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.cfg.mem),
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}},
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: []byte(name)}}},
		TotalRecords:     int64(len(listBatches(e.list, int64(info.DType.Size()), per, s.cfg.chunkBytes))),
		TotalBytes:       info.Bytes(),
	}, nil
}

// getStatus is the gRPC status DoGet returns for the error of its sends.
func getStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Internal, err.Error())
}

// DoPut receives a tensor, or a list of tensors of a variable-shape stream (descriptor PATH
// [name] on the first message), and stores it. The stored tensor is a view of the received
// message when it came in one batch; a list's tensors are views of their batches' messages. A plain
// Arrow stream (no dlpack.* metadata: arrow-go's flight.NewRecordWriter, pyarrow) is stored as
// a tensor of [rows, row shape...], or, when its one column is an arrow.variable_shape_tensor,
// as a list of one tensor a row (GetTensors returns it), within WithMaxBytes. A stream that
// goes quiet for the idle timeout (WithIdleTimeout) is ended with DeadlineExceeded, one whose
// memory would pass the server's limit (WithMaxInFlight) with ResourceExhausted.
func (s *Server) DoPut(stream flight.FlightService_DoPutServer) (err error) {
	defer s.recovered("DoPut", &err)
	var src flight.DataStreamReader = stream
	if s.cfg.idle > 0 {
		r := newIdleReader(stream, s.cfg.idle)
		defer r.stop()
		src = r
	}
	info, t, list, err := readAny(src, s.cfg, func(d *flight.FlightDescriptor, info *Info) error {
		if d == nil || len(d.Path) != 1 {
			return errs.Errorf(ErrProtocol, "flightx: DoPut needs a descriptor PATH [name]")
		}
		info.Name = d.Path[0]
		return checkName(info.Name)
	}, nil, nil, true)
	if err != nil && info.Name != "" {
		err = fmt.Errorf("%w (DoPut %q)", err, info.Name)
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrIdle):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, ErrTooLarge), errors.Is(err, ErrBusy):
		return status.Error(codes.ResourceExhausted, err.Error())
	case isStatus(err):
		return unwrapStatus(err)
	default:
		return status.Error(codes.InvalidArgument, err.Error())
	}
	e := entry{t: t, meta: info.Meta}
	if info.Variable {
		e = entry{list: list, meta: info.Meta, info: info}
	}
	stored := false
	defer func() {
		if !stored { // a panic before the store: what the stream received goes
			e.release()
		}
	}()
	hook("DoPut", info.Name)
	s.store(info.Name, e)
	stored = true
	return stream.Send(&flight.PutResult{})
}
