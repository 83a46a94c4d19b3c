package flightx

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/core"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Client fetches, sends and lists tensors on a Flight server of this package. It is safe for
// concurrent use.
type Client struct {
	fc   flight.FlightServiceClient
	conn *grpc.ClientConn // nil when the caller owns the connection
	cfg  config
}

// Dial connects to a server at addr ("host:port"), with message limits that fit chunks of up
// to 15 MiB: over TLS with WithTLS, plain TCP without it; WithToken sends a bearer token on
// every call (refused with ErrInsecure over plain TCP off loopback). For other settings, make
// a connection and use NewClient.
func Dial(addr string, opts ...Option) (*Client, error) {
	creds, err := dialCreds(newConfig(opts), addr)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(dialCodec, grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)))
	if err != nil {
		return nil, errs.Errorf(ErrTransport, "flightx: dialing %s: %v", addr, err)
	}
	c := NewClient(conn, opts...)
	c.conn = conn
	return c, nil
}

// NewClient uses a gRPC connection the caller made (and closes); WithToken sends the token on
// every call.
func NewClient(conn grpc.ClientConnInterface, opts ...Option) *Client {
	cfg := newConfig(opts)
	return &Client{fc: flight.NewFlightServiceClient(clientConn(conn, cfg)), cfg: cfg}
}

// Close closes the connection Dial made.
func (c *Client) Close() error {
	if c.conn != nil {
		return c.conn.Close()
	}
	return nil
}

// Get fetches the tensor called name and its metadata. A tensor that came in one batch is a
// read-only view of the received message (no copy after the network read); a larger one is
// assembled from its batches into one C-order tensor as they arrive (one copy of each batch,
// flagged core.FlagIsCopied). Use Stream to consume large tensors chunk by chunk without it.
func (c *Client) Get(ctx context.Context, name string) (*core.Tensor, map[string]string, error) {
	var info Info
	t, err := c.get(ctx, name, &info, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	return t, info.Meta, nil
}

// GetInto fetches the tensor called name into dst, a writable C-contiguous host tensor of its
// dtype and number of elements (ErrMismatch otherwise), copying each batch once into place as
// it arrives: for fetching the same tensor again and again without allocating it each time. It
// returns the metadata; on error dst may hold part of the tensor.
func (c *Client) GetInto(ctx context.Context, name string, dst *core.Tensor) (map[string]string, error) {
	if dst == nil {
		return nil, errs.Errorf(ErrMismatch, "flightx: nil destination")
	}
	h, err := core.Hold(dst)
	if err != nil {
		return nil, wrapf(err, "get %q", name)
	}
	defer h.Release()
	var info Info
	t, err := c.get(ctx, name, &info, dst, nil)
	if err != nil {
		return nil, err
	}
	t.Release()
	return info.Meta, nil
}

// Stream fetches the tensor called name chunk by chunk, with memory bounded by one chunk:
// each is a 1-D read-only view of the received message, holding elements off .. off+Len-1 of
// the tensor in C order, valid until fn returns (take a View to keep it). info describes the
// whole tensor. An error from fn cancels the transfer and is returned.
func (c *Client) Stream(ctx context.Context, name string, fn func(info Info, chunk *core.Tensor, off int64) error) error {
	var info Info
	_, err := c.get(ctx, name, &info, nil, fn)
	return err
}

func (c *Client) get(ctx context.Context, name string, info *Info, into *core.Tensor,
	each func(Info, *core.Tensor, int64) error) (*core.Tensor, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream, whatever happened
	stream, err := c.fc.DoGet(ctx, &flight.Ticket{Ticket: []byte(name)})
	if err != nil {
		return nil, wrapf(transportErr(err), "get %q", name)
	}
	got, t, err := readStream(stream, c.cfg, func(_ *flight.FlightDescriptor, i *Info) error {
		i.Name = name
		return nil
	}, into, each)
	if err != nil {
		return nil, wrapf(err, "get %q", name)
	}
	got.Name = name
	*info = got
	return t, nil
}

// Put sends t to the server under name, with its metadata (keys must not start with
// "dlpack."). A C-contiguous host tensor goes out in chunks over its own memory, without an
// intermediate copy; other layouts are copied once into C order first. A view that repeats
// elements into more than 2^63 bytes (BroadcastTo) is refused with core.ErrOverflow.
func (c *Client) Put(ctx context.Context, name string, t *core.Tensor, meta map[string]string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if t == nil {
		return errs.Errorf(core.ErrNil, "flightx: nil tensor")
	}
	h, err := core.Hold(t)
	if err != nil {
		return wrapf(err, "put %q", name)
	}
	defer h.Release()
	info := Info{Name: name, DType: t.DType(), Shape: t.Shape(), Meta: meta}
	if _, err := schemaOf(info); err != nil {
		return wrapf(err, "put %q", name)
	}
	if !t.HostAccessible() {
		return errs.Errorf(core.ErrNotHost, "flightx: %s is not in host memory (put %q)", t, name)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.fc.DoPut(ctx)
	if err != nil {
		return wrapf(transportErr(err), "put %q", name)
	}
	send := stream.Send
	if c.conn != nil { // Dial's connection: chunks go out as the tensor's memory (sendbody.go)
		bs, err := newBodySender(stream, t)
		if err != nil {
			return wrapf(err, "put %q", name)
		}
		defer bs.done()
		send = bs.send
	}
	desc := &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}}
	// everything sendTensor could refuse was checked above: an error now is the stream's
	sendErr := sendTensorAs(send, desc, info, t, c.cfg.chunkBytes, c.cfg.mem, c.cfg.flat)
	return putVerdict(stream, sendErr, "put", name)
}

// putVerdict ends a DoPut stream the client sent on and returns the server's verdict: a
// PutResult, then the status (Send returns io.EOF when the server ended the call early; the
// reason comes from Recv). op names the call in errors ("put").
func putVerdict(stream flight.FlightService_DoPutClient, sendErr error, op, name string) error {
	if err := stream.CloseSend(); err != nil && sendErr == nil {
		sendErr = err
	}
	for i := 0; i < 16; i++ {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				if sendErr != nil {
					return wrapf(transportErr(sendErr), "%s %q", op, name)
				}
				return nil
			}
			return wrapf(transportErr(err), "%s %q", op, name)
		}
	}
	return errs.Errorf(ErrProtocol, "flightx: the server sent more than 16 results to %s %q", op, name)
}

// List describes the tensors on the server.
func (c *Client) List(ctx context.Context) ([]Info, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.fc.ListFlights(ctx, &flight.Criteria{})
	if err != nil {
		return nil, wrapf(transportErr(err), "list")
	}
	var out []Info
	for {
		fi, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, wrapf(transportErr(err), "list")
		}
		info, err := infoOf(fi, c.cfg)
		if err != nil {
			return nil, wrapf(err, "list")
		}
		out = append(out, info)
	}
}

func infoOf(fi *flight.FlightInfo, cfg config) (Info, error) {
	d := fi.GetFlightDescriptor()
	if d == nil || len(d.Path) != 1 {
		return Info{}, errs.Errorf(ErrProtocol, "flightx: the server listed a flight without a one-name path")
	}
	s, err := deserializeSchema(fi.GetSchema(), cfg)
	if err != nil {
		return Info{}, err
	}
	info, err := DecodeSchema(s)
	if err != nil {
		return Info{}, err
	}
	info.Name = d.Path[0]
	return info, nil
}

// isStatus reports whether err carries a gRPC status.
func isStatus(err error) bool {
	var se interface{ GRPCStatus() *status.Status }
	return errors.As(err, &se)
}

// unwrapStatus returns the gRPC status error inside err, or err.
func unwrapStatus(err error) error {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.(error)
	}
	return err
}

// transportErr wraps an error of a call: ErrNotFound for NotFound, ErrProtocol for
// InvalidArgument (the server refused what it got), ErrBusy or ErrTooLarge for
// ResourceExhausted (by what the server said), ErrIdle for a server's idle timeout, else
// ErrTransport; the gRPC status stays inside.
func transportErr(err error) error {
	st, _ := status.FromError(unwrapStatus(err))
	switch st.Code() {
	case codes.NotFound:
		return errs.Errorf(ErrNotFound, "flightx: the server has no such tensor: %w", err)
	case codes.InvalidArgument:
		return errs.Errorf(ErrProtocol, "flightx: the server refused the stream as malformed: %w", err)
	case codes.ResourceExhausted:
		if strings.Contains(st.Message(), busyMark) {
			return errs.Errorf(ErrBusy, "flightx: the server is at its memory limit: %w", err)
		}
		return errs.Errorf(ErrTooLarge, "flightx: the server refused the size: %w", err)
	case codes.Unauthenticated:
		return errs.Errorf(ErrUnauthenticated, "flightx: the server did not admit the caller: %w", err)
	case codes.PermissionDenied:
		return errs.Errorf(ErrPermission, "flightx: the server refused the call to the caller's role: %w", err)
	case codes.DeadlineExceeded:
		if strings.Contains(st.Message(), idleMark) {
			return errs.Errorf(ErrIdle, "flightx: the server timed out an idle stream: %w", err)
		}
	}
	return errs.Errorf(ErrTransport, "flightx: call failed: %w", err)
}

// deserializeSchema reads the schema bytes of a FlightInfo (untrusted): arrow-go's reader may
// panic on garbage, which becomes ErrProtocol.
func deserializeSchema(b []byte, cfg config) (s *arrow.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, errs.Errorf(ErrProtocol, "flightx: unreadable tensor schema: %v", r)
		}
	}()
	if err := verifySchemaBytes(b); err != nil {
		return nil, err
	}
	s, err = flight.DeserializeSchema(b, cfg.mem)
	if err != nil {
		return nil, errs.Errorf(ErrProtocol, "flightx: unreadable tensor schema: %v", err)
	}
	return s, nil
}
