package parsercheck_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	gguf "github.com/gpustack/gguf-parser-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/memory"
)

// readModes are the parser's two ways of reading a local file: through os.File reads and
// through its own memory map.
var readModes = []struct {
	name string
	opts []gguf.GGUFReadOption
}{
	{"read", nil},
	{"mmap", []gguf.GGUFReadOption{gguf.UseMMap()}},
}

// written is one file that ggufx wrote, opened by ggufx and parsed by gguf-parser-go.
type written struct {
	raw []byte // the whole file
	f   *ggufx.File
	gf  *gguf.GGUFFile
}

// writeAndRead writes md and es with ggufx.WriteFile, opens the file with ggufx.Open (closed
// at the test's end) and parses it with gguf_parser.ParseGGUFFile. At the test's end it also
// requires that every tensor over ggufx's mapping was let go.
func writeAndRead(t *testing.T, md *ggufx.Metadata, es []ggufx.Entry, opts ...gguf.GGUFReadOption) written {
	t.Helper()
	settle()
	live := core.LiveForeign()
	t.Cleanup(func() { // registered first: runs after the Close below
		require.Eventually(t, func() bool { settle(); return core.LiveForeign() == live },
			5*time.Second, 10*time.Millisecond, "every tensor over the mapping is released")
	})
	path := writeFile(t, md, es)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	gf, err := gguf.ParseGGUFFile(path, opts...)
	require.NoError(t, err, "gguf-parser-go refuses a file ggufx wrote")
	return written{raw: raw, f: f, gf: gf}
}

// writeFile writes md and es with ggufx.WriteFile to a new file and returns its path.
func writeFile(t *testing.T, md *ggufx.Metadata, es []ggufx.Entry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "check.gguf")
	require.NoError(t, ggufx.WriteFile(path, md, es))
	return path
}

// settle lets tensors that earlier code dropped without releasing go (their cleanups run).
func settle() {
	runtime.GC()
	time.Sleep(time.Millisecond)
}

// metadata makes ggufx metadata of kvs, in their order.
func metadata(t *testing.T, kvs []kv) *ggufx.Metadata {
	t.Helper()
	md := &ggufx.Metadata{}
	for _, p := range kvs {
		require.NoError(t, md.Set(p.k, p.v), p.k)
	}
	return md
}

// kv is one metadata key and the Go value to set it to.
type kv struct {
	k string
	v any
}

// node is a metadata value in a form that each reader's values are turned into independently:
// the value type numbers as they are on disk, floats as their bits (so that NaN payloads and
// -0 compare), arrays as their items.
type node struct {
	Type  uint32 // the value's type (gguf_type)
	Elem  uint32 // arrays: the items' type
	Value any    // scalars: the value, of the Go type of its width; float32/float64 as bits
	Items []node // arrays: the items (never nil); scalars: nil
}

// scalar is x with floats replaced by their bits.
func scalar(x any) any {
	switch x := x.(type) {
	case float32:
		return math.Float32bits(x)
	case float64:
		return math.Float64bits(x)
	}
	return x
}

// fromGGUFX is ggufx's value v as a node.
func fromGGUFX(v ggufx.Value) node {
	n := node{Type: uint32(v.Type())}
	if v.Type() != ggufx.TypeArray {
		n.Value = scalar(v.Any())
		return n
	}
	n.Elem = uint32(v.ElemType())
	n.Items = make([]node, v.Len())
	for i := range n.Items {
		e, ok := v.Index(i)
		if !ok {
			n.Items[i] = node{Value: fmt.Sprintf("ggufx: no item %d of %d", i, v.Len())}
			continue
		}
		n.Items[i] = fromGGUFX(e)
	}
	return n
}

// fromParser is the parser's value x, read as type vt, as a node.
func fromParser(vt gguf.GGUFMetadataValueType, x any) (node, error) {
	n := node{Type: uint32(vt)}
	if vt != gguf.GGUFMetadataValueTypeArray {
		n.Value = scalar(x)
		return n, nil
	}
	av, ok := x.(gguf.GGUFMetadataKVArrayValue)
	if !ok {
		return node{}, fmt.Errorf("an array value is a %T, not a GGUFMetadataKVArrayValue", x)
	}
	if av.Len != uint64(len(av.Array)) {
		return node{}, fmt.Errorf("an array declares %d items and holds %d", av.Len, len(av.Array))
	}
	n.Elem = uint32(av.Type)
	n.Items = make([]node, len(av.Array))
	for i, e := range av.Array {
		var err error
		if n.Items[i], err = fromParser(av.Type, e); err != nil {
			return node{}, fmt.Errorf("item %d: %w", i, err)
		}
	}
	return n, nil
}

// assertMetadata requires that ggufx reads want back as written and that the parser reads
// every key, in order, with ggufx's value type and value.
func assertMetadata(t *testing.T, want *ggufx.Metadata, w written) {
	t.Helper()
	got := w.f.Metadata()
	require.Equal(t, want.Keys(), got.Keys(), "ggufx reads the keys it wrote, in order")
	for k, v := range want.All() {
		g, ok := got.Get(k)
		require.True(t, ok, k)
		assert.Equal(t, fromGGUFX(v), fromGGUFX(g), "ggufx reads %s as written", k)
	}
	kvs := w.gf.Header.MetadataKV
	assert.Equal(t, uint64(got.Len()), w.gf.Header.MetadataKVCount, "metadata count")
	require.Len(t, kvs, got.Len(), "the parser's metadata")
	for i, key := range got.Keys() {
		p := kvs[i]
		assert.Equal(t, key, p.Key, "key %d", i)
		v, _ := got.Get(key)
		assert.Equal(t, uint32(v.Type()), uint32(p.ValueType), "%s: value type number", key)
		assert.Equal(t, v.Type().String(), lower(p.ValueType.String()), "%s: value type name", key)
		pn, err := fromParser(p.ValueType, p.Value)
		require.NoError(t, err, key)
		assert.Equal(t, fromGGUFX(v), pn, "%s: the parser's value is ggufx's", key)
	}
}

// lower is ASCII s in lower case (the parser names value types "Uint8", ggufx "uint8").
func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// assertHeader requires that both readers agree on the header and where the data starts.
func assertHeader(t *testing.T, align int64, w written) {
	t.Helper()
	h := w.f.Header()
	assert.Equal(t, gguf.GGUFMagicGGUFLe, w.gf.Header.Magic)
	assert.Equal(t, uint32(3), h.Version)
	assert.Equal(t, gguf.GGUFVersionV3, w.gf.Header.Version)
	assert.Equal(t, uint64(len(h.Tensors)), w.gf.Header.TensorCount, "tensor count")
	assert.Equal(t, align, h.Alignment, "ggufx's alignment")
	assert.Equal(t, h.DataOffset, w.gf.TensorDataStartOffset, "the data section's start")
	assert.Zero(t, w.gf.TensorDataStartOffset%align, "the data section starts aligned")
	assert.Equal(t, int64(len(w.raw)), int64(w.gf.Size), "file size")
	assert.Equal(t, int64(len(w.raw))-h.DataOffset, int64(w.gf.ModelSize), "data section size")
}

// assertTensorInfos requires that ggufx reads each entry's info as written and that the parser
// reads the same infos: name, rank, dimensions (innermost first), ggml type, offset, bytes.
func assertTensorInfos(t *testing.T, es []ggufx.Entry, align int64, w written) {
	t.Helper()
	tis := w.f.Tensors()
	require.Len(t, tis, len(es), "ggufx's tensors")
	require.Len(t, w.gf.TensorInfos, len(es), "the parser's tensors")
	for i, e := range es {
		ti, p := tis[i], w.gf.TensorInfos[i]
		// ggufx against what was written
		assert.Equal(t, e.Name, ti.Name, "tensor %d", i)
		assert.Equal(t, e.Type, ti.Type, e.Name)
		assert.Equal(t, e.Tensor.Shape(), ti.Shape(), "%s: ggufx's C-order shape", e.Name)
		// the parser against ggufx
		assert.Equal(t, ti.Name, p.Name, "tensor %d", i)
		assert.Equal(t, uint32(len(ti.Dims)), p.NDimensions, "%s: rank", e.Name)
		assert.Equal(t, u64s(ti.Dims), p.Dimensions, "%s: dimensions, innermost first", e.Name)
		fileOrder := e.Tensor.Shape()
		slices.Reverse(fileOrder)
		assert.Equal(t, u64s(fileOrder), p.Dimensions, "%s: the parser's dimensions are the tensor's shape reversed", e.Name)
		assert.Equal(t, uint32(ti.Type), uint32(p.Type), "%s: ggml type number", e.Name)
		assert.Equal(t, ti.Type.String(), p.Type.String(), "%s: ggml type name", e.Name)
		tt, ok := p.Type.Trait()
		require.True(t, ok, "%s: the parser knows %s", e.Name, p.Type)
		assert.Equal(t, uint64(ti.Type.BlockSize()), tt.BlockSize, "%s: block size", e.Name)
		assert.Equal(t, uint64(ti.Type.BlockBytes()), tt.TypeSize, "%s: block bytes", e.Name)
		assert.Equal(t, ti.Type.Quantized(), tt.Quantized, "%s: quantized", e.Name)
		assert.Equal(t, uint64(ti.Offset), p.Offset, "%s: offset in the data section", e.Name)
		assert.Zero(t, p.Offset%uint64(align), "%s: offset aligned", e.Name)
		assert.Equal(t, uint64(ti.Size), p.Bytes(), "%s: bytes", e.Name)
		assert.Equal(t, uint64(ti.Len()), p.Elements(), "%s: elements", e.Name)
	}
}

// assertData requires that the bytes at the parser's absolute offset of each tensor are the
// bytes of ggufx's File.Blocks and, for plain types, File.Tensor, and those the entry's
// tensor holds in C order (want[i]; nil for quantized entries).
func assertData(t *testing.T, es []ggufx.Entry, want [][]byte, w written) {
	t.Helper()
	for i, e := range es {
		p := w.gf.TensorInfos[i]
		at, n := uint64(w.gf.TensorDataStartOffset)+p.Offset, p.Bytes()
		require.LessOrEqual(t, at+n, uint64(len(w.raw)), "%s: the parser's data lies in the file", e.Name)
		atParser := w.raw[at : at+n]

		b, bi, err := w.f.Blocks(e.Name)
		require.NoError(t, err, e.Name)
		bb, err := b.ReadOnlyBytes()
		require.NoError(t, err, e.Name)
		assert.Equal(t, atParser, bb, "%s: File.Blocks holds the bytes at the parser's offset", e.Name)
		assert.Equal(t, int64(p.Bytes()), bi.Blocks*int64(bi.BlockBytes), "%s: blocks", e.Name)
		b.Release()

		if want[i] == nil {
			continue
		}
		x, err := w.f.Tensor(e.Name)
		require.NoError(t, err, e.Name)
		xb, err := x.ReadOnlyBytes()
		require.NoError(t, err, e.Name)
		assert.Equal(t, atParser, xb, "%s: File.Tensor holds the bytes at the parser's offset", e.Name)
		assert.Equal(t, want[i], xb, "%s: the written tensor's bytes in C order", e.Name)
		x.Release()
	}
}

func u64s(xs []int64) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = uint64(x)
	}
	return out
}

// tensorCase is one tensor to write.
type tensorCase struct {
	typ        ggufx.Type
	shape      []int64 // C order, as the core tensor has it
	transposed bool    // written from a transposed (not C-contiguous) view
}

// entries makes an entry of each case, every one with data of its own (so that a tensor read at
// another's offset cannot pass), and the bytes each plain one holds in C order (nil for
// quantized ones).
func entries(t *testing.T, cases []tensorCase) ([]ggufx.Entry, [][]byte) {
	t.Helper()
	es := make([]ggufx.Entry, len(cases))
	want := make([][]byte, len(cases))
	for i, c := range cases {
		name := fmt.Sprintf("blk.%d.%s.rank%d", i, c.typ, len(c.shape))
		shape := slices.Clone(c.shape)
		if c.transposed {
			name += ".T"
			slices.Reverse(shape) // the base; its transpose has c.shape
		}
		var x *core.Tensor
		if c.typ.Quantized() {
			n := int64(1)
			for _, d := range shape {
				n *= d
			}
			data := make([]float32, n)
			for j := range data {
				data[j] = float32(math.Sin(float64(j*7+i*13+1))) * float32(i+1)
			}
			var err error
			x, err = core.FromSlice(data, shape...)
			require.NoError(t, err, name)
		} else {
			dt, ok := c.typ.DType()
			require.True(t, ok, "%s is plain", c.typ)
			x = core.MustNew(dt, shape...)
			b, err := x.Bytes()
			require.NoError(t, err, name)
			for j := range b {
				b[j] = byte(j*31 + i*17 + 1)
			}
		}
		if c.transposed {
			tr, err := x.Transpose()
			require.NoError(t, err, name)
			x = tr
		}
		if c.typ.Quantized() {
			es[i] = ggufx.Quantized(name, x, c.typ)
			continue
		}
		es[i] = ggufx.Plain(name, x)
		require.Equal(t, c.typ, es[i].Type, "%s: Plain stores the dtype's type", name)
		cc, err := memory.Contiguous(x)
		require.NoError(t, err, name)
		cb, err := cc.ReadOnlyBytes()
		require.NoError(t, err, name)
		want[i] = slices.Clone(cb)
		cc.Release()
	}
	return es, want
}
