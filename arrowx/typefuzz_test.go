package arrowx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// fuzzSrc hands out a fuzzer's bytes, zeros once they run out.
type fuzzSrc struct{ b []byte }

func (s *fuzzSrc) next() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *fuzzSrc) take(n int) []byte {
	n = min(n, len(s.b))
	out := s.b[:n:n]
	s.b = s.b[n:]
	return out
}

var fuzzLeaves = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
	arrow.FixedWidthTypes.Boolean, extensions.NewBool8Type(), arrow.BinaryTypes.String, arrow.FixedWidthTypes.Date32,
}

var fuzzNames = []string{"data", "shape", "item", "element", "", "x", "permutation"}

// fuzzType builds an Arrow type of the bytes: primitives, FixedSizeLists (of sizes 0 to 8),
// Lists, LargeLists and Structs of fields of any of a few names, nullable or not.
func fuzzType(s *fuzzSrc, depth int) arrow.DataType {
	k := s.next()
	if depth >= 4 {
		k %= 6
	}
	field := func() arrow.Field {
		c := s.next()
		return arrow.Field{Name: fuzzNames[int(c>>1)%len(fuzzNames)], Nullable: c&1 == 1, Type: fuzzType(s, depth+1)}
	}
	switch k % 12 {
	case 6, 7:
		return arrow.FixedSizeListOfField(int32(s.next()%9), field())
	case 8:
		return arrow.ListOfField(field())
	case 9:
		return arrow.LargeListOfField(field())
	case 10, 11:
		fields := make([]arrow.Field, s.next()%4)
		for i := range fields {
			fields[i] = field()
		}
		return arrow.StructOf(fields...)
	}
	return fuzzLeaves[int(s.next())%len(fuzzLeaves)]
}

// fuzzMeta builds tensor metadata of the bytes: any of shape, dim_names, permutation and
// uniform_shape, each of a length and values that may or may not fit.
func fuzzMeta(s *fuzzSrc) string {
	m := map[string]any{}
	ints := func(lo int) []any {
		out := make([]any, s.next()%5)
		for i := range out {
			c := s.next()
			if c == 255 {
				out[i] = nil
			} else {
				out[i] = int(c%6) + lo
			}
		}
		return out
	}
	keys := s.next()
	if keys&1 != 0 {
		m["shape"] = ints(0)
	}
	if keys&2 != 0 {
		names := make([]string, s.next()%5)
		for i := range names {
			names[i] = fmt.Sprint("d", i)
		}
		m["dim_names"] = names
	}
	if keys&4 != 0 {
		m["permutation"] = ints(-1)
	}
	if keys&8 != 0 {
		m["uniform_shape"] = ints(0)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// fuzzJSON writes n values of dt as JSON for array.FromJSON: valid Arrow data, whose tensor
// shapes (a Struct of data and shape) match their data more often than not.
func fuzzJSON(s *fuzzSrc, dt arrow.DataType, n int, b *strings.Builder) {
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fuzzValue(s, dt, b)
	}
	b.WriteByte(']')
}

func fuzzValue(s *fuzzSrc, dt arrow.DataType, b *strings.Builder) {
	c := s.next()
	if c == 254 {
		b.WriteString("null")
		return
	}
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		fuzzJSON(s, t.Elem(), int(max(t.Len(), 0)), b)
	case arrow.ListLikeType:
		fuzzJSON(s, t.Elem(), int(c%4), b)
	case *arrow.StructType:
		di, si := t.FieldIndices("data"), t.FieldIndices("shape")
		var shape []int
		size := -1
		if len(di) == 1 && len(si) == 1 {
			if fsl, ok := t.Field(si[0]).Type.(*arrow.FixedSizeListType); ok && fsl.Len() >= 0 && fsl.Len() < 8 {
				size = 1
				for range fsl.Len() {
					d := int(s.next() % 4)
					shape = append(shape, d)
					size *= d
				}
				if c%4 == 0 {
					size = int(s.next() % 8)
				}
			}
		}
		b.WriteByte('{')
		for i, f := range t.Fields() {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.Name)
			b.Write(k)
			b.WriteByte(':')
			switch {
			case size >= 0 && i == si[0]:
				v, _ := json.Marshal(shape)
				b.Write(v)
			case size >= 0 && i == di[0] && arrow.IsListLike(f.Type.ID()):
				fuzzJSON(s, f.Type.(arrow.ListLikeType).Elem(), size, b)
			default:
				fuzzValue(s, f.Type, b)
			}
		}
		b.WriteByte('}')
	default:
		switch dt.ID() {
		case arrow.BOOL:
			b.WriteString([]string{"false", "true"}[c&1])
		case arrow.STRING:
			b.WriteString(`"s"`)
		case arrow.EXTENSION: // bool8
			b.WriteString([]string{"false", "true"}[c&1])
		default:
			fmt.Fprint(b, int(c%100))
		}
	}
}

// fuzzRaw builds array data of dt as an untrusted producer could describe it: lengths,
// offsets, null counts and buffers as the bytes say, children likewise.
func fuzzRaw(s *fuzzSrc, dt arrow.DataType, depth int) arrow.ArrayData {
	n, off := int(s.next()%16), int(s.next()%4)
	nulls := int(s.next()%4) - 1 // -1: arrow-go counts them
	st := dt
	if ext, ok := dt.(arrow.ExtensionType); ok {
		st = ext.StorageType()
	}
	bufs := make([]*amemory.Buffer, len(st.Layout().Buffers))
	for i := range bufs {
		if c := s.next(); c != 0 {
			bufs[i] = amemory.NewBufferBytes(s.take(int(c)))
		}
	}
	var kids []arrow.ArrayData
	if depth < 6 {
		switch t := st.(type) {
		case arrow.NestedType:
			for _, f := range t.Fields() {
				kids = append(kids, fuzzRaw(s, f.Type, depth+1))
			}
		}
	}
	d := array.NewData(dt, n, bufs, kids, nulls, off)
	for _, k := range kids {
		k.Release()
	}
	return d
}

// fromJSON is array.FromJSON, whose builders panic on some values of some types (a
// FixedSizeList given a list of another length): test data, not the code under test, so a
// panic there is an error.
func fromJSON(dt arrow.DataType, js string) (arr arrow.Array, err error) {
	defer func() {
		if p := recover(); p != nil {
			arr, err = nil, fmt.Errorf("arrow-go's FromJSON panicked: %v", p)
		}
	}()
	arr, _, err = array.FromJSON(amemory.DefaultAllocator, dt, strings.NewReader(js))
	return arr, err
}

// allowed reports whether err is one of the errors a conversion may give for data it cannot
// make a tensor of: ErrMalformed (and core.ErrInvalid) for what contradicts itself, ErrNulls,
// ErrMismatch for a record's columns, adapters.ErrUnsupported for what Arrow has and DLPack
// does not.
func allowed(err error) bool {
	for _, e := range []error{arrowx.ErrMalformed, core.ErrInvalid, arrowx.ErrNulls, arrowx.ErrMismatch, adapters.ErrUnsupported} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// readAll reads every element of x (a tensor a conversion returned) and releases it.
func readAll(t *testing.T, x *core.Tensor, what string) {
	t.Helper()
	c, err := memory.Contiguous(x)
	if err != nil {
		t.Fatalf("%s: reading %s: %v", what, x, err)
	}
	c.Release()
	x.Release()
}

// FuzzTensorTypes builds random storage types and metadata for arrow.fixed_shape_tensor and
// arrow.variable_shape_tensor (and plain columns of the same types), as any producer could send
// them: Deserialize either makes a type that answers every method and reads its own Serialize
// back, or refuses with ErrMalformed (adapters.ErrUnsupported for an element type DLPack lacks);
// data of the type, valid (arrow-go's JSON reader) or as a hostile producer lays it out (any
// lengths, offsets and buffers), converts to a tensor whose every element reads, or to one of
// the errors of allowed; nothing panics.
func FuzzTensorTypes(f *testing.F) {
	// a fixed_shape_tensor of float32 [2,3], its child "item" non-nullable; valid data, then raw
	f.Add([]byte{6, 6, 4, 0, 9, 0}, `{"shape":[2,3]}`, []byte{2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{6, 6, 4, 0, 9, 1}, `{"shape":[3,2],"permutation":[1,0]}`, []byte{2, 0, 0, 0, 1, 48, 2, 1, 24, 1, 2, 3})
	// variable_shape_tensor storage: data (List<float32>) then shape (FixedSizeList<int32>[2]), and
	// the other order, metadata from the bytes
	f.Add([]byte{10, 2, 0, 8, 4, 0, 9, 2, 6, 2, 4, 0, 2, 8, 2, 255, 3, 0}, ``, []byte{2, 1, 2, 3, 1, 2, 3, 4, 5, 6, 1, 2, 3, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{10, 2, 2, 6, 2, 4, 0, 2, 0, 8, 4, 0, 9, 0, 0}, ``, []byte{2, 1, 1, 2, 1, 2, 3, 2, 2, 0, 0})
	f.Add([]byte{10, 2, 2, 6, 2, 4, 0, 2, 0, 8, 4, 0, 9, 0, 1}, ``, []byte{2, 0, 0, 0, 2, 2, 0, 0, 8, 2, 2, 1, 1, 0})
	f.Fuzz(func(t *testing.T, typeBytes []byte, meta string, dataBytes []byte) {
		s := &fuzzSrc{b: typeBytes}
		storage := fuzzType(s, 0)
		if meta == "" {
			meta = fuzzMeta(s)
		}
		mode := s.next()
		for _, proto := range []arrow.ExtensionType{&arrowx.FixedShapeTensorType{}, &arrowx.VariableShapeTensorType{}, nil} {
			var dt arrow.DataType = storage
			if proto != nil {
				ext, err := proto.Deserialize(storage, meta)
				if err != nil {
					if !errors.Is(err, arrowx.ErrMalformed) && !errors.Is(err, adapters.ErrUnsupported) {
						t.Fatalf("Deserialize(%s, %q): %v matches neither ErrMalformed nor ErrUnsupported", storage, meta, err)
					}
					continue
				}
				_ = ext.String()
				if fst, ok := ext.(*arrowx.FixedShapeTensorType); ok {
					_ = fst.LogicalShape()
				}
				if ext.(interface{ ValueType() arrow.DataType }).ValueType() == nil {
					t.Fatalf("%s has no value type", ext)
				}
				again, err := proto.Deserialize(storage, ext.Serialize())
				if err != nil || !ext.ExtensionEquals(again) {
					t.Fatalf("%s: Serialize %q does not read back: %v", ext, ext.Serialize(), err)
				}
				dt = ext
			}
			ds := &fuzzSrc{b: dataBytes}
			var d arrow.ArrayData
			if mode&1 == 0 {
				var js strings.Builder
				fuzzJSON(ds, storage, int(ds.next()%5), &js)
				arr, err := fromJSON(storage, js.String())
				if err != nil {
					continue // JSON arrow-go's builders refuse: not under test
				}
				if proto != nil {
					ea := array.NewExtensionArrayWithStorage(dt.(arrow.ExtensionType), arr)
					arr.Release()
					arr = ea
					if va, ok := arr.(*arrowx.VariableShapeTensorArray); ok {
						_ = va.String()
						for i := range va.Len() {
							x, err := va.Tensor(i)
							if err != nil {
								if !allowed(err) {
									t.Fatalf("Tensor(%d) of %s: %v", i, dt, err)
								}
								continue
							}
							readAll(t, x, "Tensor")
						}
					}
				}
				d = arr.Data()
				d.Retain()
				arr.Release()
			} else {
				d = fuzzRaw(ds, dt, 0)
			}
			for _, opts := range [][]adapters.Option{nil, {arrowx.FillNulls(0)}} {
				x, err := arrowx.FromArrayData(d, opts...)
				if err != nil {
					if !allowed(err) {
						t.Fatalf("FromArrayData of %s: %v", dt, err)
					}
					continue
				}
				readAll(t, x, "FromArrayData")
			}
			if proto == nil && mode&1 == 0 { // a plain record of two columns of the type
				col := array.MakeFromData(d)
				rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "a", Type: dt}, {Name: "b", Type: dt}}, nil),
					[]arrow.Array{col, col}, int64(col.Len()))
				x, err := arrowx.FromRecord(rec, arrowx.FillNulls(0))
				if err != nil {
					if !allowed(err) {
						t.Fatalf("FromRecord of %s: %v", dt, err)
					}
				} else {
					readAll(t, x, "FromRecord")
				}
				rec.Release()
				col.Release()
			}
			d.Release()
		}
	})
}
