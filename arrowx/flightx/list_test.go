package flightx_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// listCase is a list of tensors of one dtype and rank, of shapes of their own.
type listCase struct {
	name   string
	dtype  core.DLDataType
	shapes [][]int64
}

func listCases() []listCase {
	int8x4 := core.DLDataType{Code: core.CodeInt, Bits: 8, Lanes: 4}
	var out []listCase
	for _, dt := range []core.DLDataType{core.Float32, core.Float64, core.Int8, core.Uint16, core.Bool, core.BFloat16, core.Complex64, int8x4} {
		for _, shapes := range [][][]int64{
			{{}, {}, {}},                      // rank 0
			{{3}, {0}, {1}, {5}},              // rank 1, an empty tensor among them
			{{2, 3}, {1, 7}, {4, 0}, {3, 3}},  // rank 2, a zero dimension
			{{2, 1, 3}, {1, 4, 2}, {2, 2, 2}}, // rank 3
			{{6}},                             // one tensor
		} {
			out = append(out, listCase{fmt.Sprintf("%s-rank%d-%d", dt, len(shapes[0]), len(shapes)), dt, shapes})
		}
	}
	return out
}

func (c listCase) tensors(t *testing.T, seed byte) []*core.Tensor {
	t.Helper()
	ts := make([]*core.Tensor, len(c.shapes))
	for i, sh := range c.shapes {
		ts[i] = filled(t, c.dtype, seed+byte(i*13), sh...)
	}
	return ts
}

func releaseAll(ts []*core.Tensor) {
	for _, t := range ts {
		t.Release()
	}
}

// sameList asserts that got holds the tensors of want, in order: dtype, shape and bytes.
func sameList(t *testing.T, want, got []*core.Tensor, name string) {
	t.Helper()
	require.Len(t, got, len(want), name)
	for i := range want {
		assert.Equal(t, want[i].DType(), got[i].DType(), "%s tensor %d", name, i)
		assert.Equal(t, want[i].Shape(), got[i].Shape(), "%s tensor %d", name, i)
		assert.Equal(t, bytesOf(t, want[i]), bytesOf(t, got[i]), "%s tensor %d", name, i)
	}
}

// TestPutGetTensors: lists of several dtypes (carried as Arrow primitives, complex pairs and
// lanes), ranks 0 to 3, with empty tensors and zero dimensions, go both ways (a client's
// PutTensors and a server's PutTensors, a client's GetTensors and a server's), in many batches
// and in one, with their metadata; List describes each as a variable-shape flight.
func TestPutGetTensors(t *testing.T) {
	mem := noLeaks(t)
	for _, chunk := range []int{16, 1 << 20} {
		t.Run(fmt.Sprintf("chunk%d", chunk), func(t *testing.T) {
			srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(chunk))
			c := dial(t, addr, flightx.WithAllocator(mem), flightx.WithChunkBytes(chunk))
			ctx := context.Background()
			want := map[string]flightx.Info{}
			for i, lc := range listCases() {
				in := lc.tensors(t, byte(i))
				meta := map[string]string{"source": lc.name}
				// client to server, server to client
				require.NoError(t, c.PutTensors(ctx, lc.name, in, meta), lc.name)
				stored, storedMeta, err := srv.GetTensors(lc.name)
				require.NoError(t, err, lc.name)
				sameList(t, in, stored, lc.name+" stored")
				assert.Equal(t, meta, storedMeta)
				releaseAll(stored)
				got, gotMeta, err := c.GetTensors(ctx, lc.name)
				require.NoError(t, err, lc.name)
				sameList(t, in, got, lc.name)
				assert.Equal(t, meta, gotMeta, lc.name)
				for _, g := range got {
					assert.True(t, g.ReadOnly(), lc.name)
				}
				releaseAll(got)
				// stored by the server itself
				again := lc.name + "/srv"
				require.NoError(t, srv.PutTensors(again, in, map[string]string{"source": again}))
				got, _, err = c.GetTensors(ctx, again)
				require.NoError(t, err, again)
				sameList(t, in, got, again)
				releaseAll(got)
				var elems int64
				for _, x := range in {
					elems += x.Len()
				}
				for _, n := range []string{lc.name, again} {
					want[n] = flightx.Info{Name: n, DType: lc.dtype, Shape: []int64{int64(len(in))}, Meta: map[string]string{"source": n},
						Variable: true, Ndim: len(lc.shapes[0]), Elements: elems}
				}
				releaseAll(in)
			}

			// the empty list: float32 of one dimension, no tensors
			require.NoError(t, c.PutTensors(ctx, "none", nil, nil))
			got, meta, err := c.GetTensors(ctx, "none")
			require.NoError(t, err)
			assert.Empty(t, got)
			assert.NotNil(t, got)
			assert.Empty(t, meta)
			want["none"] = flightx.Info{Name: "none", DType: core.Float32, Shape: []int64{0}, Meta: map[string]string{}, Variable: true, Ndim: 1}

			infos, err := c.List(ctx)
			require.NoError(t, err)
			require.Len(t, infos, len(want))
			for _, in := range infos {
				assert.Equal(t, want[in.Name], in, in.Name)
				assert.Equal(t, want[in.Name].Elements*int64(in.DType.Size()), in.Bytes(), in.Name)
			}
		})
	}
}

// TestGetTensorsAreViews: the tensors GetTensors returns are read-only views of the bodies of
// the messages gRPC received (seen by a stream interceptor), not copies, and they stay valid,
// as the only holders of those buffers, after the client's reader and batches are released and
// collections run; released, they give the memory back (noLeaks).
func TestGetTensorsAreViews(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(256))
	want := []*core.Tensor{filled(t, core.Float32, 1, 8, 3), filled(t, core.Float32, 2, 1, 5), filled(t, core.Float32, 3, 0, 2),
		filled(t, core.Float32, 4, 40, 2), filled(t, core.Float32, 5, 2, 2)}
	defer releaseAll(want)
	require.NoError(t, srv.PutTensors("boxes", want, nil))
	rec := &recorder{}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStreamInterceptor(rec.intercept))
	require.NoError(t, err)
	defer conn.Close()
	c := flightx.NewClient(conn, flightx.WithAllocator(mem))
	got, _, err := c.GetTensors(context.Background(), "boxes")
	require.NoError(t, err)
	defer releaseAll(got)
	require.Len(t, rec.bodies, 3, "batches of 96+20, 320 (alone: over the chunk), 16 bytes")
	within := func(p unsafe.Pointer, n int64) bool {
		for _, b := range rec.bodies {
			lo := uintptr(unsafe.Pointer(&b[0]))
			if uintptr(p) >= lo && uintptr(p)+uintptr(n) <= lo+uintptr(len(b)) {
				return true
			}
		}
		return false
	}
	for i, g := range got {
		assert.True(t, g.ReadOnly(), "tensor %d", i)
		if g.Len() == 0 {
			continue
		}
		assert.True(t, within(g.Data(), g.NumBytes()), "tensor %d lies in a received message body", i)
		assert.True(t, g.Foreign(), "tensor %d holds the received buffer", i)
		assert.Zero(t, g.Flags()&core.FlagIsCopied, "tensor %d", i)
	}
	// the tensors are the only holders now: collect, churn the heap, and read them again
	rec.bodies = nil
	srv.Delete("boxes")
	for range 5 {
		runtime.GC()
		junk := make([][]byte, 64)
		for k := range junk {
			junk[k] = make([]byte, 4096)
			for j := range junk[k] {
				junk[k][j] = 0xAB
			}
		}
		runtime.KeepAlive(junk)
	}
	sameList(t, want, got, "after the batches went and collections ran")
}

// TestTensorsRefused: a list that mixes dtypes or numbers of dimensions is refused with
// ErrMismatch by both PutTensors, before anything is sent or stored; a nil tensor with
// core.ErrNil; Get of a list and GetTensors of one tensor with ErrMismatch.
func TestTensorsRefused(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem))
	c := dial(t, addr, flightx.WithAllocator(mem))
	ctx := context.Background()
	f32 := func(shape ...int64) *core.Tensor { return filled(t, core.Float32, 1, shape...) }
	for _, bad := range []struct {
		name string
		ts   []*core.Tensor
		want error
	}{
		{"dtypes", []*core.Tensor{f32(2, 2), filled(t, core.Float64, 1, 2, 2)}, flightx.ErrMismatch},
		{"ndims", []*core.Tensor{f32(2, 2), f32(2, 2), f32(4)}, flightx.ErrMismatch},
		{"nil", []*core.Tensor{f32(3), nil}, core.ErrNil},
		{"nil first", []*core.Tensor{nil}, core.ErrNil},
		{"sub-byte", []*core.Tensor{filled(t, core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}, 0, 4)}, flightx.ErrProtocol},
	} {
		err := c.PutTensors(ctx, bad.name, bad.ts, nil)
		require.ErrorIs(t, err, bad.want, bad.name)
		err = srv.PutTensors(bad.name, bad.ts, nil)
		require.ErrorIs(t, err, bad.want, bad.name)
		assert.Empty(t, srv.Names(), bad.name)
	}
	err := c.PutTensors(ctx, "meta", []*core.Tensor{f32(1)}, map[string]string{"dlpack.shape": "1"})
	require.ErrorIs(t, err, flightx.ErrProtocol)

	require.NoError(t, srv.Put("one", f32(2, 3), nil))
	require.NoError(t, srv.PutTensors("many", []*core.Tensor{f32(2, 3), f32(1, 1)}, nil))
	_, _, err = c.GetTensors(ctx, "one")
	require.ErrorIs(t, err, flightx.ErrMismatch)
	_, _, err = srv.GetTensors("one")
	require.ErrorIs(t, err, flightx.ErrMismatch)
	_, _, err = c.Get(ctx, "many")
	require.ErrorIs(t, err, flightx.ErrMismatch)
	_, _, err = srv.Get("many")
	require.ErrorIs(t, err, flightx.ErrMismatch)
	err = c.Stream(ctx, "many", func(flightx.Info, *core.Tensor, int64) error { return nil })
	require.ErrorIs(t, err, flightx.ErrMismatch)
	dst := f32(7)
	_, err = c.GetInto(ctx, "many", dst)
	require.ErrorIs(t, err, flightx.ErrMismatch)
	dst.Release()
	_, _, err = c.GetTensors(ctx, "nope")
	require.ErrorIs(t, err, flightx.ErrNotFound)
	_, _, err = srv.GetTensors("nope")
	require.ErrorIs(t, err, flightx.ErrNotFound)
	// a list replaces a tensor of the same name, and a tensor a list
	require.NoError(t, srv.PutTensors("one", []*core.Tensor{f32(1)}, nil))
	require.NoError(t, srv.Put("many", f32(1), nil))
	ts, _, err := srv.GetTensors("one")
	require.NoError(t, err)
	releaseAll(ts)
	x, _, err := srv.Get("many")
	require.NoError(t, err)
	x.Release()
}

// TestTensorsLimits: a server refuses a list over its WithMaxBytes (its elements and 64 bytes a
// tensor) with ErrTooLarge and stores nothing; a client refuses to receive one over its own;
// the server's memory in flight comes back.
func TestTensorsLimits(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithMaxBytes(1024))
	c := dial(t, addr, flightx.WithAllocator(mem), flightx.WithChunkBytes(256))
	ctx := context.Background()
	big := []*core.Tensor{filled(t, core.Float32, 1, 100), filled(t, core.Float32, 2, 100), filled(t, core.Float32, 3, 60)}
	err := c.PutTensors(ctx, "big", big, nil) // 1040 bytes of elements
	require.ErrorIs(t, err, flightx.ErrTooLarge)
	many := make([]*core.Tensor, 20) // 20 empty tensors: 20*64 bytes counted
	for i := range many {
		many[i] = filled(t, core.Float32, 0, 0)
	}
	err = c.PutTensors(ctx, "many", many, nil)
	require.ErrorIs(t, err, flightx.ErrTooLarge)
	assert.Empty(t, srv.Names())
	assert.Zero(t, srv.InFlight())
	fits := big[:2] // 800 bytes and 128
	require.NoError(t, c.PutTensors(ctx, "fits", fits, nil))
	got, _, err := c.GetTensors(ctx, "fits")
	require.NoError(t, err)
	sameList(t, fits, got, "fits")
	releaseAll(got)
	assert.Zero(t, srv.InFlight())

	small := dial(t, addr, flightx.WithAllocator(mem), flightx.WithMaxBytes(512))
	_, _, err = small.GetTensors(ctx, "fits")
	require.ErrorIs(t, err, flightx.ErrTooLarge)
}

// TestTensorsBatches: a list travels in batches of whole tensors, as many as fit the server's
// chunk size (a larger tensor alone), as arrow-go's plain Flight client reads them: an
// extension array of arrowx.VariableShapeTensorType whose elements are the tensors. FlightInfo
// counts the batches and bytes.
func TestTensorsBatches(t *testing.T) {
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(64))
	var in []*core.Tensor
	for i, n := range []int64{4, 4, 4, 4, 4, 30, 2, 2, 1, 0} { // float32: 16-byte tensors four a batch, 120 bytes alone
		in = append(in, filled(t, core.Float32, byte(i), n, 1))
	}
	defer releaseAll(in)
	require.NoError(t, srv.PutTensors("rows", in, map[string]string{"k": "v"}))

	fc, err := flight.NewClientWithMiddleware(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer fc.Close()
	ctx := context.Background()
	fi, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"rows"}})
	require.NoError(t, err)
	assert.Equal(t, int64(4), fi.TotalRecords)
	assert.Equal(t, int64(55*4), fi.TotalBytes)
	s, err := flight.DeserializeSchema(fi.Schema, mem)
	require.NoError(t, err)
	info, err := flightx.DecodeSchema(s)
	require.NoError(t, err)
	assert.True(t, info.Variable)
	assert.Equal(t, []int64{10}, info.Shape)
	assert.Equal(t, 2, info.Ndim)

	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: []byte("rows")})
	require.NoError(t, err)
	rd, err := flight.NewRecordReader(stream, ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer rd.Release()
	vt, ok := rd.Schema().Field(0).Type.(*arrowx.VariableShapeTensorType)
	require.True(t, ok, "the column is %s", rd.Schema().Field(0).Type)
	assert.Equal(t, 2, vt.Ndim())
	assert.Equal(t, "v", rd.Schema().Metadata().Values()[rd.Schema().Metadata().FindKey("k")])
	var perBatch []int64
	k := 0
	for rd.Next() {
		rec := rd.RecordBatch()
		arr, ok := rec.Column(0).(*arrowx.VariableShapeTensorArray)
		require.True(t, ok, "batch column %T", rec.Column(0))
		perBatch = append(perBatch, rec.NumRows())
		for i := range arr.Len() {
			x, err := arr.Tensor(i)
			require.NoError(t, err)
			assert.Equal(t, in[k].Shape(), x.Shape(), "tensor %d", k)
			if x.Len() > 0 {
				assert.Equal(t, bytesOf(t, in[k]), bytesOf(t, x), "tensor %d", k)
			}
			x.Release()
			k++
		}
	}
	require.NoError(t, rd.Err())
	assert.Equal(t, 10, k)
	assert.Equal(t, []int64{4, 1, 1, 4}, perBatch, "16-byte tensors four a batch; 120 bytes alone")
}

// TestTensorsMalformed: a variable-shape stream whose metadata disagrees with its column or its
// batches (fewer or more tensors or elements than announced, another number of dimensions, a
// value type that is not the dtype's carrier) is refused with ErrProtocol; the same stream
// without any metadata is a plain Arrow stream, read as its column says.
func TestTensorsMalformed(t *testing.T) {
	mem := noLeaks(t)
	in := []*core.Tensor{filled(t, core.Float32, 1, 2, 3), filled(t, core.Float32, 2, 1, 2)} // 8 elements
	defer releaseAll(in)
	arr, err := arrowx.NewVariableShapeTensorArray(in, nil, nil)
	require.NoError(t, err)
	defer arr.Release()
	for _, c := range []struct {
		name string
		md   map[string]string
	}{
		{"valid", map[string]string{}}, // the control: what the others change
		{"fewer tensors", map[string]string{"dlpack.tensors": "3", "dlpack.elements": "8"}},
		{"more tensors", map[string]string{"dlpack.tensors": "1", "dlpack.elements": "8"}},
		{"fewer elements", map[string]string{"dlpack.elements": "7"}},
		{"more elements", map[string]string{"dlpack.elements": "9"}},
		{"ndim", map[string]string{"dlpack.ndim": "3"}},
		{"dtype", map[string]string{"dlpack.dtype": "int32"}},
		{"count", map[string]string{"dlpack.tensors": "-1"}},
		{"order", map[string]string{"dlpack.order": "F"}},
		{"no metadata", nil}, // a plain stream: read, as the control
	} {
		t.Run(c.name, func(t *testing.T) {
			md := map[string]string{"dlpack.dtype": "float32", "dlpack.order": "C", "dlpack.ndim": "2", "dlpack.tensors": "2", "dlpack.elements": "8"}
			for k, v := range c.md {
				md[k] = v
			}
			var keys, vals []string
			if c.md != nil {
				for k, v := range md {
					keys, vals = append(keys, k), append(vals, v)
				}
			}
			m := arrow.NewMetadata(keys, vals)
			s := arrow.NewSchema([]arrow.Field{{Name: "data", Type: arr.DataType()}}, &m)
			rec := array.NewRecordBatch(s, []arrow.Array{arr}, int64(arr.Len()))
			defer rec.Release()
			c2 := dial(t, startPlain(t, rec), flightx.WithAllocator(mem))
			got, _, err := c2.GetTensors(context.Background(), "x")
			if c.name == "valid" || c.md == nil {
				require.NoError(t, err)
				sameList(t, in, got, c.name)
				releaseAll(got)
				return
			}
			require.ErrorIs(t, err, flightx.ErrProtocol)
		})
	}
}
