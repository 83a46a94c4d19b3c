package flightx_test

import (
	"context"
	"net"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// plainServer is a Flight server that knows nothing of flightx: arrow-go's own DoGet, writing
// the batches it was given with arrow-go's record writer, no dlpack.* metadata.
type plainServer struct {
	flight.BaseFlightServer
	batches []arrow.RecordBatch
}

func (p *plainServer) DoGet(_ *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	// a client that stops early (WithMaxBytes) leaves this handler writing after the test has
	// let go of the batches: hold them until the handler ends
	for _, b := range p.batches {
		b.Retain()
	}
	defer func() {
		for _, b := range p.batches {
			b.Release()
		}
	}()
	w := flight.NewRecordWriter(stream, ipc.WithSchema(p.batches[0].Schema()))
	defer w.Close()
	for _, b := range p.batches {
		if err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Close()
}

func startPlain(t *testing.T, batches ...arrow.RecordBatch) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g := grpc.NewServer()
	flight.RegisterFlightServiceServer(g, &plainServer{batches: batches})
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// tensorBatches makes the batches a plain sender would write of x ([N, S...] float32): a
// fixed_shape_tensor column of rows S, or (rowsOnly) a plain float32 column, cut every per rows.
func tensorBatches(t *testing.T, x *core.Tensor, per int64, primitive bool) []arrow.RecordBatch {
	t.Helper()
	var out []arrow.RecordBatch
	for r := int64(0); r < x.Shape()[0]; r += per {
		part, err := x.Slice(0, r, min(r+per, x.Shape()[0]), 1)
		require.NoError(t, err)
		var a arrow.Array
		if primitive {
			a, err = arrowx.ToArray(part)
		} else {
			a, err = arrowx.ToFixedShapeTensor(part)
		}
		require.NoError(t, err)
		s := arrow.NewSchema([]arrow.Field{{Name: "embedding", Type: a.DataType()}}, nil)
		out = append(out, array.NewRecordBatch(s, []arrow.Array{a}, int64(a.Len())))
		a.Release()
		part.Release()
	}
	t.Cleanup(func() {
		for _, b := range out {
			b.Release()
		}
	})
	return out
}

// TestPlainSender: a stream without dlpack.* metadata, from arrow-go's own Flight writer on a
// real server on loopback, is read as a tensor of [rows, row shape...] once it ends: Get (one
// batch a view, several assembled), GetInto, Stream; a DoPut from arrow-go's plain client is
// stored the same way.
func TestPlainSender(t *testing.T) {
	noLeaks(t)
	vals := make([]float32, 40*3*4)
	for i := range vals {
		vals[i] = float32(i)
	}
	x := core.MustFromSlice(vals, 40, 3, 4)
	flat := core.MustFromSlice(vals, int64(len(vals)))
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		batches []arrow.RecordBatch
		shape   []int64
	}{
		{"fixed_shape_tensor, one batch", tensorBatches(t, x, 40, false), []int64{40, 3, 4}},
		{"fixed_shape_tensor, batches of 7 rows", tensorBatches(t, x, 7, false), []int64{40, 3, 4}},
		{"float32 column, batches of 100", tensorBatches(t, flat, 100, true), []int64{480}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := dial(t, startPlain(t, c.batches...))
			got, meta, err := cl.Get(ctx, "anything")
			require.NoError(t, err)
			assert.Equal(t, c.shape, got.Shape())
			assert.Empty(t, meta)
			gv, err := core.ReadOnlyElements[float32](got)
			require.NoError(t, err)
			assert.Equal(t, vals, gv)
			got.Release()

			dst := core.MustNew(core.Float32, c.shape...)
			_, err = cl.GetInto(ctx, "anything", dst)
			require.NoError(t, err)
			dv, _ := dst.Float32s()
			assert.Equal(t, vals, dv)
			small := core.MustNew(core.Float32, 10)
			_, err = cl.GetInto(ctx, "anything", small)
			require.ErrorIs(t, err, flightx.ErrMismatch)

			var seen int64
			err = cl.Stream(ctx, "anything", func(info flightx.Info, chunk *core.Tensor, off int64) error {
				assert.True(t, info.Unsized())
				assert.Equal(t, seen, off)
				seen += chunk.Len()
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, int64(len(vals)), seen)

			_, _, err = dial(t, startPlain(t, c.batches...), flightx.WithMaxBytes(100)).Get(ctx, "anything")
			require.ErrorIs(t, err, flightx.ErrTooLarge)
		})
	}

	t.Run("DoPut from arrow-go's client", func(t *testing.T) {
		srv, addr := serve(t)
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer conn.Close()
		stream, err := flight.NewFlightServiceClient(conn).DoPut(ctx)
		require.NoError(t, err)
		batches := tensorBatches(t, x, 9, false)
		w := flight.NewRecordWriter(stream, ipc.WithSchema(batches[0].Schema()), ipc.WithAllocator(memory.NewGoAllocator()))
		w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"emb"}})
		for _, b := range batches {
			require.NoError(t, w.Write(b))
		}
		require.NoError(t, w.Close())
		require.NoError(t, stream.CloseSend())
		_, err = stream.Recv()
		require.NoError(t, err)
		y, _, err := srv.Get("emb")
		require.NoError(t, err)
		defer y.Release()
		assert.Equal(t, []int64{40, 3, 4}, y.Shape())
		yv, err := core.ReadOnlyElements[float32](y)
		require.NoError(t, err)
		assert.Equal(t, vals, yv)
	})
}

// TestPlainSchemaRefusals: plain schemas (no dlpack.* metadata) whose column cannot be a tensor
// are refused with ErrProtocol, naming the column.
func TestPlainSchemaRefusals(t *testing.T) {
	perm, err := arrowx.NewFixedShapeTensorType(arrow.PrimitiveTypes.Float32, []int64{2, 3}, nil, []int{1, 0})
	require.NoError(t, err)
	boolTensor, err := arrowx.NewFixedShapeTensorType(arrow.FixedWidthTypes.Boolean, []int64{2}, nil, nil)
	require.NoError(t, err)
	f := func(typ arrow.DataType) arrow.Field { return arrow.Field{Name: "data", Type: typ} }
	for _, c := range []struct {
		name   string
		fields []arrow.Field
		want   string
	}{
		{"two columns", []arrow.Field{f(arrow.PrimitiveTypes.Int8), {Name: "b", Type: arrow.PrimitiveTypes.Int8}}, "2 columns"},
		{"a permutation", []arrow.Field{f(perm)}, "permutation"},
		{"bit-packed booleans", []arrow.Field{f(arrow.FixedWidthTypes.Boolean)}, "bit-packed"},
		{"a tensor of booleans", []arrow.Field{f(boolTensor)}, "bit-packed"},
		{"strings", []arrow.Field{f(arrow.BinaryTypes.String)}, "utf8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := flightx.DecodeSchema(arrow.NewSchema(c.fields, nil))
			require.ErrorIs(t, err, flightx.ErrProtocol)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	info, err := flightx.DecodeSchema(arrow.NewSchema([]arrow.Field{f(arrow.PrimitiveTypes.Float64)}, nil))
	require.NoError(t, err)
	assert.True(t, info.Unsized())
	assert.Equal(t, []int64{-1}, info.Shape)
	assert.Equal(t, core.Float64, info.DType)
}
