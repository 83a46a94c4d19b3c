package flightx

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/core"
)

// capture collects the FlightData messages a flight.Writer sends.
type capture struct{ fds []*flight.FlightData }

func (c *capture) Send(fd *flight.FlightData) error {
	c.fds = append(c.fds, &flight.FlightData{DataHeader: slices.Clone(fd.DataHeader), DataBody: slices.Clone(fd.DataBody)})
	return nil
}

// frame encodes FlightData messages as the fuzzer's input: for each, the header's length (2
// bytes, little-endian) and the header, the body's length (4 bytes) and the body.
func frame(fds []*flight.FlightData) []byte {
	var b []byte
	for _, fd := range fds {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(fd.DataHeader)))
		b = append(b, fd.DataHeader...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(fd.DataBody)))
		b = append(b, fd.DataBody...)
	}
	return b
}

// unframe is frame's inverse, for any bytes: lengths past the end take what is left; at most
// 8 messages.
func unframe(b []byte) []*flight.FlightData {
	var fds []*flight.FlightData
	for len(b) >= 2 && len(fds) < 8 {
		n := min(int(binary.LittleEndian.Uint16(b)), len(b)-2)
		fd := &flight.FlightData{DataHeader: b[2 : 2+n]}
		b = b[2+n:]
		if len(b) >= 4 {
			n := int(min(uint64(binary.LittleEndian.Uint32(b)), uint64(len(b)-4)))
			fd.DataBody = b[4 : 4+n]
			b = b[4+n:]
		}
		fds = append(fds, fd)
	}
	return fds
}

// plainStream is the FlightData of a plain Arrow stream (arrow-go's flight.Writer, as pyarrow
// and other clients send) of one column.
func plainStream(tb testing.TB, arr arrow.Array, opts ...ipc.Option) []*flight.FlightData {
	schema := arrow.NewSchema([]arrow.Field{{Name: "t", Type: arr.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	var c capture
	w := flight.NewRecordWriter(&c, append([]ipc.Option{ipc.WithSchema(schema)}, opts...)...)
	if err := w.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return c.fds
}

// FuzzReadAnyStream feeds any sequence of FlightData messages (IPC headers and bodies) to the
// reader of a server's DoPut (readAny with lists): plain Arrow streams of primitive,
// fixed_shape_tensor and variable_shape_tensor columns (its storage's fields in either order),
// as the seeds, and whatever the fuzzer makes of them. It must give a tensor or list that
// matches what it reports, or an error; never panic, and leave nothing allocated or in flight.
func FuzzReadAnyStream(f *testing.F) {
	mem := memory.DefaultAllocator
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	fixed, err := arrowx.ToFixedShapeTensor(x)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(frame(plainStream(f, fixed)))
	flat, err := arrowx.ToArray(core.MustFromSlice([]int16{1, -2, 3}, 3))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(frame(plainStream(f, flat)))
	va, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{x, core.MustFromSlice([]float32{7, 8}, 1, 2)}, []string{"h", "w"}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(frame(plainStream(f, va)))
	// the same, its storage's fields in the other order
	shapeFirst := arrowtest.ShapeFirst(f, va)
	defer shapeFirst.Release()
	f.Add(frame(plainStream(f, shapeFirst)))
	var c capture
	if err := sendTensor(c.Send, nil, Info{DType: core.Int8, Shape: []int64{2, 2}}, core.MustNew(core.Int8, 2, 2), 8, mem); err != nil {
		f.Fatal(err)
	}
	f.Add(frame(c.fds))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 {
			return // what a stream of this size can do, 1 MiB does (the limits below are 1 MiB)
		}
		checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
		cfg := newConfig([]Option{WithAllocator(checked), WithMaxBytes(1 << 20)})
		cfg.inFlight = &budget{limit: 1 << 20}
		src := &messages{fds: unframe(b)}
		info, x, list, err := readAny(src, cfg, func(*flight.FlightDescriptor, *Info) error { return nil }, nil, nil, true)
		if err == nil {
			if info.Variable {
				for _, e := range list {
					if e.DType() != info.DType || e.Ndim() != info.Ndim {
						t.Fatalf("list element %s for %+v", e, info)
					}
					if _, err := e.ReadOnlyBytes(); err != nil && e.IsContiguous() {
						t.Fatal(err)
					}
					e.Release()
				}
			} else {
				if x.DType() != info.DType || !slices.Equal(x.Shape(), info.Shape) {
					t.Fatalf("got %s for %+v", x, info)
				}
				if _, err := x.ReadOnlyBytes(); err != nil {
					t.Fatal(err)
				}
				x.Release()
			}
		}
		if checked.CurrentAlloc() != 0 {
			t.Fatalf("%d bytes left allocated", checked.CurrentAlloc())
		}
		if n := cfg.inFlight.used.Load(); n != 0 {
			t.Fatalf("%d bytes of memory in flight not given back", n)
		}
	})
}
