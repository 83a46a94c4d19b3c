package flightx

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Errors of access control, on the client's side (the gRPC status stays inside).
var (
	// ErrUnauthenticated: the server did not know the caller (no token, or a token it does not
	// hold: gRPC status Unauthenticated).
	ErrUnauthenticated = errors.New("flightx: not authenticated")
	// ErrPermission: the caller's role does not allow the call (a read-only token that puts or
	// deletes: gRPC status PermissionDenied).
	ErrPermission = errors.New("flightx: permission denied")
	// ErrInsecure: Dial was asked to send a token in clear text to an address off loopback.
	ErrInsecure = errors.New("flightx: credentials would travel in clear text")
)

// Role is what a token lets its holder do on a Server.
type Role int

const (
	// ReadOnly lists, describes and fetches tensors: ListFlights, GetFlightInfo, GetSchema,
	// PollFlightInfo, DoGet, ListActions and Handshake.
	ReadOnly Role = iota + 1
	// ReadWrite does what ReadOnly does and changes the store: DoPut (which adds or overwrites
	// a tensor), DoAction (the "delete" action: Client.Delete) and DoExchange.
	ReadWrite
)

// String names the role: "read-only", "read-write".
func (r Role) String() string {
	switch r {
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	}
	return "no role"
}

// security holds the options of access control; nil in a config without any.
type security struct {
	tls       *tls.Config
	clientCAs *x509.CertPool             // a server's WithClientCAs
	tokens    map[[sha256.Size]byte]Role // a server's tokens, by their SHA-256
	token     string                     // a client's token
}

func (c *config) security() *security {
	if c.sec == nil {
		c.sec = &security{}
	}
	return c.sec
}

// WithTLS makes a Server's Serve, or Dial, speak TLS with cfg (cloned; for TLS 1.3 and later,
// leave MinVersion zero). On a Server, cfg holds the server's certificate (Certificates or
// GetCertificate); to require client certificates (mutual TLS), set ClientAuth to
// tls.RequireAndVerifyClientCert and ClientCAs, or add WithClientCAs. For Dial, cfg holds the
// roots that verify the server (RootCAs; nil: the system's) and, for mutual TLS, the client's
// certificate. A Server that Register puts on a gRPC server of the caller's does not use it:
// give that server grpc.Creds(credentials.NewTLS(cfg)) yourself. NewClient ignores it (the
// caller made the connection).
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) {
		if cfg != nil {
			c.security().tls = cfg.Clone()
		}
	}
}

// WithClientCAs makes a Server require a client certificate signed by one of the authorities
// in pool, verified during the TLS handshake (mutual TLS): a client without one is refused
// before any call. It needs WithTLS (given before or after it) for the server's certificate;
// without it every handshake fails. A Client ignores it.
func WithClientCAs(pool *x509.CertPool) Option {
	return func(c *config) { c.security().clientCAs = pool }
}

// WithTokens makes a Server admit only callers that present one of the tokens (the keys) in the
// gRPC header "authorization: Bearer <token>", each with the Role it maps to. A call without a
// token, or with one the server does not hold, fails with gRPC status Unauthenticated (ErrUnauthenticated
// at a Client); a call beyond the token's role with PermissionDenied (ErrPermission), before
// the store is touched. Tokens are compared by their SHA-256, and empty tokens are ignored. Flight's Handshake is
// answered too: a client that sends the token as its payload, as "Bearer <token>", or as the password of
// "Basic" credentials (pyarrow's FlightClient.authenticate_basic_token) gets back the header
// "authorization: Bearer <token>" to send on its calls. Tokens travel in clear text without TLS: give
// WithTLS too off loopback. A Client ignores this option (it takes WithToken).
func WithTokens(tokens map[string]Role) Option {
	return func(c *config) {
		s := c.security()
		if s.tokens == nil {
			s.tokens = map[[sha256.Size]byte]Role{}
		}
		for tok, r := range tokens {
			if tok != "" {
				s.tokens[sha256.Sum256([]byte(tok))] = r
			}
		}
	}
}

// WithToken makes a Client send "authorization: Bearer <token>" on every call (for a Server's
// WithTokens). Dial refuses it with ErrInsecure when the connection would be plain TCP to an
// address that is not loopback (give WithTLS). A Server ignores it.
func WithToken(token string) Option {
	return func(c *config) { c.security().token = token }
}

// dialCreds returns the transport credentials of Dial to addr.
func dialCreds(cfg config, addr string) (credentials.TransportCredentials, error) {
	if cfg.sec == nil || cfg.sec.tls == nil {
		if cfg.sec != nil && cfg.sec.token != "" && !isLoopback(addr) {
			return nil, errs.Errorf(ErrInsecure, "flightx: a token over plain TCP to %s (not a loopback address) would travel in clear text: give WithTLS", addr)
		}
		return insecure.NewCredentials(), nil
	}
	return credentials.NewTLS(cfg.sec.tls), nil
}

// isLoopback reports whether addr ("host:port") names a loopback address: an IP of the
// loopback range or "localhost".
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenConn sends the bearer token on every call of a connection.
type tokenConn struct {
	grpc.ClientConnInterface
	header string
}

func (c tokenConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.ClientConnInterface.Invoke(metadata.AppendToOutgoingContext(ctx, "authorization", c.header), method, args, reply, opts...)
}

func (c tokenConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.ClientConnInterface.NewStream(metadata.AppendToOutgoingContext(ctx, "authorization", c.header), desc, method, opts...)
}

// clientConn returns conn, sending the token of cfg when it has one.
func clientConn(conn grpc.ClientConnInterface, cfg config) grpc.ClientConnInterface {
	if cfg.sec != nil && cfg.sec.token != "" {
		return tokenConn{conn, "Bearer " + cfg.sec.token}
	}
	return conn
}

// serverOptions are the gRPC options of Serve for the server's security options.
func (s *Server) serverOptions() []grpc.ServerOption {
	sec := s.cfg.sec
	if sec == nil || (sec.tls == nil && sec.clientCAs == nil) {
		return nil
	}
	cfg := &tls.Config{}
	if sec.tls != nil {
		cfg = sec.tls.Clone()
	}
	if sec.clientCAs != nil {
		cfg.ClientCAs, cfg.ClientAuth = sec.clientCAs, tls.RequireAndVerifyClientCert
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(cfg))}
}

// service is what Register puts on a gRPC server: s itself, or s behind a check of every call's
// token when the server has tokens.
func (s *Server) service() flight.FlightServer {
	if s.cfg.sec == nil || s.cfg.sec.tokens == nil {
		return s
	}
	return &guarded{s: s, tokens: s.cfg.sec.tokens}
}

// guarded serves the calls of a Server whose callers present tokens; a call the server does not
// implement is Unimplemented, as on the Server.
type guarded struct {
	flight.BaseFlightServer // Unimplemented for the calls the Server does not serve
	s                       *Server
	tokens                  map[[sha256.Size]byte]Role
}

var _ flight.FlightServer = (*guarded)(nil)

// check returns nil when the call's token has the role need, else the status to end it with.
func (g *guarded) check(ctx context.Context, need Role, call string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return status.Errorf(codes.Unauthenticated, "flightx: %s without a token (send the header \"authorization: Bearer <token>\")", call)
	}
	tok, ok := strings.CutPrefix(vals[0], "Bearer ")
	if !ok {
		return status.Errorf(codes.Unauthenticated, "flightx: %s with an authorization header that is not \"Bearer <token>\"", call)
	}
	r, ok := g.tokens[sha256.Sum256([]byte(tok))]
	if !ok {
		return status.Errorf(codes.Unauthenticated, "flightx: %s with a token the server does not hold", call)
	}
	if r < need {
		return status.Errorf(codes.PermissionDenied, "flightx: %s needs a %s token, the caller's is %s", call, need, r)
	}
	return nil
}

// Handshake checks the token a client offers (see WithTokens) and answers with it in the
// "authorization: Bearer <token>" header and the response payload.
func (g *guarded) Handshake(stream flight.FlightService_HandshakeServer) error {
	req, err := stream.Recv()
	switch {
	case errors.Is(err, io.EOF): // credentials in the header only (pyarrow's authenticate_basic_token)
		req = &flight.HandshakeRequest{}
	case err != nil:
		return err
	}
	tok := ""
	md, _ := metadata.FromIncomingContext(stream.Context())
	if vals := md.Get("authorization"); len(vals) > 0 {
		switch v := vals[0]; {
		case strings.HasPrefix(v, "Bearer "):
			tok = strings.TrimPrefix(v, "Bearer ")
		case strings.HasPrefix(v, "Basic "):
			raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(v, "Basic "))
			if err == nil {
				_, tok, _ = strings.Cut(string(raw), ":")
			}
		}
	}
	if tok == "" {
		tok = string(req.GetPayload())
	}
	if _, ok := g.tokens[sha256.Sum256([]byte(tok))]; tok == "" || !ok {
		return status.Error(codes.Unauthenticated, "flightx: Handshake without a token the server holds")
	}
	if err := stream.SetHeader(metadata.Pairs("authorization", "Bearer "+tok)); err != nil {
		return err
	}
	return stream.Send(&flight.HandshakeResponse{ProtocolVersion: req.GetProtocolVersion(), Payload: []byte(tok)})
}

func (g *guarded) ListFlights(c *flight.Criteria, stream flight.FlightService_ListFlightsServer) error {
	if err := g.check(stream.Context(), ReadOnly, "ListFlights"); err != nil {
		return err
	}
	return g.s.ListFlights(c, stream)
}

func (g *guarded) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if err := g.check(ctx, ReadOnly, "GetFlightInfo"); err != nil {
		return nil, err
	}
	return g.s.GetFlightInfo(ctx, d)
}

func (g *guarded) PollFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.PollInfo, error) {
	if err := g.check(ctx, ReadOnly, "PollFlightInfo"); err != nil {
		return nil, err
	}
	return g.s.PollFlightInfo(ctx, d)
}

func (g *guarded) GetSchema(ctx context.Context, d *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	if err := g.check(ctx, ReadOnly, "GetSchema"); err != nil {
		return nil, err
	}
	return g.s.GetSchema(ctx, d)
}

func (g *guarded) DoGet(tk *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	if err := g.check(stream.Context(), ReadOnly, "DoGet"); err != nil {
		return err
	}
	return g.s.DoGet(tk, stream)
}

func (g *guarded) DoPut(stream flight.FlightService_DoPutServer) error {
	if err := g.check(stream.Context(), ReadWrite, "DoPut"); err != nil {
		return err
	}
	return g.s.DoPut(stream)
}

func (g *guarded) DoExchange(stream flight.FlightService_DoExchangeServer) error {
	if err := g.check(stream.Context(), ReadWrite, "DoExchange"); err != nil {
		return err
	}
	return g.s.DoExchange(stream)
}

func (g *guarded) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	if err := g.check(stream.Context(), ReadWrite, "DoAction"); err != nil {
		return err
	}
	return g.s.DoAction(a, stream)
}

func (g *guarded) ListActions(e *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	if err := g.check(stream.Context(), ReadOnly, "ListActions"); err != nil {
		return err
	}
	return g.s.ListActions(e, stream)
}
