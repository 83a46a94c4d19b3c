package flightx_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
)

// batch is one record of a single int32 column with the given schema metadata.
func batch(mem memory.Allocator, md map[string]string, vals []int32, nulls []bool) arrow.RecordBatch {
	m := arrow.MetadataFrom(md)
	s := arrow.NewSchema([]arrow.Field{{Name: "data", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, &m)
	b := array.NewInt32Builder(mem)
	defer b.Release()
	b.AppendValues(vals, nulls)
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(s, []arrow.Array{col}, int64(len(vals)))
}

// TestMalformedPuts sends hand-made streams to a real server: each is refused with a clear
// error, nothing is stored, and nothing leaks.
func TestMalformedPuts(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem))
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	fc := flight.NewFlightServiceClient(conn)
	ok := map[string]string{flightx.KeyDType: "int32", flightx.KeyShape: "2,2", flightx.KeyOrder: "C"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range ok {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name  string
		md    map[string]string
		vals  []int32
		nulls []bool
		want  string
	}{
		{"no dtype", with(flightx.KeyDType, ""), []int32{1, 2, 3, 4}, nil, "no dlpack.dtype"},
		{"unknown dtype", with(flightx.KeyDType, "float7"), []int32{1, 2, 3, 4}, nil, "no DLPack dtype"},
		{"dtype and column disagree", with(flightx.KeyDType, "float32"), []int32{1, 2, 3, 4}, nil, "column of type int32"},
		{"bad shape", with(flightx.KeyShape, "2,-2"), []int32{1, 2, 3, 4}, nil, "non-negative"},
		{"huge shape", with(flightx.KeyShape, "4294967296,4294967296"), []int32{1, 2, 3, 4}, nil, "overflows"},
		{"too few elements", ok, []int32{1, 2, 3}, nil, "after 3 of 4"},
		{"too many elements", ok, []int32{1, 2, 3, 4, 5}, nil, "5 elements when 4 remain"},
		{"nulls", ok, []int32{1, 2, 3, 4}, []bool{true, false, true, true}, "nulls"},
		{"order", with(flightx.KeyOrder, "F"), []int32{1, 2, 3, 4}, nil, "dlpack.order"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			stream, err := fc.DoPut(ctx)
			require.NoError(t, err)
			w := flight.NewRecordWriter(stream, ipcSchema(batch(mem, c.md, nil, nil)), ipc.WithAllocator(mem))
			w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"bad"}})
			rec := batch(mem, c.md, c.vals, c.nulls)
			_ = w.Write(rec) // may fail once the server has refused
			rec.Release()
			_ = w.Close()
			_ = stream.CloseSend()
			_, err = stream.Recv()
			require.Error(t, err)
			assert.Equal(t, codes.InvalidArgument, status.Code(err), err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	assert.Empty(t, srv.Names())

	// garbage where the IPC header belongs
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := fc.DoPut(ctx)
	require.NoError(t, err)
	require.NoError(t, stream.Send(&flight.FlightData{DataHeader: []byte("not a flatbuffer at all"),
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"bad"}}}))
	_ = stream.CloseSend()
	_, err = stream.Recv()
	require.Error(t, err)
	assert.Equal(t, codes.InvalidArgument, status.Code(err), err)
	assert.Empty(t, srv.Names())
}

// rogue is a Flight server that answers DoGet with a hand-made stream.
type rogue struct {
	flight.BaseFlightServer
	send func(flight.FlightService_DoGetServer) error
}

func (r *rogue) DoGet(_ *flight.Ticket, s flight.FlightService_DoGetServer) error { return r.send(s) }

// TestMalformedGets: a server that sends a malformed stream gets a clear ErrProtocol from Get.
func TestMalformedGets(t *testing.T) {
	mem := noLeaks(t)
	ok := map[string]string{flightx.KeyDType: "int32", flightx.KeyShape: "4", flightx.KeyOrder: "C"}
	cases := []struct {
		name string
		send func(flight.FlightService_DoGetServer) error
	}{
		{"garbage header", func(s flight.FlightService_DoGetServer) error {
			return s.Send(&flight.FlightData{DataHeader: []byte{1, 2, 3, 4, 5, 6, 7, 8}})
		}},
		{"short stream", func(s flight.FlightService_DoGetServer) error {
			rec := batch(mem, ok, []int32{1, 2}, nil)
			defer rec.Release()
			w := flight.NewRecordWriter(s, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
			defer w.Close()
			return w.Write(rec)
		}},
		// without metadata the stream is a plain Arrow one (TestPlainSender), whose column must
		// then carry a DLPack dtype: strings do not
		{"no metadata, a string column", func(s flight.FlightService_DoGetServer) error {
			b := array.NewStringBuilder(mem)
			b.AppendValues([]string{"a", "b"}, nil)
			col := b.NewArray()
			b.Release()
			defer col.Release()
			sc := arrow.NewSchema([]arrow.Field{{Name: "data", Type: arrow.BinaryTypes.String}}, nil)
			rec := array.NewRecordBatch(sc, []arrow.Array{col}, 2)
			defer rec.Release()
			w := flight.NewRecordWriter(s, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
			defer w.Close()
			return w.Write(rec)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			g := grpc.NewServer()
			flight.RegisterFlightServiceServer(g, &rogue{send: c.send})
			done := make(chan struct{})
			go func() { _ = g.Serve(lis); close(done) }()
			defer func() { g.Stop(); <-done }()
			cl, err := flightx.Dial(lis.Addr().String(), flightx.WithAllocator(mem))
			require.NoError(t, err)
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _, err = cl.Get(ctx, "x")
			require.ErrorIs(t, err, flightx.ErrProtocol)
		})
	}
}

// ipcSchema is the writer option for a record's schema; the record itself is released.
func ipcSchema(rec arrow.RecordBatch) ipc.Option {
	defer rec.Release()
	return ipc.WithSchema(rec.Schema())
}
