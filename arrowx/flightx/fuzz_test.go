package flightx

import (
	"io"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
)

// FuzzDecodeSchema feeds untrusted schema metadata to the decoder: it must refuse bad input
// with an error (never panic), and what it accepts must encode back to the same description.
func FuzzDecodeSchema(f *testing.F) {
	f.Add("float32", "2,3", "C", uint8(0))
	f.Add("bfloat16", "", "C", uint8(1))
	f.Add("int8x4", "0,5", "C", uint8(1))
	f.Add("complex128", "9223372036854775807", "C", uint8(1))
	f.Add("float32", "1,,2", "F", uint8(0))
	f.Add("bool", "-1", "C", uint8(2))
	f.Fuzz(func(t *testing.T, dtype, shape, order string, typ uint8) {
		types := []arrow.DataType{arrow.PrimitiveTypes.Float32, &arrow.FixedSizeBinaryType{ByteWidth: 2},
			&arrow.FixedSizeBinaryType{ByteWidth: 4}, arrow.PrimitiveTypes.Int8, &arrow.FixedSizeBinaryType{ByteWidth: 16}}
		md := arrow.NewMetadata([]string{KeyDType, KeyShape, KeyOrder, "user"}, []string{dtype, shape, order, "x"})
		s := arrow.NewSchema([]arrow.Field{{Name: column, Type: types[int(typ)%len(types)]}}, &md)
		info, err := DecodeSchema(s)
		if err != nil {
			return
		}
		if info.DType.Size() == 0 || len(info.Shape) > core.MaxNdim {
			t.Fatalf("accepted %s %v", info.DType, info.Shape)
		}
		again, err := schemaOf(info)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", info, err)
		}
		back, err := DecodeSchema(again)
		if err != nil || back.DType != info.DType || !slices.Equal(back.Shape, info.Shape) || back.Meta["user"] != "x" {
			t.Fatalf("%+v came back as %+v, %v", info, back, err)
		}
	})
}

// messages replays FlightData messages as a stream.
type messages struct{ fds []*flight.FlightData }

func (m *messages) Recv() (*flight.FlightData, error) {
	if len(m.fds) == 0 {
		return nil, io.EOF
	}
	fd := m.fds[0]
	m.fds = m.fds[1:]
	return fd, nil
}

// FuzzReadStream feeds untrusted FlightData messages (IPC headers and bodies, as a peer could
// send them) to the receiver: it must return a tensor that matches the schema, or an error;
// never panic, and leave nothing allocated.
func FuzzReadStream(f *testing.F) {
	// seeds: real streams of a few tensors, as sendTensor writes them
	for _, x := range []*core.Tensor{core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2), core.MustNew(core.Int8, 3),
		core.MustNew(core.BFloat16, 2, 0), core.MustFromSlice([]bool{true, false, true, true, false, true, true, true, false, true, true, true, true, true, true, true})} {
		var fds []*flight.FlightData
		send := func(fd *flight.FlightData) error {
			fds = append(fds, &flight.FlightData{DataHeader: slices.Clone(fd.DataHeader), DataBody: slices.Clone(fd.DataBody)})
			return nil
		}
		if err := sendTensor(send, nil, Info{DType: x.DType(), Shape: x.Shape()}, x, 8, memory.DefaultAllocator); err != nil {
			f.Fatal(err)
		}
		for len(fds) < 3 {
			fds = append(fds, &flight.FlightData{})
		}
		f.Add(fds[0].DataHeader, fds[1].DataHeader, fds[1].DataBody, fds[2].DataHeader, fds[2].DataBody)
	}
	// plain Arrow streams, as arrow-go's writer makes them, their batch sent twice: a primitive
	// column (CI's fuzzer found that the Info of one still said [-1] after the stream ended) and
	// a fixed_shape_tensor column
	flat, err := arrowx.ToArray(core.MustFromSlice(make([]uint8, 16), 16))
	if err != nil {
		f.Fatal(err)
	}
	defer flat.Release()
	fixed, err := arrowx.ToFixedShapeTensor(core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	if err != nil {
		f.Fatal(err)
	}
	defer fixed.Release()
	for _, arr := range []arrow.Array{flat, fixed} {
		fds := plainStream(f, arr) // the schema, one batch
		fds = append(fds, fds[1])
		f.Add(fds[0].DataHeader, fds[1].DataHeader, fds[1].DataBody, fds[2].DataHeader, fds[2].DataBody)
	}
	f.Fuzz(func(t *testing.T, h0, h1, b1, h2, b2 []byte) {
		if len(h0)+len(h1)+len(b1)+len(h2)+len(b2) > 1<<20 {
			return // what a stream of this size can do, 1 MiB does (the limits below are 1 MiB)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		src := &messages{fds: []*flight.FlightData{{DataHeader: h0}, {DataHeader: h1, DataBody: b1},
			{DataHeader: h2, DataBody: b2}}}
		cfg := newConfig([]Option{WithAllocator(mem), WithMaxBytes(1 << 20)})
		cfg.inFlight = &budget{limit: 1 << 20}
		info, x, err := readStream(src, cfg, nil, nil, nil)
		if err == nil {
			if x.DType() != info.DType || !slices.Equal(x.Shape(), info.Shape) {
				t.Fatalf("got %s for %+v", x, info)
			}
			b, err := x.ReadOnlyBytes()
			if err != nil {
				t.Fatal(err)
			}
			if info.DType.Code == core.CodeBool && slices.ContainsFunc(b, func(v byte) bool { return v > 1 }) {
				t.Fatalf("bool bytes %v", b)
			}
			x.Release()
		}
		if mem.CurrentAlloc() != 0 {
			t.Fatalf("%d bytes left allocated", mem.CurrentAlloc())
		}
		if n := cfg.inFlight.used.Load(); n != 0 {
			t.Fatalf("%d bytes of memory in flight not given back", n)
		}
	})
}

// FuzzSchemaBytes feeds untrusted FlightInfo schema bytes (what ListFlights returns) to the
// client's decoder: an Info that re-encodes, or an error; never a panic or a huge allocation.
func FuzzSchemaBytes(f *testing.F) {
	for _, info := range []Info{{DType: core.Float32, Shape: []int64{2, 3}, Meta: map[string]string{"a": "b"}},
		{DType: core.Complex64, Shape: []int64{}}} {
		s, err := schemaOf(info)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(flight.SerializeSchema(s, memory.DefaultAllocator))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		cfg := newConfig([]Option{WithAllocator(mem)})
		s, err := deserializeSchema(b, cfg)
		if err == nil {
			if _, err := DecodeSchema(s); err == nil {
				if _, err := schemaOf(Info{}); err == nil {
					t.Fatal("an empty Info encoded")
				}
			}
		}
		if mem.CurrentAlloc() != 0 {
			t.Fatalf("%d bytes left allocated", mem.CurrentAlloc())
		}
	})
}
