package flightx_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// testCA is a certificate authority made for one test, with crypto/x509.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// leaf signs a certificate for 127.0.0.1 and localhost, for a server or a client.
func (ca *testCA) leaf(t *testing.T, name string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

const (
	rwToken = "rw-3b1f0c"
	roToken = "ro-9d2e77"
)

var tokens = map[string]flightx.Role{rwToken: flightx.ReadWrite, roToken: flightx.ReadOnly}

// storeOf returns the server's names and the values of its tensor "w".
func storeOf(t *testing.T, srv *flightx.Server) ([]string, []float32) {
	t.Helper()
	w, _, err := srv.Get("w")
	require.NoError(t, err)
	defer w.Release()
	return srv.Names(), append([]float32(nil), elems[float32](t, w)...)
}

// TestAccess runs every kind of caller against a server with TLS and tokens: only a read-write
// token changes the store, a read-only one reads, and everyone else is refused with the gRPC
// status the access control promises, the store as it was.
func TestAccess(t *testing.T) {
	ctx := context.Background()
	ca := newCA(t, "flightx test CA")
	srv, addr := serve(t, flightx.WithTLS(&tls.Config{Certificates: []tls.Certificate{ca.leaf(t, "server", x509.ExtKeyUsageServerAuth)}}),
		flightx.WithTokens(tokens))
	require.NoError(t, srv.Put("w", core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2), nil))
	names, vals := storeOf(t, srv)
	clientTLS := &tls.Config{RootCAs: ca.pool}
	newT := core.MustFromSlice([]float32{9, 9, 9, 9}, 2, 2)

	refused := []struct {
		name string
		opts []flightx.Option
		want error
		code codes.Code
	}{
		{"no token", []flightx.Option{flightx.WithTLS(clientTLS)}, flightx.ErrUnauthenticated, codes.Unauthenticated},
		{"wrong token", []flightx.Option{flightx.WithTLS(clientTLS), flightx.WithToken("rw-guess")}, flightx.ErrUnauthenticated, codes.Unauthenticated},
		{"read-only token", []flightx.Option{flightx.WithTLS(clientTLS), flightx.WithToken(roToken)}, flightx.ErrPermission, codes.PermissionDenied},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr, tc.opts...)
			for op, call := range map[string]func() error{
				"put over":  func() error { return c.Put(ctx, "w", newT, nil) },
				"put new":   func() error { return c.Put(ctx, "new", newT, nil) },
				"put list":  func() error { return c.PutTensors(ctx, "list", []*core.Tensor{newT}, nil) },
				"delete":    func() error { return c.Delete(ctx, "w") },
				"delete no": func() error { return c.Delete(ctx, "missing") },
			} {
				err := call()
				require.ErrorIs(t, err, tc.want, op)
				st, _ := status.FromError(err)
				assert.Equal(t, tc.code, st.Code(), op)
			}
			gotNames, gotVals := storeOf(t, srv)
			assert.Equal(t, names, gotNames)
			assert.Equal(t, vals, gotVals)
			_, _, err := c.Get(ctx, "w")
			_, lerr := c.List(ctx)
			if tc.code == codes.PermissionDenied { // a reader reads
				require.NoError(t, err)
				require.NoError(t, lerr)
			} else {
				require.ErrorIs(t, err, flightx.ErrUnauthenticated)
				require.ErrorIs(t, lerr, flightx.ErrUnauthenticated)
			}
		})
	}

	t.Run("plain TCP to TLS", func(t *testing.T) {
		c := dial(t, addr, flightx.WithToken(rwToken)) // loopback: the token may go in clear text
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		require.ErrorIs(t, c.Put(tctx, "w", newT, nil), flightx.ErrTransport)
		require.ErrorIs(t, c.Delete(tctx, "w"), flightx.ErrTransport)
		gotNames, gotVals := storeOf(t, srv)
		assert.Equal(t, names, gotNames)
		assert.Equal(t, vals, gotVals)
	})

	t.Run("untrusted server", func(t *testing.T) {
		other := newCA(t, "another CA")
		c := dial(t, addr, flightx.WithTLS(&tls.Config{RootCAs: other.pool}), flightx.WithToken(rwToken))
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := c.Put(tctx, "w", newT, nil)
		require.ErrorIs(t, err, flightx.ErrTransport)
		assert.Contains(t, err.Error(), "certificate")
	})

	t.Run("read-write token", func(t *testing.T) {
		c := dial(t, addr, flightx.WithTLS(clientTLS), flightx.WithToken(rwToken))
		require.NoError(t, c.Put(ctx, "new", core.MustFromSlice([]int32{5, 6, 7}), map[string]string{"k": "v"}))
		got, meta, err := c.Get(ctx, "new")
		require.NoError(t, err)
		assert.Equal(t, []int32{5, 6, 7}, elems[int32](t, got))
		assert.Equal(t, "v", meta["k"])
		got.Release()
		require.NoError(t, c.Put(ctx, "w", newT, nil))
		_, gotVals := storeOf(t, srv)
		assert.Equal(t, []float32{9, 9, 9, 9}, gotVals)
		require.NoError(t, c.Delete(ctx, "new"))
		assert.Equal(t, []string{"w"}, srv.Names())
		require.ErrorIs(t, c.Delete(ctx, "new"), flightx.ErrNotFound)
	})
}

// TestMutualTLS requires client certificates: a client without one, or with one of another
// authority, fails in the TLS handshake; one with a certificate of the server's authority gets
// through.
func TestMutualTLS(t *testing.T) {
	ctx := context.Background()
	ca := newCA(t, "flightx test CA")
	srv, addr := serve(t, flightx.WithClientCAs(ca.pool), // before WithTLS: the order does not matter
		flightx.WithTLS(&tls.Config{Certificates: []tls.Certificate{ca.leaf(t, "server", x509.ExtKeyUsageServerAuth)}}))
	require.NoError(t, srv.Put("w", core.MustFromSlice([]float32{1, 2}), nil))
	x := core.MustFromSlice([]float32{3})

	for name, cfg := range map[string]*tls.Config{
		"no client certificate": {RootCAs: ca.pool},
		"certificate of another authority": {RootCAs: ca.pool,
			Certificates: []tls.Certificate{newCA(t, "other").leaf(t, "client", x509.ExtKeyUsageClientAuth)}},
	} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, addr, flightx.WithTLS(cfg))
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			require.ErrorIs(t, c.Put(tctx, "x", x, nil), flightx.ErrTransport)
			_, _, err := c.Get(tctx, "w")
			require.ErrorIs(t, err, flightx.ErrTransport)
			assert.Equal(t, []string{"w"}, srv.Names())
		})
	}
	t.Run("client certificate", func(t *testing.T) {
		c := dial(t, addr, flightx.WithTLS(&tls.Config{RootCAs: ca.pool,
			Certificates: []tls.Certificate{ca.leaf(t, "client", x509.ExtKeyUsageClientAuth)}}))
		require.NoError(t, c.Put(ctx, "x", x, nil))
		got, _, err := c.Get(ctx, "x")
		require.NoError(t, err)
		assert.Equal(t, []float32{3}, elems[float32](t, got))
		got.Release()
	})
}

// TestTokenInClearText: Dial refuses to send a token over plain TCP off loopback.
func TestTokenInClearText(t *testing.T) {
	_, err := flightx.Dial("192.0.2.1:8815", flightx.WithToken(rwToken))
	require.ErrorIs(t, err, flightx.ErrInsecure)
	assert.Contains(t, err.Error(), "192.0.2.1:8815")
	for _, addr := range []string{"127.0.0.1:1", "[::1]:1", "localhost:1"} {
		c, err := flightx.Dial(addr, flightx.WithToken(rwToken))
		require.NoError(t, err, addr)
		c.Close()
	}
}

// TestHandshake: Flight's Handshake takes the token as payload, Bearer or Basic credentials
// (the password, as pyarrow's authenticate_basic_token sends it) and answers with the bearer
// header; a wrong token is Unauthenticated. A server behind Register checks tokens too.
func TestHandshake(t *testing.T) {
	ctx := context.Background()
	srv := flightx.NewServer(flightx.WithTokens(tokens))
	defer srv.Close()
	g := grpc.NewServer()
	srv.Register(g)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go g.Serve(lis)
	defer g.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	fc := flight.NewFlightServiceClient(conn)

	shake := func(ctx context.Context, payload string) (string, error) {
		s, err := fc.Handshake(ctx)
		require.NoError(t, err)
		require.NoError(t, s.Send(&flight.HandshakeRequest{Payload: []byte(payload)}))
		require.NoError(t, s.CloseSend())
		if _, err := s.Recv(); err != nil {
			return "", err
		}
		md, err := s.Header()
		require.NoError(t, err)
		return md.Get("authorization")[0], nil
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("anyone:"+roToken))
	for name, tc := range map[string]struct {
		ctx     context.Context
		payload string
	}{
		"payload": {ctx, roToken},
		"bearer":  {metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+roToken), ""},
		"basic":   {metadata.AppendToOutgoingContext(ctx, "authorization", basic), ""},
	} {
		got, err := shake(tc.ctx, tc.payload)
		require.NoError(t, err, name)
		assert.Equal(t, "Bearer "+roToken, got, name)
	}
	_, err = shake(ctx, "nope")
	assert.Equal(t, codes.Unauthenticated, status.Code(err))

	c := flightx.NewClient(conn)
	_, err = c.List(ctx)
	require.ErrorIs(t, err, flightx.ErrUnauthenticated)
	c = flightx.NewClient(conn, flightx.WithToken(roToken))
	_, err = c.List(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, c.Delete(ctx, "x"), flightx.ErrPermission)
}

func elems[T core.Element](t *testing.T, x *core.Tensor) []T {
	t.Helper()
	v, err := core.ReadOnlyElements[T](x)
	require.NoError(t, err)
	return v
}
