package ggufx_test

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/internal/nodetest"
)

// nodePackage is the independent parser the tests run: Hugging Face's GGUF reader for
// JavaScript, installed with npm into the user's cache (internal/nodetest).
const nodePackage = "@huggingface/gguf@0.4.6"

// nodeReader prints what @huggingface/gguf reads from argv[1]: every typed metadata entry in
// order (64-bit integers as strings, non-finite floats as their names), the tensor infos and
// where the data section starts.
const nodeReader = `
const { gguf } = require("@huggingface/gguf");
const conv = (v) => typeof v === "bigint" ? v.toString()
  : typeof v === "number" && !Number.isFinite(v) ? String(v)
  : Array.isArray(v) ? v.map(conv) : v;
gguf(process.argv[1], { allowLocalFile: true, typedMetadata: true }).then((r) => {
  const meta = Object.entries(r.typedMetadata).map(([k, e]) => ({ key: k, type: e.type, subType: e.subType ?? null, value: conv(e.value) }));
  const tensors = r.tensorInfos.map((t) => ({ name: t.name, n_dims: t.n_dims, shape: t.shape.map(String), dtype: t.dtype, offset: String(t.offset) }));
  console.log(JSON.stringify({ meta, tensors, dataOffset: String(r.tensorDataOffset) }));
}).catch((e) => { console.error(e); process.exit(1); });
`

// nodeForm is v as nodeReader prints it.
func nodeForm(v ggufx.Value) any {
	num := func(f float64) any {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return map[bool]string{true: "Infinity", false: "-Infinity"}[f > 0]
		}
		return f
	}
	switch x := v.Any().(type) {
	case uint8:
		return float64(x)
	case int8:
		return float64(x)
	case uint16:
		return float64(x)
	case int16:
		return float64(x)
	case uint32:
		return float64(x)
	case int32:
		return float64(x)
	case float32:
		return num(float64(x))
	case float64:
		return num(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool, string:
		return x
	}
	out := make([]any, v.Len())
	for i := range out {
		e, _ := v.Index(i)
		out[i] = nodeForm(e)
	}
	return out
}

// TestNodeReadsWrite: what Write writes, @huggingface/gguf reads the same: every metadata key
// in order with its type, element type and value, every tensor's name, rank, dimensions, type
// and offset, and the start of the data section. It needs Node and npm (and the npm registry, to
// install the package once into the user's cache): without them it fails in CI and is skipped
// elsewhere.
func TestNodeReadsWrite(t *testing.T) {
	node := nodetest.Install(t, nodePackage)
	dir := t.TempDir()

	md := allValues(t)
	require.NoError(t, md.Set(ggufx.AlignmentKey, uint32(64)))
	es, _ := plainTensors(t)
	q := core.MustNew(core.Float32, 3, 64)
	es = append(es, ggufx.Quantized("q8", q, ggufx.Q8_0), ggufx.Quantized("q4", q, ggufx.Q4_0))
	path := filepath.Join(dir, "w.gguf")
	require.NoError(t, ggufx.WriteFile(path, md, es))

	js := node.Run(t, nodeReader, path)
	var got nodeReading
	require.NoError(t, json.Unmarshal(js, &got))

	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, got.Meta, 3+md.Len(), "version, tensor_count and kv_count, then the file's pairs")
	assert.Equal(t, []any{float64(3), strconv.Itoa(len(es)), strconv.Itoa(md.Len())}, []any{got.Meta[0].Value, got.Meta[1].Value, got.Meta[2].Value})
	t.Run("meta", func(t *testing.T) {
		for i, key := range md.Keys() {
			t.Run(key, func(t *testing.T) {
				g := got.Meta[3+i]
				v, _ := md.Get(key)
				require.Equal(t, key, g.Key, "key %d", i)
				assert.Equal(t, v.Type(), g.Type, key)
				if v.Type() == ggufx.TypeArray {
					require.NotNil(t, g.SubType, key)
					assert.Equal(t, v.ElemType(), *g.SubType, key)
				}
				assert.Equal(t, nodeForm(v), g.Value, key)
			})
		}
	})
	require.Len(t, got.Tensors, len(es))
	got.sameTensors(t, f)
}

// nodeReading is what nodeReader prints.
type nodeReading struct {
	Meta []struct {
		Key     string           `json:"key"`
		Type    ggufx.ValueType  `json:"type"`
		SubType *ggufx.ValueType `json:"subType"`
		Value   any              `json:"value"`
	} `json:"meta"`
	Tensors []struct {
		Name   string   `json:"name"`
		NDims  int      `json:"n_dims"`
		Shape  []string `json:"shape"`
		DType  uint32   `json:"dtype"`
		Offset string   `json:"offset"`
	} `json:"tensors"`
	DataOffset string `json:"dataOffset"`
}

// sameTensors asserts that @huggingface/gguf read f's tensor infos as ggufx did: names, ranks,
// dimensions, raw type numbers, offsets, and the start of the data section.
func (got nodeReading) sameTensors(t *testing.T, f *ggufx.File) {
	t.Helper()
	require.Len(t, got.Tensors, len(f.Tensors()))
	t.Run("tensor", func(t *testing.T) { got.eachTensor(t, f) })
	assert.Equal(t, strconv.FormatInt(f.Header().DataOffset, 10), got.DataOffset)
}

func (got nodeReading) eachTensor(t *testing.T, f *ggufx.File) {
	for i, ti := range f.Tensors() {
		t.Run(ti.Name, func(t *testing.T) {
			g := got.Tensors[i]
			assert.Equal(t, ti.Name, g.Name)
			assert.Equal(t, len(ti.Dims), g.NDims, ti.Name)
			dims := make([]string, len(ti.Dims))
			for j, d := range ti.Dims {
				dims[j] = strconv.FormatInt(d, 10)
			}
			assert.Equal(t, dims, g.Shape, ti.Name)
			assert.Equal(t, uint32(ti.Type), g.DType, ti.Name)
			assert.Equal(t, strconv.FormatInt(ti.Offset, 10), g.Offset, ti.Name)
		})
	}
}

// TestNodeReadsUnknownTypes: a file of ggml's 2026 types (NVFP4, Q1_0, Q2_0), an unknown type
// number, a removed one and a fork's layout under 42 lists in @huggingface/gguf as in ggufx:
// the same names, dimensions, raw type numbers and offsets.
func TestNodeReadsUnknownTypes(t *testing.T) {
	node := nodetest.Install(t, nodePackage)
	path := file(t, mixedFile())
	var got nodeReading
	require.NoError(t, json.Unmarshal(node.Run(t, nodeReader, path), &got))
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	got.sameTensors(t, f)
}
