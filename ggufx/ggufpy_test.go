package ggufx_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// ggufPy runs testdata/ggufpy.py (llama.cpp's Python package gguf, from the project's
// virtualenv) with args and returns what it printed.
func ggufPy(t *testing.T, args ...string) []byte {
	t.Helper()
	py := refcheck.Venv(t)
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "ggufpy.py")}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && bytes.Contains(stderr.Bytes(), []byte("No module named")) {
		refcheck.Unavailable(t, "the gguf package in %s: %s", py, stderr.String())
	}
	require.NoError(t, err, "ggufpy.py %v: %s", args, stderr.String())
	return out
}

// TestReadGGUFPyWriter: a file llama.cpp's GGUFWriter (gguf 0.19.0) writes reads exactly:
// every metadata pair in order with its type, element type and value (arrays of every type,
// arrays of arrays), every tensor's name, shape and bytes, of every plain type and of every
// quantized type gguf knows (quantized by gguf.quants or random blocks). The one type whose
// blocks gguf sizes unlike ggml, Q8_1 (40 bytes in gguf, 36 in ggml's block_q8_1), is not read
// with ggml's layout: its tensor is refused, the others read.
func TestReadGGUFPyWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "py.gguf")
	var m struct {
		Meta    [][3]json.RawMessage `json:"meta"`
		Tensors []pyTensor           `json:"tensors"`
	}
	require.NoError(t, json.Unmarshal(ggufPy(t, "write", path), &m))
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	md := f.Metadata()
	require.Equal(t, len(m.Meta), md.Len())
	t.Run("meta", func(t *testing.T) {
		for i, kv := range m.Meta {
			var key string
			require.NoError(t, json.Unmarshal(kv[0], &key))
			t.Run(key, func(t *testing.T) {
				var typ ggufx.ValueType
				require.NoError(t, json.Unmarshal(kv[1], &typ))
				require.Equal(t, key, md.Keys()[i], "file order")
				v, _ := md.Get(key)
				assert.Equal(t, typ, v.Type(), key)
				assert.JSONEq(t, string(kv[2]), jsonOf(manifestForm(v)), key)
			})
		}
	})
	require.Len(t, f.Tensors(), len(m.Tensors))
	types := map[ggufx.Type]bool{}
	t.Run("tensor", func(t *testing.T) {
		for i, pt := range m.Tensors {
			t.Run(pt.Name, func(t *testing.T) { readGGUFPyTensor(t, f, f.Tensors()[i], pt, types) })
		}
	})
	for _, typ := range []ggufx.Type{ggufx.BF16, ggufx.Q4_0, ggufx.Q8_0, ggufx.Q4_K, ggufx.IQ2_XXS, ggufx.TQ2_0, ggufx.MXFP4, ggufx.NVFP4, ggufx.Q1_0} {
		assert.True(t, types[typ], "gguf wrote no %s", typ)
	}
}

// pyTensor is a tensor of testdata/ggufpy.py's manifest.
type pyTensor struct {
	Name       string  `json:"name"`
	Type       *uint32 `json:"type"`
	Shape      []int64 `json:"shape"`
	BlockBytes int     `json:"blockBytes"`
	Raw        string  `json:"raw"`
	Rows       string  `json:"rows"`
}

// readGGUFPyTensor checks one tensor GGUFWriter wrote: its info, its bytes (blocks and view),
// and Write's quantization of the rows gguf quantized.
func readGGUFPyTensor(t *testing.T, f *ggufx.File, ti ggufx.TensorInfo, pt pyTensor, types map[ggufx.Type]bool) {
	require.Equal(t, pt.Name, ti.Name)
	assert.Equal(t, pt.Shape, ti.Shape(), pt.Name)
	want, err := os.ReadFile(pt.Raw)
	require.NoError(t, err)
	if pt.Type != nil {
		assert.Equal(t, ggufx.Type(*pt.Type), ti.Type, pt.Name)
		types[ti.Type] = true
		if pt.BlockBytes != ti.Type.BlockBytes() {
			require.Equal(t, ggufx.Q8_1, ti.Type, "%s: gguf's blocks of %d bytes", pt.Name, pt.BlockBytes)
			require.ErrorIs(t, ti.Err, ggufx.ErrType)
			assert.Contains(t, ti.Err.Error(), "type 9 is 32 elements in 36 bytes in ggml, and its 16 blocks take 576 bytes, not the 640 before the next tensor")
			t.Skipf("only gguf-py fails: gguf 0.19.0 sizes Q8_1 blocks at %d bytes, ggml's block_q8_1 is 36 (ggufx refuses the tensor, as checked)", pt.BlockBytes)
		}
	}
	require.NoError(t, ti.Err, pt.Name)
	b, _, err := f.Blocks(pt.Name)
	require.NoError(t, err)
	got, err := b.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, want, got, pt.Name)
	b.Release()
	if pt.Rows != "" && (ti.Type == ggufx.Q8_0 || ti.Type == ggufx.Q4_0) {
		// Write quantizes the same rows into the same blocks as gguf.quants
		rows, err := os.ReadFile(pt.Rows)
		require.NoError(t, err)
		src, err := core.FromSlice(float32sOf(rows), ti.Shape()...)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, ggufx.Write(&buf, nil, []ggufx.Entry{ggufx.Quantized("q", src, ti.Type)}))
		g, err := ggufx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err)
		qb, _, err := g.Blocks("q")
		require.NoError(t, err)
		mine, err := qb.ReadOnlyBytes()
		require.NoError(t, err)
		assert.Equal(t, want, mine, "%s: Write's blocks differ from gguf.quants'", pt.Name)
		qb.Release()
	}
	if pt.Type == nil || !ti.Type.Quantized() {
		x, err := f.Tensor(pt.Name)
		require.NoError(t, err, pt.Name)
		got, err := x.ReadOnlyBytes()
		require.NoError(t, err)
		assert.Equal(t, want, got, pt.Name)
		x.Release()
	}
}

// pyReading is what testdata/ggufpy.py read prints of a file GGUFReader read.
type pyReading struct {
	Version   uint32 `json:"version"`
	Alignment int64  `json:"alignment"`
	Fields    []struct {
		Key   string            `json:"key"`
		Types []ggufx.ValueType `json:"types"`
		Value json.RawMessage   `json:"value"`
	} `json:"fields"`
	Tensors []struct {
		Name     string  `json:"name"`
		Type     uint32  `json:"type"`
		Shape    []int64 `json:"shape"`
		Elements int64   `json:"elements"`
		Bytes    int64   `json:"bytes"`
		Offset   int64   `json:"offset"`
		SHA256   string  `json:"sha256"`
	} `json:"tensors"`
}

// readerForm is v as GGUFReader gives it: its types (an array's, then its first element's
// down to the scalars; none after an empty array's) and its contents (nested arrays flattened), in the manifest's form.
func readerForm(v ggufx.Value) (types []ggufx.ValueType, flat []any) {
	types = []ggufx.ValueType{v.Type()}
	if v.Type() != ggufx.TypeArray {
		return types, []any{manifestForm(v)}
	}
	for e := v; e.Type() == ggufx.TypeArray && e.Len() > 0; { // of an empty array, GGUFReader gives no element type
		types = append(types, e.ElemType())
		first, ok := e.Index(0)
		if e.ElemType() != ggufx.TypeArray || !ok {
			break
		}
		e = first
	}
	var walk func(v ggufx.Value)
	walk = func(v ggufx.Value) {
		for i := range v.Len() {
			e, _ := v.Index(i)
			if e.Type() == ggufx.TypeArray {
				walk(e)
			} else {
				flat = append(flat, manifestForm(e))
			}
		}
	}
	walk(v)
	return types, flat
}

// TestGGUFPyReadsWrite: what Write writes, llama.cpp's GGUFReader (gguf 0.19.0) reads the
// same: the version and alignment, every metadata pair in order with its types and value,
// every tensor's type, dimensions, elements, bytes, data offset and data (SHA-256), for every
// plain type and for Q8_0 and Q4_0.
func TestGGUFPyReadsWrite(t *testing.T) {
	md := allValues(t)
	require.NoError(t, md.Set(ggufx.AlignmentKey, uint32(64)))
	es, _ := plainTensors(t)
	q := core.MustNew(core.Float32, 3, 64)
	qv, err := q.Float32s()
	require.NoError(t, err)
	for i := range qv {
		qv[i] = float32(i%17) - 8.25
	}
	es = append(es, ggufx.Quantized("q8", q, ggufx.Q8_0), ggufx.Quantized("q4", q, ggufx.Q4_0))
	path := filepath.Join(t.TempDir(), "w.gguf")
	require.NoError(t, ggufx.WriteFile(path, md, es))

	var r pyReading
	require.NoError(t, json.Unmarshal(ggufPy(t, "read", path), &r))
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, uint32(3), r.Version)
	assert.Equal(t, int64(64), r.Alignment)
	require.Len(t, r.Fields, md.Len())
	t.Run("meta", func(t *testing.T) {
		for i, key := range md.Keys() {
			t.Run(key, func(t *testing.T) {
				g := r.Fields[i]
				require.Equal(t, key, g.Key, "field %d", i)
				v, _ := md.Get(key)
				types, flat := readerForm(v)
				assert.Equal(t, types, g.Types, key)
				if v.Type() == ggufx.TypeArray {
					if flat == nil {
						flat = []any{}
					}
					assert.JSONEq(t, jsonOf(flat), string(g.Value), key)
				} else {
					assert.JSONEq(t, jsonOf(flat[0]), string(g.Value), key)
				}
			})
		}
	})
	require.Len(t, r.Tensors, len(f.Tensors()))
	t.Run("tensor", func(t *testing.T) {
		for i, ti := range f.Tensors() {
			t.Run(ti.Name, func(t *testing.T) {
				g := r.Tensors[i]
				require.Equal(t, ti.Name, g.Name)
				assert.Equal(t, uint32(ti.Type), g.Type, ti.Name)
				assert.Equal(t, ti.Len(), g.Elements, ti.Name)
				assert.Equal(t, ti.Size, g.Bytes, ti.Name)
				assert.Equal(t, f.Header().DataOffset+ti.Offset, g.Offset, ti.Name)
				if len(ti.Dims) > 0 {
					assert.Equal(t, ti.Dims, g.Shape, ti.Name)
				}
				b, _, err := f.Blocks(ti.Name)
				require.NoError(t, err)
				got, err := b.ReadOnlyBytes()
				require.NoError(t, err)
				sum := sha256.Sum256(got)
				assert.Equal(t, hex.EncodeToString(sum[:]), g.SHA256, ti.Name)
				b.Release()
			})
		}
	})
}

// float32sOf decodes little-endian float32s.
func float32sOf(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
