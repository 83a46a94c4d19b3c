package flightx_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/nodetest"
)

func mustDType(t *testing.T, s string) core.DLDataType {
	t.Helper()
	dt, err := flightx.ParseDType(s)
	require.NoError(t, err)
	return dt
}

// TestPlainClientReadsTensorColumn: arrow-go's plain Flight client, knowing nothing of flightx,
// reads a DoGet as arrow.fixed_shape_tensor batches (arrowx registered the type): the element
// type and the row shape from Arrow's types, the rows of the tensor's leading dimension split
// across batches of at most the chunk size, and arrowx.FromArray gives the elements back.
func TestPlainClientReadsTensorColumn(t *testing.T) {
	for _, c := range []struct {
		dtype   string
		shape   []int64
		chunk   int
		value   arrow.DataType
		row     []int64 // the fixed_shape_tensor's shape
		batches int
	}{
		{"float32", []int64{6, 4, 5}, 1 << 20, arrow.PrimitiveTypes.Float32, []int64{4, 5}, 1},
		{"int16", []int64{300, 64}, 1024, arrow.PrimitiveTypes.Int16, []int64{64}, 38},
		{"uint64", []int64{7, 3, 2}, 48, arrow.PrimitiveTypes.Uint64, []int64{3, 2}, 7},
		// a row of the first dimension is over the chunk: rows of the next
		{"float64", []int64{2, 8, 100}, 1024, arrow.PrimitiveTypes.Float64, []int64{100}, 16},
		{"float16", []int64{2, 1000}, 512, arrow.FixedWidthTypes.Float16, []int64{}, 8},
		{"float32", []int64{}, 1 << 20, arrow.PrimitiveTypes.Float32, []int64{}, 1},
		// dtypes Arrow lacks: bits in the unsigned integer of their width, complex as pairs
		{"bool", []int64{5, 3}, 1 << 20, arrow.PrimitiveTypes.Uint8, []int64{3}, 1},
		{"bfloat16", []int64{3, 4}, 1 << 20, arrow.PrimitiveTypes.Uint16, []int64{4}, 1},
		{"float8_e4m3fn", []int64{4, 2}, 1 << 20, arrow.PrimitiveTypes.Uint8, []int64{2}, 1},
		{"complex64", []int64{3, 2}, 1 << 20, arrow.PrimitiveTypes.Float32, []int64{2, 2}, 1},
		{"complex128", []int64{4}, 32, arrow.PrimitiveTypes.Float64, []int64{2}, 2},
		{"int32x4", []int64{3}, 1 << 20, arrow.PrimitiveTypes.Int32, []int64{4}, 1},
	} {
		t.Run(fmt.Sprintf("%s%v/%d", c.dtype, c.shape, c.chunk), func(t *testing.T) {
			mem := noLeaks(t)
			srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(c.chunk))
			x := filled(t, mustDType(t, c.dtype), 3, c.shape...)
			require.NoError(t, srv.Put("x", x, map[string]string{"k": "v"}))
			want := bytesOf(t, x)
			x.Release()

			conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			require.NoError(t, err)
			defer conn.Close()
			stream, err := flight.NewFlightServiceClient(conn).DoGet(context.Background(), &flight.Ticket{Ticket: []byte("x")})
			require.NoError(t, err)
			rd, err := flight.NewRecordReader(stream)
			require.NoError(t, err)
			defer rd.Release()
			f := rd.Schema().Field(0)
			ft, ok := f.Type.(*arrowx.FixedShapeTensorType)
			require.True(t, ok, "the column is %s", f.Type)
			assert.Equal(t, "arrow.fixed_shape_tensor", ft.ExtensionName())
			assert.True(t, arrow.TypeEqual(c.value, ft.ValueType()), "value type %s", ft.ValueType())
			assert.Equal(t, c.row, ft.Shape())
			assert.Nil(t, ft.Permutation())
			md := rd.Schema().Metadata()
			dt, _ := md.GetValue("dlpack.dtype")
			assert.Equal(t, c.dtype, dt)
			v, _ := md.GetValue("k")
			assert.Equal(t, "v", v)
			var got []byte
			batches := 0
			for rd.Next() {
				batches++
				col := rd.RecordBatch().Column(0)
				rows, err := arrowx.FromArray(col)
				require.NoError(t, err)
				assert.Equal(t, append([]int64{int64(col.Len())}, c.row...), rows.Shape())
				b, err := rows.ReadOnlyBytes()
				require.NoError(t, err)
				if col.Len() > 1 {
					assert.LessOrEqual(t, len(b), c.chunk, "a batch of more than one row within the chunk")
				}
				got = append(got, b...)
				rows.Release()
			}
			require.NoError(t, rd.Err())
			assert.Equal(t, c.batches, batches)
			assert.Equal(t, want, got, "the elements, in C order")

			// and flightx's own client gets the tensor back
			back, meta, err := dial(t, addr, flightx.WithAllocator(mem)).Get(context.Background(), "x")
			require.NoError(t, err)
			assert.Equal(t, c.shape, back.Shape())
			assert.Equal(t, want, bytesOf(t, back))
			assert.Equal(t, map[string]string{"k": "v"}, meta)
			back.Release()
		})
	}
}

// TestFlatColumnStillRead: what flightx sent before (one flat column, the shape in
// dlpack.shape), which WithFlatColumn still sends, is read by Get and by a server's DoPut.
func TestFlatColumnStillRead(t *testing.T) {
	mem := noLeaks(t)
	old, addr := serve(t, flightx.WithAllocator(mem), flightx.WithFlatColumn(), flightx.WithChunkBytes(1000))
	srv, addr2 := serve(t, flightx.WithAllocator(mem))
	for _, dt := range []string{"float32", "bool", "bfloat16", "complex128"} {
		x := filled(t, mustDType(t, dt), 1, 20, 30)
		want := bytesOf(t, x)
		require.NoError(t, old.Put(dt, x, nil))
		info, err := flightx.DecodeSchema(schemaOfGet(t, addr, dt))
		require.NoError(t, err)
		assert.Equal(t, []int64{20, 30}, info.Shape)
		back, _, err := dial(t, addr).Get(context.Background(), dt)
		require.NoError(t, err, dt)
		assert.Equal(t, want, bytesOf(t, back), dt)
		back.Release()
		require.NoError(t, dial(t, addr2, flightx.WithFlatColumn()).Put(context.Background(), dt, x, nil))
		got, _, err := srv.Get(dt)
		require.NoError(t, err)
		assert.Equal(t, want, bytesOf(t, got))
		got.Release()
		x.Release()
	}
}

// schemaOfGet is the schema of a DoGet, read with arrow-go's plain client; the column must be
// the flat one.
func schemaOfGet(t *testing.T, addr, name string) *arrow.Schema {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	stream, err := flight.NewFlightServiceClient(conn).DoGet(context.Background(), &flight.Ticket{Ticket: []byte(name)})
	require.NoError(t, err)
	rd, err := flight.NewRecordReader(stream)
	require.NoError(t, err)
	defer rd.Release()
	for rd.Next() {
	}
	_, ext := rd.Schema().Field(0).Type.(arrow.ExtensionType)
	assert.False(t, ext, "WithFlatColumn sends the flat column")
	return rd.Schema()
}

// ipcStream is the bytes of the messages a DoGet of name sent, as an Arrow IPC stream: each
// message's header and body in the encapsulated format, and the end-of-stream marker.
func ipcStream(t *testing.T, addr, name string) []byte {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	stream, err := flight.NewFlightServiceClient(conn).DoGet(context.Background(), &flight.Ticket{Ticket: []byte(name)})
	require.NoError(t, err)
	var out bytes.Buffer
	for {
		fd, err := stream.Recv()
		if err != nil {
			break
		}
		h := fd.DataHeader
		pad := (8 - len(h)%8) % 8
		out.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF})
		require.NoError(t, binary.Write(&out, binary.LittleEndian, uint32(len(h)+pad)))
		out.Write(h)
		out.Write(make([]byte, pad))
		require.Zero(t, len(fd.DataBody)%8, "bodies are 8-byte multiples")
		out.Write(fd.DataBody)
	}
	out.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0})
	return out.Bytes()
}

// TestNodeReadsTensorColumn: Arrow's JavaScript implementation reads the messages flightx's
// server sends, byte for byte as they went: the column's extension name and metadata, its
// FixedSizeList storage, the batches and the values, and the dlpack.* metadata.
func TestNodeReadsTensorColumn(t *testing.T) {
	node := nodetest.Install(t, "apache-arrow@21.2.0")
	mem := noLeaks(t)
	srv, addr := serve(t, flightx.WithAllocator(mem), flightx.WithChunkBytes(48))
	x := core.MustFromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, 4, 2, 3)
	require.NoError(t, srv.Put("x", x, map[string]string{"source": "go"}))
	x.Release()
	dir := t.TempDir()
	path := filepath.Join(dir, "flightx.arrows")
	require.NoError(t, os.WriteFile(path, ipcStream(t, addr, "x"), 0o644))
	out := node.Run(t, `
const fs = require("fs");
const { tableFromIPC } = require("apache-arrow");
const r = tableFromIPC(fs.readFileSync(process.argv[1]));
const batches = [];
for (const b of r.batches) {
  const col = b.getChildAt(0);
  const rows = [];
  for (let i = 0; i < col.length; i++) rows.push(Array.from(col.get(i)));
  batches.push(rows);
}
const f = r.schema.fields[0];
const md = Object.fromEntries(r.schema.metadata);
console.log(JSON.stringify({ name: f.metadata.get("ARROW:extension:name"), meta: f.metadata.get("ARROW:extension:metadata"),
  type: String(f.type), dtype: md["dlpack.dtype"], shape: md["dlpack.shape"], source: md["source"], batches }));
`, path)
	var got struct {
		Name, Meta, Type, DType, Shape, Source string
		Batches                                [][][]float64
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Equal(t, "arrow.fixed_shape_tensor", got.Name)
	assert.JSONEq(t, `{"shape":[2,3]}`, got.Meta)
	assert.Equal(t, "FixedSizeList[6]<Float32>", got.Type)
	assert.Equal(t, "float32", got.DType)
	assert.Equal(t, "4,2,3", got.Shape)
	assert.Equal(t, "go", got.Source)
	assert.Equal(t, [][][]float64{
		{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}},
		{{12, 13, 14, 15, 16, 17}, {18, 19, 20, 21, 22, 23}},
	}, got.Batches, "two rows of 48 bytes a batch")
}
