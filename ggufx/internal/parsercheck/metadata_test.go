package parsercheck_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dlpack-go/dlpack/ggufx"
)

// nested makes an array of arrays of xs (each a Go value ggufx.ValueOf takes).
func nested(xs ...any) []ggufx.Value {
	vs := make([]ggufx.Value, len(xs))
	for i, x := range xs {
		vs[i] = ggufx.MustValueOf(x)
	}
	return vs
}

// deep is an array of arrays nested d deep around []int16{-1, 1}.
func deep(d int) any {
	var x any = []int16{-1, 1}
	for range d - 1 {
		x = nested(x)
	}
	return x
}

var (
	negZero32 = float32(math.Copysign(0, -1))
	nan32     = math.Float32frombits(0x7fc0_1234) // a quiet NaN with a payload
	nan64     = math.Float64frombits(0x7ff8_0000_dead_beef)
)

// metadataCases cover every value type ggufx writes: every integer width at its extremes,
// float32/float64 (-0, infinities, NaN payloads, subnormals), bool, strings (empty, UTF-8,
// NUL inside), arrays of each (empty ones too, and long ones), arrays of arrays down to
// ggufx.MaxDepth, and general.alignment.
var metadataCases = []struct {
	name string
	kvs  []kv
}{
	{"integers", []kv{
		{"u8.min", uint8(0)}, {"u8.max", uint8(math.MaxUint8)},
		{"i8.min", int8(math.MinInt8)}, {"i8.max", int8(math.MaxInt8)},
		{"u16.min", uint16(0)}, {"u16.max", uint16(math.MaxUint16)},
		{"i16.min", int16(math.MinInt16)}, {"i16.max", int16(math.MaxInt16)},
		{"u32.min", uint32(0)}, {"u32.max", uint32(math.MaxUint32)},
		{"i32.min", int32(math.MinInt32)}, {"i32.max", int32(math.MaxInt32)},
		{"u64.min", uint64(0)}, {"u64.max", uint64(math.MaxUint64)},
		{"i64.min", int64(math.MinInt64)}, {"i64.max", int64(math.MaxInt64)},
		{"general.file_type", uint32(7)}, {"llama.context_length", uint32(4096)},
	}},
	{"floats", []kv{
		{"f32.tenth", float32(0.1)}, {"f32.neg_zero", negZero32}, {"f32.max", float32(math.MaxFloat32)},
		{"f32.subnormal", float32(math.SmallestNonzeroFloat32)}, {"f32.inf", float32(math.Inf(1))},
		{"f32.neg_inf", float32(math.Inf(-1))}, {"f32.nan", nan32},
		{"f64.pi", math.Pi}, {"f64.neg_zero", math.Copysign(0, -1)}, {"f64.max", math.MaxFloat64},
		{"f64.subnormal", math.SmallestNonzeroFloat64}, {"f64.inf", math.Inf(1)}, {"f64.nan", nan64},
		{"llama.rope.freq_base", float32(500000)}, {"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
	}},
	{"bools and strings", []kv{
		{"bool.true", true}, {"bool.false", false},
		{"general.architecture", "llama"}, {"general.name", "Tiny Model 1.1B"},
		{"str.empty", ""}, {"str.utf8", "snow ☃, 雪, ü"}, {"str.nul", "a\x00b"},
		{"str.inner_space", "a  b\tc\nd"}, {"str.long", strings.Repeat("0123456789", 300)},
	}},
	{"arrays", []kv{
		{"a.u8", []uint8{0, 1, math.MaxUint8}}, {"a.i8", []int8{math.MinInt8, 0, math.MaxInt8}},
		{"a.u16", []uint16{0, math.MaxUint16}}, {"a.i16", []int16{math.MinInt16, -1, math.MaxInt16}},
		{"a.u32", []uint32{0, math.MaxUint32}}, {"a.i32", []int32{math.MinInt32, 7, math.MaxInt32}},
		{"a.u64", []uint64{0, math.MaxUint64}}, {"a.i64", []int64{math.MinInt64, -9, math.MaxInt64}},
		{"a.f32", []float32{1.5, negZero32, float32(math.Inf(-1)), nan32}},
		{"a.f64", []float64{2.5, math.Copysign(0, -1), math.Inf(1), nan64}},
		{"a.bool", []bool{true, false, true}}, {"a.str", []string{"x", "", "ü", "a b", "a\x00b"}},
	}},
	{"empty arrays", []kv{
		{"e.u8", []uint8{}}, {"e.i8", []int8{}}, {"e.u16", []uint16{}}, {"e.i16", []int16{}},
		{"e.u32", []uint32{}}, {"e.i32", []int32{}}, {"e.u64", []uint64{}}, {"e.i64", []int64{}},
		{"e.f32", []float32{}}, {"e.f64", []float64{}}, {"e.bool", []bool{}}, {"e.str", []string{}},
	}},
	{"long arrays", []kv{
		{"tokenizer.ggml.model", "gpt2"}, {"tokenizer.ggml.tokens", tokens(3000)},
		{"tokenizer.ggml.scores", scores(3000)}, {"tokenizer.ggml.token_type", tokenTypes(3000)},
	}},
	{"arrays of arrays", []kv{
		{"n.i32", nested([]int32{1, 2}, []int32{}, []int32{3})},
		{"n.str", nested([]string{"in", ""}, []string{"ü"})},
		{"n.f64", nested([]float64{math.Pi}, []float64{nan64, math.Inf(-1)})},
		{"n.bool", nested([]bool{true}, []bool{})},
		{"n.empty_inner", nested([]uint8{}, []uint8{})},
		{"n.depth3", nested(nested([]uint64{math.MaxUint64}), nested([]uint64{}, []uint64{1}))},
		{fmt.Sprintf("n.depth%d", ggufx.MaxDepth), deep(ggufx.MaxDepth)},
	}},
	{"alignment", []kv{
		{ggufx.AlignmentKey, uint32(64)}, {"after", "the alignment key"},
	}},
}

func tokens(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("tok%d_%s", i, strings.Repeat("x", i%7))
	}
	return s
}

func scores(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = -float32(i) / 3
	}
	return s
}

func tokenTypes(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i % 6)
	}
	return s
}

// TestMetadataAgrees writes each case's metadata (and one small tensor) with ggufx and requires
// that gguf-parser-go, reading the file both ways, finds every key in ggufx's order with its
// value type number and name and its value (floats bit for bit, arrays item by item, nested
// arrays at every depth) as ggufx.Open reports them, that ggufx reports them as written, and
// that both put the data section at the same offset.
func TestMetadataAgrees(t *testing.T) {
	for _, c := range metadataCases {
		for _, m := range readModes {
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				md := metadata(t, c.kvs)
				align := int64(ggufx.DefaultAlignment)
				if v, err := md.Uint32(ggufx.AlignmentKey); err == nil {
					align = int64(v)
				}
				es, want := entries(t, []tensorCase{{typ: ggufx.F32, shape: []int64{3}}})
				w := writeAndRead(t, md, es, m.opts...)
				assertHeader(t, align, w)
				assertMetadata(t, md, w)
				assertTensorInfos(t, es, align, w)
				assertData(t, es, want, w)
			})
		}
	}
}
