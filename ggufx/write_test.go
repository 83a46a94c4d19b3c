package ggufx_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/memory"
)

// allValues is metadata with a value of every type, arrays of each, and nested arrays.
func allValues(t testing.TB) *ggufx.Metadata {
	md := &ggufx.Metadata{}
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", "llama"}, {"u8", uint8(250)}, {"i8", int8(-7)}, {"u16", uint16(65000)},
		{"i16", int16(-300)}, {"u32", uint32(4e9)}, {"i32", int32(-1 << 30)}, {"f32", float32(0.1)},
		{"bool", true}, {"str", "snow ☃ \x00 \n"}, {"u64", uint64(1 << 63)}, {"i64", int64(-1 << 62)},
		{"f64", math.Pi}, {"empty", ""},
		{"a.u8", []uint8{1, 2}}, {"a.i8", []int8{-1}}, {"a.u16", []uint16{3}}, {"a.i16", []int16{-4, 5}},
		{"a.u32", []uint32{6}}, {"a.i32", []int32{-7}}, {"a.f32", []float32{1.5, float32(math.Inf(-1))}},
		{"a.bool", []bool{true, false}}, {"a.str", []string{"x", "", "ü"}}, {"a.u64", []uint64{8}},
		{"a.i64", []int64{-9}}, {"a.f64", []float64{2.5}}, {"a.empty", []string{}},
		{"a.nested", []ggufx.Value{ggufx.MustValueOf([]int32{1, 2}), ggufx.MustValueOf([]int32{}), ggufx.MustValueOf([]int32{3})}},
		{"a.deep", []ggufx.Value{ggufx.MustValueOf([]ggufx.Value{ggufx.MustValueOf([]string{"in"})})}},
	} {
		require.NoError(t, md.Set(kv.k, kv.v))
	}
	return md
}

// plainTensors are tensors of every plain dtype, some of them not C-contiguous.
func plainTensors(t testing.TB) ([]ggufx.Entry, map[string][]byte) {
	var es []ggufx.Entry
	want := map[string][]byte{}
	for i, dt := range []core.DLDataType{core.Float32, core.Float16, core.BFloat16, core.Float64, core.Int8, core.Int16, core.Int32, core.Int64} {
		x := core.MustNew(dt, 3, 5)
		b, err := x.Bytes()
		require.NoError(t, err)
		for j := range b {
			b[j] = byte(j*7 + i)
		}
		name := "t." + dt.String()
		if i%2 == 1 { // a transposed view: written in C order
			tr, err := x.Transpose()
			require.NoError(t, err)
			c, err := memory.Contiguous(tr)
			require.NoError(t, err)
			cb, err := c.ReadOnlyBytes()
			require.NoError(t, err)
			want[name] = cb
			x = tr
		} else {
			want[name] = b
		}
		es = append(es, ggufx.Plain(name, x))
	}
	es = append(es, ggufx.Plain("scalar", core.MustNew(core.Float32)), ggufx.Plain("empty", core.MustNew(core.Int8, 0, 3)))
	want["scalar"], want["empty"] = make([]byte, 4), []byte{}
	return es, want
}

func TestWriteRoundTrip(t *testing.T) {
	md := allValues(t)
	es, want := plainTensors(t)
	path := filepath.Join(t.TempDir(), "rt.gguf")
	require.NoError(t, ggufx.WriteFile(path, md, es))
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, uint32(3), f.Version())
	assert.Equal(t, md.Keys(), f.Metadata().Keys())
	for k, v := range md.All() {
		got, ok := f.Metadata().Get(k)
		require.True(t, ok, k)
		assert.Equal(t, v, got, k)
	}
	assert.Equal(t, len(es), len(f.Tensors()))
	for i, e := range es {
		ti := f.Tensors()[i]
		assert.Equal(t, e.Name, ti.Name, "file order is the entries' order")
		assert.Zero(t, ti.Offset%32)
		x, err := f.Tensor(e.Name)
		require.NoError(t, err)
		assert.Equal(t, e.Tensor.Shape(), x.Shape(), e.Name)
		assert.Equal(t, e.Tensor.DType(), x.DType(), e.Name)
		b, err := x.ReadOnlyBytes()
		require.NoError(t, err)
		assert.Equal(t, want[e.Name], b, e.Name)
	}
	// Write and WriteFile write the same bytes
	var buf bytes.Buffer
	require.NoError(t, ggufx.Write(&buf, md, es))
	onDisk, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, onDisk, buf.Bytes())
	assert.Zero(t, len(onDisk)%32, "the last tensor is padded too")
}

// Hand-made inputs that each quantizer represents exactly.
func TestWriteQuantizedExact(t *testing.T) {
	x8 := make([]float32, 64) // Q8_0: max |x| = 127 makes d = 1
	x4 := make([]float32, 64) // Q4_0: the largest magnitude -8 makes d = 1
	for j := range 64 {
		x8[j] = float32(j*37%255 - 127)
		x4[j] = float32(j*5%16 - 8)
	}
	x8[0], x8[32], x4[0], x4[32] = 127, -127, -8, -8
	t8, err := core.FromSlice(x8, 2, 32)
	require.NoError(t, err)
	t4, err := core.FromSlice(x4, 1, 64)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "q.gguf")
	require.NoError(t, ggufx.WriteFile(path, nil, []ggufx.Entry{ggufx.Quantized("q8", t8, ggufx.Q8_0), ggufx.Quantized("q4", t4, ggufx.Q4_0)}))
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	for name, want := range map[string][]float32{"q8": x8, "q4": x4} {
		d, err := f.Dequantize(name, core.Float32)
		require.NoError(t, err)
		got, err := d.Float32s()
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
	b, bi, err := f.Blocks("q4")
	require.NoError(t, err)
	raw, err := b.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 18}, b.Shape())
	assert.Equal(t, []int64{1, 64}, bi.Shape)
	assert.Equal(t, float16.Fromfloat32(1).Bits(), uint16(raw[0])|uint16(raw[1])<<8, "d = -8/-8")
	assert.Equal(t, byte(0|(uint8(x4[16]+8))<<4), raw[2], "element 0 (q 0) low, element 16 high")
}

// Random floats quantize to within half a step of the block's scale.
func TestWriteQuantizedError(t *testing.T) {
	x := make([]float32, 32*64)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.37) * float64(1+i%7))
	}
	src, err := core.FromSlice(x, 64, 32)
	require.NoError(t, err)
	tr, err := src.Transpose() // not contiguous: quantized from a C-order copy
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, ggufx.Write(&buf, nil, []ggufx.Entry{ggufx.Quantized("q8", src, ggufx.Q8_0), ggufx.Quantized("q4", src, ggufx.Q4_0), ggufx.Quantized("t8", tr, ggufx.Q8_0)}))
	f, err := ggufx.Open(file(t, buf.Bytes()))
	require.NoError(t, err)
	defer f.Close()
	ct, err := memory.Contiguous(tr)
	require.NoError(t, err)
	xt, err := ct.Float32s()
	require.NoError(t, err)
	for name, steps := range map[string]float32{"q8": 127, "q4": 8, "t8": 127} {
		ref := x
		if name == "t8" {
			ref = xt
		}
		d, err := f.Dequantize(name, core.Float32)
		require.NoError(t, err)
		got, err := d.Float32s()
		require.NoError(t, err)
		for b := 0; b < len(ref); b += 32 {
			amax := float32(0)
			for _, v := range ref[b : b+32] {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			tol := amax / steps * 1.01 // one step (Q4_0's asymmetric range), plus d's rounding to a half
			for j := b; j < b+32; j++ {
				require.InDelta(t, ref[j], got[j], float64(tol), "%s element %d", name, j)
			}
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	f32 := core.MustNew(core.Float32, 2, 32)
	nan := core.MustNew(core.Float32, 1, 32)
	v, _ := nan.Float32s()
	v[5] = float32(math.NaN())
	released := core.MustNew(core.Float32, 1)
	released.Release()
	badAlign := &ggufx.Metadata{}
	require.NoError(t, badAlign.Set(ggufx.AlignmentKey, uint32(24))) // a multiple of 8 (read), not a power of 2 (written)
	for _, tc := range []struct {
		name string
		md   *ggufx.Metadata
		es   []ggufx.Entry
		want error
		msg  string
	}{
		{"empty name", nil, []ggufx.Entry{ggufx.Plain("", f32)}, ggufx.ErrName, "empty name"},
		{"long name", nil, []ggufx.Entry{ggufx.Plain(string(make([]byte, 64)), f32)}, ggufx.ErrName, "64 bytes, over 63"},
		{"twice", nil, []ggufx.Entry{ggufx.Plain("a", f32), ggufx.Plain("a", f32)}, ggufx.ErrName, `"a" given twice`},
		{"nil", nil, []ggufx.Entry{ggufx.Plain("a", nil)}, core.ErrNil, `"a"`},
		{"released", nil, []ggufx.Entry{ggufx.Plain("a", released)}, core.ErrReleased, `"a"`},
		{"uint8", nil, []ggufx.Entry{ggufx.Plain("a", core.MustNew(core.Uint8, 2))}, ggufx.ErrType, "uint8 has no ggml type"},
		{"mismatch", nil, []ggufx.Entry{{Name: "a", Tensor: f32, Type: ggufx.F16}}, ggufx.ErrType, "is float32, but its entry stores it as F16"},
		{"q4 of f16", nil, []ggufx.Entry{ggufx.Quantized("a", core.MustNew(core.Float16, 32), ggufx.Q4_0)}, ggufx.ErrType, "quantized from float32 only"},
		{"q8 row", nil, []ggufx.Entry{ggufx.Quantized("a", core.MustNew(core.Float32, 32, 3), ggufx.Q8_0)}, ggufx.ErrType, "multiple of 32"},
		{"q4_k", nil, []ggufx.Entry{ggufx.Quantized("a", f32, ggufx.Q4_K)}, ggufx.ErrType, "not Q4_K"},
		{"nan", nil, []ggufx.Entry{ggufx.Quantized("a", nan, ggufx.Q8_0)}, ggufx.ErrType, "element 5 is NaN"},
		{"rank", nil, []ggufx.Entry{ggufx.Plain("a", core.MustNew(core.Float32, 1, 1, 1, 1, 1))}, ggufx.ErrType, "5 dimensions"},
		{"alignment", badAlign, nil, ggufx.ErrHeader, "general.alignment is uint32 24, not a uint32 power of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := ggufx.WriteFile(filepath.Join(dir, "x.gguf"), tc.md, tc.es)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
			assert.NoError(t, errstest.Check(err, sentinels...))
			left, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, left, "nothing left behind")
		})
	}
}

// WriteFile over a file that is mapped leaves the old tensors valid, and general.alignment is
// honoured.
func TestWriteFileOverMapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	old, err := core.FromSlice([]float32{1, 2, 3}, 3)
	require.NoError(t, err)
	require.NoError(t, ggufx.WriteFile(path, nil, []ggufx.Entry{ggufx.Plain("w", old)}))
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := f.Tensor("w")
	require.NoError(t, err)
	md := &ggufx.Metadata{}
	require.NoError(t, md.Set(ggufx.AlignmentKey, uint32(64)))
	next, err := core.FromSlice([]float32{9, 9, 9, 9}, 4)
	require.NoError(t, err)
	require.NoError(t, ggufx.WriteFile(path, md, []ggufx.Entry{ggufx.Plain("a", old), ggufx.Plain("w", next)}))
	v, err := w.ReadOnlyFloat32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, v)
	g, err := ggufx.Open(path)
	require.NoError(t, err)
	defer g.Close()
	assert.Equal(t, int64(64), g.Header().Alignment)
	wi, err := g.Info("w")
	require.NoError(t, err)
	assert.Equal(t, int64(64), wi.Offset)
	assert.Zero(t, g.Header().DataOffset%64)
}

func TestValueOf(t *testing.T) {
	_, err := ggufx.ValueOf(3)
	require.ErrorIs(t, err, ggufx.ErrValueType)
	assert.Contains(t, err.Error(), "Go's int")
	_, err = ggufx.ValueOf([]ggufx.Value{ggufx.MustValueOf(uint8(1)), ggufx.MustValueOf("x")})
	require.ErrorIs(t, err, ggufx.ErrValueType)
	assert.Contains(t, err.Error(), "element 1 is string, element 0 is uint8")
	v, err := ggufx.ValueOf([]ggufx.Value{ggufx.MustValueOf(uint8(1)), ggufx.MustValueOf(uint8(2))})
	require.NoError(t, err)
	assert.Equal(t, []uint8{1, 2}, v.Any())
	md := &ggufx.Metadata{}
	require.NoError(t, md.Set("a", "x"))
	require.NoError(t, md.Set("b", uint32(1)))
	require.NoError(t, md.Set("a", "y"))
	assert.Equal(t, []string{"a", "b"}, md.Keys())
	md.Delete("a")
	assert.Equal(t, []string{"b"}, md.Keys())
	_, ok := md.Get("a")
	assert.False(t, ok)
	require.ErrorIs(t, md.Set("", uint8(1)), ggufx.ErrName)
	assert.Equal(t, uint8(0), ggufx.MustValueOf(ggufx.Value{}).Any())

	// ValueOf nests as deep as the parser reads, and no deeper
	v = ggufx.MustValueOf([]uint8{7}) // depth 1
	for range ggufx.MaxDepth - 1 {
		v = ggufx.MustValueOf([]ggufx.Value{v})
	}
	require.NoError(t, md.Set("deep", v))
	var buf bytes.Buffer
	require.NoError(t, ggufx.Write(&buf, md, nil))
	h, err := ggufx.ParseHeader(buf.Bytes())
	require.NoError(t, err)
	got, _ := h.Metadata.Get("deep")
	assert.Equal(t, v, got)
	_, err = ggufx.ValueOf([]ggufx.Value{v})
	require.ErrorIs(t, err, ggufx.ErrValueType)
	assert.Contains(t, err.Error(), "nested 9 deep, over 8")
}
