package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
)

// ggufWeights are the elements of the Q8_0 tensor of writeGGUF: each block's largest magnitude
// is 127, so Q8_0 holds them exactly.
func ggufWeights() []float32 {
	w := make([]float32, 2*32)
	for i := range w {
		w[i] = float32(i%32) - 16
	}
	w[0], w[32] = 127, -127
	return w
}

// writeGGUF writes a small model with ggufx.WriteFile: metadata of several types, plain F32,
// F16 and I32 tensors, a Q8_0 and a Q4_0 one.
func writeGGUF(t testing.TB, path string, extra map[string]any) {
	t.Helper()
	md := &ggufx.Metadata{}
	require.NoError(t, md.Set("general.architecture", "llama"))
	require.NoError(t, md.Set("general.name", "tiny"))
	require.NoError(t, md.Set("llama.context_length", uint32(4096)))
	require.NoError(t, md.Set("llama.rope.freq_base", float32(10000)))
	require.NoError(t, md.Set("odd.nan", float64(math.NaN())))
	require.NoError(t, md.Set("tokenizer.ggml.tokens", []string{"<s>", "</s>", "hello"}))
	for k, v := range extra {
		require.NoError(t, md.Set(k, v))
	}
	q4 := make([]float32, 32)
	for i := range q4 {
		q4[i] = float32(math.Sin(float64(i)))
	}
	half := core.MustFromSlice([]float16.Float16{float16.Frombits(0x3c00), float16.Frombits(0xc000),
		float16.Frombits(0x7e00), float16.Frombits(0x3800)}) // 1, -2, NaN, 0.5
	require.NoError(t, ggufx.WriteFile(path, md, []ggufx.Entry{
		ggufx.Plain("norm.weight", core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)),
		ggufx.Plain("ids", core.MustFromSlice([]int32{7, 8, 9})),
		ggufx.Plain("h", half),
		ggufx.Quantized("attn.weight", core.MustFromSlice(ggufWeights(), 2, 32), ggufx.Q8_0),
		ggufx.Quantized("ffn.weight", core.MustFromSlice(q4, 1, 32), ggufx.Q4_0),
	}))
}

// plainStats is the summary of xs computed directly (NaN excluded).
func plainStats(xs []float32) (lo, hi, mean float64, nan int64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	var sum float64
	var n int64
	for _, x := range xs {
		v := float64(x)
		if math.IsNaN(v) {
			nan++
			continue
		}
		lo, hi, sum, n = math.Min(lo, v), math.Max(hi, v), sum+v, n+1
	}
	return lo, hi, sum / float64(n), nan
}

func TestGGUF(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tiny.gguf")
	writeGGUF(t, path, nil)

	code, out, errs := tensorinfo(path)
	require.Equal(t, 0, code, errs)
	for _, want := range []string{
		path + ` (gguf, 5 arrays; GGUF v3, alignment 32, 6 keys, 5 tensors, general.architecture "llama", general.name "tiny")`,
		"NAME         DTYPE                                 SHAPE    BYTE ORDER     LAYOUT         ELEMENTS  BYTES\n",
		"norm.weight  float32 (F32)                         (2, 3)   little-endian  C (row-major)  6         24\n",
		"ids          int32 (I32)                           (3,)     little-endian  C (row-major)  3         12\n",
		"h            float16 (F16)                         (4,)     little-endian  C (row-major)  4         8\n",
		"attn.weight  float32 (Q8_0, 32 per 34-byte block)  (2, 32)  little-endian  C (row-major)  64        68\n",
		"ffn.weight   float32 (Q4_0, 32 per 18-byte block)  (1, 32)  little-endian  C (row-major)  32        18\n",
	} {
		assert.Contains(t, out, want)
	}

	// summaries: plain tensors over the mapping, quantized ones dequantized
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	q4, err := f.Dequantize("ffn.weight", core.Float32)
	require.NoError(t, err)
	q4s, _, err := core.ReadOnlySpan[float32](q4)
	require.NoError(t, err)
	q4lo, q4hi, q4mean, _ := plainStats(q4s)
	q4.Release()
	require.NoError(t, f.Close())
	w8lo, w8hi, w8mean, _ := plainStats(ggufWeights())
	code, out, errs = tensorinfo("-json", "-stats", path)
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 1)
	for _, c := range []struct {
		name          string
		lo, hi, mean  float64
		nan           int64
		dtype, descr  string
		elems, nbytes int64
	}{
		{"norm.weight", 1, 6, 3.5, 0, "float32", "F32", 6, 24},
		{"ids", 7, 9, 8, 0, "int32", "I32", 3, 12},
		{"h", -2, 1, -0.5 / 3, 1, "float16", "F16", 4, 8},
		{"attn.weight", w8lo, w8hi, w8mean, 0, "float32", "Q8_0, 32 per 34-byte block", 64, 68},
		{"ffn.weight", q4lo, q4hi, q4mean, 0, "float32", "Q4_0, 32 per 18-byte block", 32, 18},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a *arrayReport
			for i := range got[0].Arrays {
				if got[0].Arrays[i].Name == c.name {
					a = &got[0].Arrays[i]
				}
			}
			require.NotNil(t, a)
			assert.Equal(t, c.dtype, a.DType)
			assert.Equal(t, c.descr, a.Descr)
			require.NotNil(t, a.Elements)
			require.NotNil(t, a.Bytes)
			assert.Equal(t, c.elems, *a.Elements)
			assert.Equal(t, c.nbytes, *a.Bytes)
			require.NotNil(t, a.Stats)
			assert.Equal(t, c.lo, a.Stats.Min.v)
			assert.Equal(t, c.hi, a.Stats.Max.v)
			assert.InDelta(t, c.mean, a.Stats.Mean.v, 1e-12)
			assert.Equal(t, c.nan, a.Stats.NaN)
		})
	}
	assert.Equal(t, 127.0, w8hi, "the Q8_0 tensor holds its values exactly")

	// the metadata, every key, arrays as JSON arrays
	var raw []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	assert.Equal(t, map[string]any{
		"general.architecture": "llama", "general.name": "tiny", "llama.context_length": 4096.0,
		"llama.rope.freq_base": 10000.0, "odd.nan": "nan", "tokenizer.ggml.tokens": []any{"<s>", "</s>", "hello"},
	}, raw[0]["metadata"])
	assert.Equal(t, `GGUF v3, alignment 32, 6 keys, 5 tensors, general.architecture "llama", general.name "tiny"`, raw[0]["summary"])
	assert.NotContains(t, raw[0], "shards")

	// excerpts: the view, and the dequantized values
	code, out, errs = tensorinfo("-repr", path)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "\"norm.weight\" =\narray([[1., 2., 3.],\n       [4., 5., 6.]], dtype=float32, readonly=True)\n")
	assert.Contains(t, out, "\"attn.weight\" =\narray([[ 127.,  -15.,  -14.,")

	// without its extension: by its magic
	noext := filepath.Join(dir, "model")
	require.NoError(t, os.Link(path, noext))
	code, out, errs = tensorinfo("-name", "ids", noext)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, noext+" (gguf, 1 array; GGUF v3")
}

// A quantized tensor whose float32 values are beyond the copy limit, or of a type ggufx does not
// dequantize, is listed; -stats shows no summary, -repr says why, and the file is no error.
func TestGGUFNotConverted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tiny.gguf")
	writeGGUF(t, path, nil)
	// a copy whose Q4_0 tensor says IQ4_NL, a type of the same block size and bytes
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	name := []byte("ffn.weight")
	at := bytes.Index(b, name) + len(name) + 4 + 2*8 // the name, the rank, two dimensions
	require.Equal(t, uint32(ggufx.Q4_0), uint32(b[at])|uint32(b[at+1])<<8)
	b[at] = byte(ggufx.IQ4_NL)
	iq := filepath.Join(dir, "iq.gguf")
	require.NoError(t, os.WriteFile(iq, b, 0o644))

	code, out, errs := tensorinfo("-stats", "-repr", "-name", "ffn.weight", iq)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ffn.weight  float32 (IQ4_NL, 32 per 18-byte block)  (1, 32)  little-endian  C (row-major)  32        18     -    -    -     -\n")
	assert.Contains(t, out, "(not shown: ggufx does not dequantize IQ4_NL, so this tool does not convert it)")

	defer func(old int64) { copyLimit = old }(copyLimit)
	copyLimit = 200 // attn.weight dequantizes to 256 bytes, ffn.weight to 128
	code, out, errs = tensorinfo("-json", "-stats", "-repr", path)
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	for _, a := range got[0].Arrays {
		switch a.Name {
		case "attn.weight":
			assert.Nil(t, a.Stats)
			assert.Equal(t, "(not shown: dequantized to float32 it would hold 256 bytes, more than this tool reads into memory (200))", a.Repr)
		default:
			assert.NotNil(t, a.Stats, a.Name)
			assert.True(t, strings.HasPrefix(a.Repr, "array("), a.Name)
		}
	}
	code, _, errs = tensorinfo("-stats", path) // a summary alone: no error either
	assert.Equal(t, 0, code, errs)
}

// The first shard of a split model lists every shard's tensors; another shard is listed alone.
func TestGGUFSplit(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "model")
	md0 := &ggufx.Metadata{}
	require.NoError(t, md0.Set("general.architecture", "llama"))
	require.NoError(t, md0.Set(ggufx.SplitNoKey, uint16(0)))
	require.NoError(t, md0.Set(ggufx.SplitCountKey, uint16(2)))
	require.NoError(t, md0.Set(ggufx.SplitTensorsCountKey, int32(3)))
	require.NoError(t, ggufx.WriteFile(ggufx.SplitPath(prefix, 0, 2), md0, []ggufx.Entry{
		ggufx.Plain("a", core.MustFromSlice([]float32{1, 2})),
		ggufx.Plain("b", core.MustFromSlice([]int64{3})),
	}))
	md1 := &ggufx.Metadata{}
	require.NoError(t, md1.Set(ggufx.SplitNoKey, uint16(1)))
	require.NoError(t, md1.Set(ggufx.SplitCountKey, uint16(2)))
	second := ggufx.SplitPath(prefix, 1, 2)
	require.NoError(t, ggufx.WriteFile(second, md1, []ggufx.Entry{
		ggufx.Quantized("c", core.MustFromSlice(ggufWeights(), 2, 32), ggufx.Q8_0),
	}))
	first := ggufx.SplitPath(prefix, 0, 2)

	code, out, errs := tensorinfo("-stats", first, second)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, first+` (gguf, 3 arrays; GGUF v3, alignment 32, 4 keys, 3 tensors, 2 shards, general.architecture "llama")`)
	assert.Contains(t, out, "c     float32 (Q8_0, 32 per 34-byte block)  (2, 32)  little-endian  C (row-major)  64        68     -127  127")
	assert.Contains(t, out, second+" (gguf, 1 array; GGUF v3, alignment 32, 2 keys, 1 tensors, shard 2 of 2)")

	code, out, errs = tensorinfo("-json", first)
	require.Equal(t, 0, code, errs)
	var got []fileReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, []string{"model-00001-of-00002.gguf", "model-00002-of-00002.gguf"}, got[0].Shards)
	names := []string{}
	for _, a := range got[0].Arrays {
		names = append(names, a.Name)
	}
	assert.Equal(t, []string{"a", "b", "c"}, names)

	// a missing shard: the first one's error says which
	require.NoError(t, os.Remove(second))
	code, _, errs = tensorinfo(first)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "tensorinfo: "+first+": ggufx: open "+second)
	assert.Contains(t, errs, "(shard 2 of 2)")
	_, err := inspect(first, options{})
	assert.ErrorIs(t, err, ggufx.ErrSplit)
}

func TestGGUFHostile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tiny.gguf")
	writeGGUF(t, good, nil)
	b, err := os.ReadFile(good)
	require.NoError(t, err)
	v1 := bytes.Clone(b)
	v1[4] = 1
	huge := bytes.Clone(b)
	copy(huge[8:16], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}) // a tensor count past what the file holds
	for _, c := range []struct {
		file string
		data []byte
		want error
		msg  string
	}{
		{"cut.gguf", b[:len(b)-60], ggufx.ErrLayout, "ggufx:"},
		{"header.gguf", b[:40], ggufx.ErrHeader, "ggufx:"},
		{"v1.gguf", v1, ggufx.ErrVersion, "ggufx:"},
		{"count.gguf", huge, ggufx.ErrHeader, "ggufx:"},
		{"text.gguf", []byte("not a gguf file at all"), ggufx.ErrFormat, "ggufx:"},
		{"empty.gguf", nil, ggufx.ErrFormat, "ggufx:"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			require.NoError(t, os.WriteFile(path, c.data, 0o644))
			code, out, errs := tensorinfo("-stats", "-repr", path, good)
			assert.Equal(t, 1, code)
			namesFileOnce(t, errs, path)
			assert.Contains(t, errs, c.msg)
			assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
			assert.Contains(t, out, good+" (gguf, 5 arrays", "the other file is still shown")
			_, err := inspect(path, options{stats: true, repr: true})
			assert.ErrorIs(t, err, c.want)
		})
	}
}

// -json writes a metadata array as a JSON array of its elements, whatever their type: floats
// (NaN as "nan"), bytes (as numbers, not base64), arrays of arrays.
func TestGGUFMetadataArraysInJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "arrays.gguf")
	inner1, err := ggufx.ValueOf([]int32{1, 2})
	require.NoError(t, err)
	inner2, err := ggufx.ValueOf([]int32{3})
	require.NoError(t, err)
	writeGGUF(t, path, map[string]any{
		"a.f32":    []float32{0.5, float32(math.NaN())},
		"a.u8":     []uint8{1, 255},
		"a.bool":   []bool{true, false},
		"a.nested": []ggufx.Value{inner1, inner2},
	})
	code, out, errs := tensorinfo("-json", path)
	require.Equal(t, 0, code, errs)
	var raw []struct {
		Metadata map[string]any `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	md := raw[0].Metadata
	assert.Equal(t, []any{0.5, "nan"}, md["a.f32"])
	assert.Equal(t, []any{1.0, 255.0}, md["a.u8"])
	assert.Equal(t, []any{true, false}, md["a.bool"])
	assert.Equal(t, []any{[]any{1.0, 2.0}, []any{3.0}}, md["a.nested"])
	assert.Equal(t, []any{"<s>", "</s>", "hello"}, md["tokenizer.ggml.tokens"])
}
