package flightx_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/dlpack-go/dlpack/core"
)

// Many clients at once: concClients clients, each on a connection of its own, move a tensor of
// concBytes each at the same time (256 MiB an op in all), beside as many raw gRPC connections
// moving the same bytes (BenchmarkRawGRPC256MiB's and BenchmarkRawGRPCPut64MiB's peers).
const (
	concClients = 8
	concBytes   = 32 << 20
)

// together runs f(0) … f(n-1) each in a goroutine of its own and returns the first error.
func together(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
	}
	return nil
}

// benchTogether times together(concClients, f) (concClients*concBytes an op) after warm
// untimed rounds, the steady state: a Get's blocks (1) or a Put server's, stored and arriving
// (2), mapped in.
func benchTogether(b *testing.B, warm int, f func(i int) error) {
	b.SetBytes(concClients * concBytes)
	for range warm {
		if err := together(concClients, f); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := together(concClients, f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConcurrentGet: concClients clients fetch a 32 MiB float32 tensor from one server at
// once, with Client.Get (a new tensor each, released) and Client.GetInto (a preallocated one
// each), beside raw gRPC streams of 4 MiB messages copied into preallocated buffers.
func BenchmarkConcurrentGet(b *testing.B) {
	x := core.MustNew(core.Float32, concBytes/4)
	ctx := context.Background()
	b.Run("Get", func(b *testing.B) {
		cs := flightClients(b, "x", x, concClients)
		benchTogether(b, 1, func(i int) error {
			t, _, err := cs[i].Get(ctx, "x")
			if err == nil {
				t.Release()
			}
			return err
		})
	})
	b.Run("GetInto", func(b *testing.B) {
		cs := flightClients(b, "x", x, concClients)
		dsts := make([]*core.Tensor, concClients)
		for i := range dsts {
			dsts[i] = core.MustNew(core.Float32, concBytes/4)
		}
		benchTogether(b, 1, func(i int) error {
			_, err := cs[i].GetInto(ctx, "x", dsts[i])
			return err
		})
	})
	b.Run("raw-grpc", func(b *testing.B) {
		src, _ := x.Bytes()
		addr := rawListen(b, src, 0)
		conns, dsts := make([]*grpc.ClientConn, concClients), make([][]byte, concClients)
		for i := range conns {
			conns[i], dsts[i] = rawDial(b, addr), make([]byte, concBytes)
		}
		benchTogether(b, 1, func(i int) error { return rawGRPCGet(ctx, conns[i], dsts[i]) })
	})
}

// BenchmarkConcurrentPut: concClients clients put a 32 MiB float32 tensor to one server at once
// (each its own name, replacing its last), in batches of 1 MiB, beside raw gRPC client streams
// of 1 MiB messages, each copied into a buffer of its own on the server.
func BenchmarkConcurrentPut(b *testing.B) {
	x := core.MustNew(core.Float32, concBytes/4)
	ctx := context.Background()
	b.Run("Put", func(b *testing.B) {
		cs := flightClients(b, "unused", core.MustNew(core.Float32, 1), concClients)
		benchTogether(b, 2, func(i int) error { return cs[i].Put(ctx, fmt.Sprintf("x%d", i), x, nil) })
	})
	b.Run("raw-grpc", func(b *testing.B) {
		src, _ := x.Bytes()
		addr := rawListen(b, src, concClients)
		conns := make([]*grpc.ClientConn, concClients)
		for i := range conns {
			conns[i] = rawDial(b, addr)
		}
		benchTogether(b, 2, func(i int) error { return rawGRPCPut(ctx, conns[i], src) })
	})
}
