package flightx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"

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

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// plainListCase is a list of tensors that a plain Arrow sender writes in several batches of an
// arrow.variable_shape_tensor column: the shapes of each batch's tensors.
type plainListCase struct {
	name    string
	dtype   core.DLDataType
	batches [][][]int64
}

func plainListCases() []plainListCase {
	var out []plainListCase
	for _, dt := range []core.DLDataType{core.Float32, core.Int64} {
		out = append(out,
			plainListCase{fmt.Sprintf("%s-rank1", dt), dt, [][][]int64{{{3}, {0}, {5}}, {{2}}, {{1}, {4}}}},
			plainListCase{fmt.Sprintf("%s-rank2", dt), dt, [][][]int64{{{2, 3}, {4, 0}}, {{1, 7}}, {{3, 3}, {0, 2}, {2, 2}}}},
		)
	}
	return out
}

// plainList makes the tensors of c (seeded) and the record batches that hold them, one
// arrow.variable_shape_tensor column "boxes" made by arrowx, with the schema metadata meta and
// no dlpack.* key. The test's end releases both.
func plainList(t *testing.T, c plainListCase, seed byte, meta map[string]string) ([]*core.Tensor, []arrow.RecordBatch) {
	t.Helper()
	var ts []*core.Tensor
	var recs []arrow.RecordBatch
	var md *arrow.Metadata
	if meta != nil {
		m := arrow.MetadataFrom(meta)
		md = &m
	}
	for _, shapes := range c.batches {
		var part []*core.Tensor
		for _, sh := range shapes {
			x := filled(t, c.dtype, seed+byte(len(ts)*13), sh...)
			ts, part = append(ts, x), append(part, x)
		}
		arr, err := arrowx.NewVariableShapeTensorArray(part, nil, nil)
		require.NoError(t, err)
		s := arrow.NewSchema([]arrow.Field{{Name: "boxes", Type: arr.DataType(), Nullable: true}}, md)
		recs = append(recs, array.NewRecordBatch(s, []arrow.Array{arr}, int64(arr.Len())))
		arr.Release()
	}
	t.Cleanup(func() {
		releaseAll(ts)
		for _, r := range recs {
			r.Release()
		}
	})
	return ts, recs
}

// plainPut sends batches to the server at addr as arrow-go's own Flight client does (a record
// writer over a DoPut stream, the descriptor path naming the flight) and returns the server's
// verdict: nil, or the status it ended the call with.
func plainPut(t *testing.T, addr, name string, batches []arrow.RecordBatch) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := flight.NewFlightServiceClient(conn).DoPut(ctx)
	require.NoError(t, err)
	w := flight.NewRecordWriter(stream, ipc.WithSchema(batches[0].Schema()), ipc.WithAllocator(memory.NewGoAllocator()))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}})
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			break // the server ended the call: its status comes from Recv
		}
	}
	w.Close()
	stream.CloseSend()
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestPlainVariableShape: a plain Arrow stream (no dlpack.* metadata) of an
// arrow.variable_shape_tensor column, written in several batches with arrow-go's
// flight.NewRecordWriter (float32 and int64, ranks 1 and 2, tensors with a zero dimension), is
// read back with Client.GetTensors whether a plain server (arrow-go's own DoGet) serves it or a
// flightx server stored it from arrow-go's plain DoPut: every row a tensor, in order, of the
// column's dtype and shapes, read-only views of the messages (not copies), with the schema's
// metadata; the tensors stay valid after collections when they are the only holders; List
// describes the stored list with its count and elements learnt at the stream's end.
func TestPlainVariableShape(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	srv, addr := serve(t)
	c := dial(t, addr)
	meta := map[string]string{"source": "arrow-go"}
	for i, lc := range plainListCases() {
		t.Run(lc.name, func(t *testing.T) {
			want, recs := plainList(t, lc, byte(i), meta)
			check := func(what string, got []*core.Tensor, gotMeta map[string]string) {
				t.Helper()
				sameList(t, want, got, what)
				assert.Equal(t, meta, gotMeta, what)
				for k, g := range got {
					assert.True(t, g.ReadOnly(), "%s tensor %d", what, k)
					if g.Len() > 0 {
						assert.Zero(t, g.Flags()&core.FlagIsCopied, "%s tensor %d is a view of its message", what, k)
					}
				}
			}

			got, gotMeta, err := dial(t, startPlain(t, recs...)).GetTensors(ctx, "anything")
			require.NoError(t, err)
			check("plain server", got, gotMeta)
			// the list is the only holder of its messages now
			for range 3 {
				runtime.GC()
			}
			_ = make([]byte, 1<<20) // garbage where freed memory would be reused
			runtime.GC()
			sameList(t, want, got, "plain server, after collections")
			releaseAll(got)

			require.NoError(t, plainPut(t, addr, lc.name, recs))
			stored, storedMeta, err := srv.GetTensors(lc.name)
			require.NoError(t, err)
			sameList(t, want, stored, "stored")
			assert.Equal(t, meta, storedMeta)
			releaseAll(stored)
			got, gotMeta, err = c.GetTensors(ctx, lc.name)
			require.NoError(t, err)
			check("stored from a plain DoPut", got, gotMeta)
			releaseAll(got)

			var elems int64
			for _, x := range want {
				elems += x.Len()
			}
			infos, err := c.List(ctx)
			require.NoError(t, err)
			var found bool
			for _, info := range infos {
				if info.Name == lc.name {
					found = true
					assert.Equal(t, flightx.Info{Name: lc.name, DType: lc.dtype, Shape: []int64{int64(len(want))}, Meta: meta,
						Variable: true, Ndim: len(lc.batches[0][0]), Elements: elems}, info)
				}
			}
			assert.True(t, found, "List lists %q", lc.name)

			// a plain list is no single tensor
			_, _, err = c.Get(ctx, lc.name)
			require.ErrorIs(t, err, flightx.ErrMismatch)
			_, _, err = dial(t, startPlain(t, recs...)).Get(ctx, "anything")
			require.ErrorIs(t, err, flightx.ErrMismatch)
			assert.Contains(t, err.Error(), "plain list")
		})
	}
	assert.Zero(t, srv.InFlight())
}

// nullBatch makes a batch of float32 tensors of one dimension, of the given lengths, where row
// nullRow is null in the way what says: "tensor" (the row), "element" (one value of its data).
func nullBatch(t *testing.T, lens []int, nullRow int, what string) arrow.RecordBatch {
	t.Helper()
	vt, err := arrowx.NewVariableShapeTensorType(arrow.PrimitiveTypes.Float32, 1, nil, nil, nil)
	require.NoError(t, err)
	sb := array.NewStructBuilder(memory.NewGoAllocator(), vt.Storage.(*arrow.StructType))
	defer sb.Release()
	lb := sb.FieldBuilder(0).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	fb := sb.FieldBuilder(1).(*array.FixedSizeListBuilder)
	db := fb.ValueBuilder().(*array.Int32Builder)
	for i, n := range lens {
		if i == nullRow && what == "tensor" {
			sb.AppendNull()
			continue
		}
		sb.Append(true)
		lb.Append(true)
		for k := range n {
			if i == nullRow && what == "element" && k == 0 {
				vb.AppendNull()
			} else {
				vb.Append(float32(k))
			}
		}
		fb.Append(true)
		db.Append(int32(n))
	}
	storage := sb.NewArray()
	defer storage.Release()
	ext := array.NewExtensionArrayWithStorage(vt, storage)
	defer ext.Release()
	s := arrow.NewSchema([]arrow.Field{{Name: "boxes", Type: vt, Nullable: true}}, nil)
	rec := array.NewRecordBatch(s, []arrow.Array{ext}, int64(ext.Len()))
	t.Cleanup(rec.Release)
	return rec
}

// TestPlainVariableShapeNulls: a plain list with a null row, a null tensor or a tensor with a
// null element, in its second batch, is refused by Client.GetTensors with ErrProtocol and
// arrowx.ErrNulls naming the tensor's index in the whole list; the server refuses such a DoPut
// (InvalidArgument, naming it too) and stores nothing.
func TestPlainVariableShapeNulls(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	srv, addr := serve(t)
	first := nullBatch(t, []int{2, 3}, -1, "")
	for _, what := range []string{"tensor", "element"} {
		t.Run(what, func(t *testing.T) {
			bad := nullBatch(t, []int{1, 4, 2}, 1, what)
			msg := map[string]string{"tensor": "tensor 3 of the list (row 1 of its batch) is null",
				"element": "tensor 3 of the list (row 1 of its batch) has a null element"}[what]

			_, _, err := dial(t, startPlain(t, first, bad)).GetTensors(ctx, "anything")
			require.ErrorIs(t, err, flightx.ErrProtocol)
			require.ErrorIs(t, err, arrowx.ErrNulls)
			assert.Contains(t, err.Error(), msg)

			err = plainPut(t, addr, "nulls", []arrow.RecordBatch{first, bad})
			require.Error(t, err)
			assert.Equal(t, codes.InvalidArgument, status.Code(err))
			assert.Contains(t, err.Error(), msg)
			assert.NotContains(t, srv.Names(), "nulls")
		})
	}
	assert.Zero(t, srv.InFlight())
}

// TestPlainVariableShapeLimits: a plain list learns its size as it comes, and is refused with
// ErrTooLarge once its tensors (elements and 64 bytes each) pass WithMaxBytes, at the tensor
// that passes it: by a client (a plain server serving it), and by a server storing a plain
// DoPut (ResourceExhausted), which stores nothing; the same list within a limit that fits it
// is read. A server whose WithMaxInFlight is below one batch refuses the DoPut with ErrBusy's
// status and holds nothing afterwards.
func TestPlainVariableShapeLimits(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	// four batches of one float32 tensor of 1000 elements: 4064 bytes each counted, 16256 in all;
	// with a limit of 10000 the third tensor (index 2) passes it
	lc := plainListCase{"big", core.Float32, [][][]int64{{{1000}}, {{1000}}, {{1000}}, {{1000}}}}
	want, recs := plainList(t, lc, 3, nil)

	_, _, err := dial(t, startPlain(t, recs...), flightx.WithMaxBytes(10000)).GetTensors(ctx, "anything")
	require.ErrorIs(t, err, flightx.ErrTooLarge)
	assert.Contains(t, err.Error(), "(tensor 2 of the list)")
	got, _, err := dial(t, startPlain(t, recs...), flightx.WithMaxBytes(16256)).GetTensors(ctx, "anything")
	require.NoError(t, err)
	sameList(t, want, got, "within the limit")
	releaseAll(got)
	_, _, err = dial(t, startPlain(t, recs...), flightx.WithMaxBytes(16255)).GetTensors(ctx, "anything")
	require.ErrorIs(t, err, flightx.ErrTooLarge, "one byte short")

	srv, addr := serve(t, flightx.WithMaxBytes(10000))
	err = plainPut(t, addr, "big", recs)
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, err.Error(), "(tensor 2 of the list)")
	assert.Empty(t, srv.Names())
	assert.Zero(t, srv.InFlight())

	busy, busyAddr := serve(t, flightx.WithMaxInFlight(1000))
	err = plainPut(t, busyAddr, "big", recs)
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, err.Error(), "server memory in flight")
	assert.Empty(t, busy.Names())
	assert.Zero(t, busy.InFlight())
}
