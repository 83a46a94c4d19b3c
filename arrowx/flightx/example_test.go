package flightx_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// A server on loopback serves a tensor; a client lists it, fetches it, and sends one back.
func Example() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := flightx.NewServer()
	defer srv.Close()
	go srv.Serve(lis)
	defer srv.Stop()
	_ = srv.Put("weights", core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3), map[string]string{"layer": "fc1"})

	c, err := flightx.Dial(lis.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()
	infos, _ := c.List(ctx)
	for _, in := range infos {
		fmt.Println(in.Name, in.DType, in.Shape, in.Meta)
	}
	w, meta, err := c.Get(ctx, "weights")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Release()
	vals, _ := core.ReadOnlyElements[float32](w)
	fmt.Println(w, vals, meta["layer"], w.ReadOnly())

	if err := c.Put(ctx, "grad", core.MustFromSlice([]float64{0.5, -0.5}), nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(srv.Names())
	// Output:
	// weights float32 [2 3] map[layer:fc1]
	// Tensor(float32, [2 3], cpu:0, read-only) [1 2 3 4 5 6] fc1 true
	// [grad weights]
}

// A server bounds what its DoPut streams hold together and how long one may stay silent; a Put
// that would pass the bound is refused with ErrBusy (try again later), and the memory comes
// back once a stream ends.
func ExampleWithMaxInFlight() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := flightx.NewServer(flightx.WithMaxInFlight(4<<20), flightx.WithIdleTimeout(10*time.Second))
	defer srv.Close()
	go srv.Serve(lis)
	defer srv.Stop()

	c, err := flightx.Dial(lis.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()
	big := core.MustNew(core.Float32, 4<<20) // 16 MiB: more than the server takes in at once
	err = c.Put(ctx, "big", big, nil)
	fmt.Println(errors.Is(err, flightx.ErrBusy))
	small := core.MustNew(core.Float32, 256<<10) // 1 MiB
	fmt.Println(c.Put(ctx, "small", small, nil), srv.Names(), srv.InFlight())
	// Output:
	// true
	// <nil> [small] 0
}

// A server for receivers built before flightx sent arrow.fixed_shape_tensor columns: the flat
// column of the earlier format, which every version reads.
func ExampleWithFlatColumn() {
	srv := flightx.NewServer(flightx.WithFlatColumn())
	defer srv.Close()
	x := core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	defer x.Release()
	fmt.Println(srv.Put("x", x, nil))
	// Output:
	// <nil>
}

// A list of tensors of their own shapes (boxes of a batch of images, token sequences) travels
// as one arrow.variable_shape_tensor column: PutTensors sends it, GetTensors fetches it, each
// tensor a view of the message it came in.
func ExampleClient_PutTensors() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := flightx.NewServer()
	defer srv.Close()
	go srv.Serve(lis)
	defer srv.Stop()

	c, err := flightx.Dial(lis.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()
	boxes := []*core.Tensor{
		core.MustFromSlice([]float32{0, 0, 4, 4, 1, 1, 2, 3}, 2, 4),
		core.MustFromSlice([]float32{5, 5, 9, 9}, 1, 4),
		core.MustNew(core.Float32, 0, 4), // an image without boxes
	}
	if err := c.PutTensors(ctx, "boxes", boxes, map[string]string{"batch": "7"}); err != nil {
		fmt.Println(err)
		return
	}
	infos, _ := c.List(ctx)
	for _, in := range infos {
		fmt.Println(in.Name, in.DType, in.Variable, in.Ndim, in.Shape, in.Elements)
	}
	got, meta, err := c.GetTensors(ctx, "boxes")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range got {
		vals, _ := core.ReadOnlyElements[float32](b)
		fmt.Println(b.Shape(), vals)
		b.Release()
	}
	fmt.Println(meta["batch"])
	// Output:
	// boxes float32 true 2 [3] 12
	// [2 4] [0 0 4 4 1 1 2 3]
	// [1 4] [5 5 9 9]
	// [0 4] []
	// 7
}

// A server stores a list of tensors of their own shapes; GetTensors gives views of them back.
func ExampleServer_GetTensors() {
	srv := flightx.NewServer()
	defer srv.Close()
	seqs := []*core.Tensor{core.MustFromSlice([]int64{101, 7592, 102}), core.MustFromSlice([]int64{101, 102})}
	if err := srv.PutTensors("tokens", seqs, nil); err != nil {
		fmt.Println(err)
		return
	}
	got, _, err := srv.GetTensors("tokens")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range got {
		vals, _ := core.ReadOnlyElements[int64](s)
		fmt.Println(s.Shape(), vals)
		s.Release()
	}
	_, _, err = srv.Get("tokens")
	fmt.Println(errors.Is(err, flightx.ErrMismatch))
	// Output:
	// [3] [101 7592 102]
	// [2] [101 102]
	// true
}

// ExampleServer_Panics: a server counts the handler panics it recovered from (each ended only
// its own call, with status Internal, and was logged); a count above 0 is a bug to report.
func ExampleServer_Panics() {
	srv := flightx.NewServer()
	defer srv.Close()
	fmt.Println(srv.Panics())
	// Output: 0
}
