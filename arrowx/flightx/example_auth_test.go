package flightx_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// A server that speaks TLS only and admits two tokens, one that may write and one that may
// only read: the writer puts and deletes, the reader fetches and is refused a put, a caller
// without a token is refused everything.
func ExampleWithTokens() {
	cert, certPEM, err := flightx.SelfSigned([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		fmt.Println(err)
		return
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := flightx.NewServer(
		flightx.WithTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		flightx.WithTokens(map[string]flightx.Role{"s3cret-w": flightx.ReadWrite, "s3cret-r": flightx.ReadOnly}))
	defer srv.Close()
	go srv.Serve(lis)
	defer srv.Stop()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM) // what the server's operator hands its clients
	clientTLS := flightx.WithTLS(&tls.Config{RootCAs: roots})
	addr := lis.Addr().String()
	ctx := context.Background()

	writer, _ := flightx.Dial(addr, clientTLS, flightx.WithToken("s3cret-w"))
	defer writer.Close()
	fmt.Println("writer put:", writer.Put(ctx, "x", core.MustFromSlice([]float32{1, 2, 3}), nil))
	fmt.Println("writer delete:", writer.Delete(ctx, "gone"))

	reader, _ := flightx.Dial(addr, clientTLS, flightx.WithToken("s3cret-r"))
	defer reader.Close()
	x, _, err := reader.Get(ctx, "x")
	if err != nil {
		fmt.Println(err)
		return
	}
	vals, _ := core.ReadOnlyElements[float32](x)
	fmt.Println("reader get:", vals)
	x.Release()
	err = reader.Put(ctx, "x", core.MustFromSlice([]float32{0}), nil)
	fmt.Println("reader put refused:", errors.Is(err, flightx.ErrPermission))

	stranger, _ := flightx.Dial(addr, clientTLS)
	defer stranger.Close()
	_, err = stranger.List(ctx)
	fmt.Println("stranger list refused:", errors.Is(err, flightx.ErrUnauthenticated))
	fmt.Println(srv.Names())
	// Output:
	// writer put: <nil>
	// writer delete: flightx: the server has no such tensor: rpc error: code = NotFound desc = flightx: no tensor "gone" (delete "gone")
	// reader get: [1 2 3]
	// reader put refused: true
	// stranger list refused: true
	// [x]
}
