package ggufx_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/ggufx/internal/ggmlref"
)

// allQuantized are the 27 quantized types of ggml; every one but Q8_1 has a dequantize_row_* in
// ggml's library (Q8_1 is checked against the tests' own reading in dequantize_test.go).
var allQuantized = func() (out []ggufx.Type) {
	for t := ggufx.Type(0); t < 64; t++ {
		if t.Quantized() {
			out = append(out, t)
		}
	}
	return out
}()

// scaleFields are the offsets of each type's float16 scales in its block.
var scaleFields = map[ggufx.Type][]int{
	ggufx.Q4_0: {0}, ggufx.Q4_1: {0, 2}, ggufx.Q5_0: {0}, ggufx.Q5_1: {0, 2}, ggufx.Q8_0: {0},
	ggufx.Q8_1: {0, 2}, ggufx.Q2_K: {80, 82}, ggufx.Q3_K: {108}, ggufx.Q4_K: {0, 2}, ggufx.Q5_K: {0, 2},
	ggufx.Q6_K: {208}, ggufx.IQ2_XXS: {0}, ggufx.IQ2_XS: {0}, ggufx.IQ3_XXS: {0}, ggufx.IQ1_S: {0},
	ggufx.IQ4_NL: {0}, ggufx.IQ3_S: {0}, ggufx.IQ2_S: {0}, ggufx.IQ4_XS: {0}, ggufx.TQ1_0: {52},
	ggufx.TQ2_0: {64}, ggufx.Q1_0: {0}, ggufx.Q2_0: {0},
	// Q8_K's is a float32, IQ1_M's is spread over the top nibbles of its scales, MXFP4's and
	// NVFP4's are bytes (E8M0, UE4M3) that are finite whatever they hold.
	ggufx.Q8_K: nil, ggufx.IQ1_M: nil, ggufx.MXFP4: nil, ggufx.NVFP4: nil,
}

// ggmlBlocks returns n blocks of typ of random bytes whose scales are random float16 in [0, 1),
// or, with finite false, of random bytes alone (any half: infinities and NaNs too).
func ggmlBlocks(rng *rand.Rand, typ ggufx.Type, n int, finite bool) []byte {
	bb := typ.BlockBytes()
	out := make([]byte, n*bb)
	for i := range out {
		out[i] = byte(rng.Uint32())
	}
	if !finite {
		return out
	}
	unit := func() uint16 { return float16.Fromfloat32(rng.Float32()).Bits() & 0x3bff } // < 1
	for k := range n {
		b := out[k*bb : (k+1)*bb]
		for _, at := range scaleFields[typ] {
			binary.LittleEndian.PutUint16(b[at:], unit())
		}
		switch typ {
		case ggufx.Q8_K:
			binary.LittleEndian.PutUint32(b, math.Float32bits(rng.Float32()))
		case ggufx.IQ1_M:
			h := unit()
			for i := range 4 {
				at := 48 + 2*i
				v := binary.LittleEndian.Uint16(b[at:])&0x0fff | (h>>(4*i)&15)<<12
				binary.LittleEndian.PutUint16(b[at:], v)
			}
		}
	}
	return out
}

// ggmlQuantized quantizes rows×perRow random normal floats of typ with ggml_quantize_chunk (with
// an importance matrix of random positive weights for the IQ types).
func ggmlQuantized(t *testing.T, l *ggmlref.Lib, rng *rand.Rand, typ ggufx.Type, rows, perRow int) []byte {
	src := make([]float32, rows*perRow)
	for i := range src {
		src[i] = float32(rng.NormFloat64())
	}
	var im []float32
	if l.RequiresImatrix(int(typ)) || typ.String()[:2] == "IQ" {
		im = make([]float32, perRow)
		for i := range im {
			im[i] = 0.01 + rng.Float32()
		}
	}
	q, err := l.Quantize(int(typ), src, rows, perRow, im)
	require.NoError(t, err)
	return q
}

// blockTensor is one tensor of a file: rows of perRow elements of typ.
type blockTensor struct {
	name         string
	typ          ggufx.Type
	perRow, rows int
	blocks       []byte
}

// blockFile writes a file holding the tensors, by hand, and opens it.
func blockFile(t *testing.T, tensors ...blockTensor) *ggufx.File {
	r := start(3, uint64(len(tensors)), 0)
	off := 0
	for _, x := range tensors {
		r.tensor(x.name, uint32(x.typ), uint64(off), uint64(x.perRow), uint64(x.rows))
		off += len(x.blocks)
		off += (32 - off%32) % 32
	}
	for _, x := range tensors {
		r.data(32, 0, nil)
		r.bytes(x.blocks...)
	}
	f, err := ggufx.Open(file(t, r.b))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// sameBits reports whether a and b are the same float32, any NaN being the same as any other.
func sameBits(a, b float32) bool {
	if a != a && b != b {
		return true
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

// checkAgainstGgml dequantizes the tensor of f to float32 and float16 and compares every element
// with ggml's dequantize_row_* of the same blocks: float32 bit for bit, float16 as ggml's float32
// rounded to the nearest half (ties to even).
func checkAgainstGgml(t *testing.T, l *ggmlref.Lib, f *ggufx.File, x blockTensor) {
	t.Helper()
	want := make([]float32, x.rows*x.perRow)
	require.NoError(t, l.Dequantize(int(x.typ), x.blocks, want))
	y, err := f.Dequantize(x.name, core.Float32)
	require.NoError(t, err)
	defer y.Release()
	got, err := core.ReadOnlyElements[float32](y)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	bs := x.typ.BlockSize()
	for i := range want {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("%s: element %d (block %d, element %d): %v (%#x), ggml's %v (%#x)", x.name, i, i/bs, i%bs,
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	sameInto(t, f, x.name, y)
	h, err := f.Dequantize(x.name, core.Float16)
	require.NoError(t, err)
	defer h.Release()
	sameInto(t, f, x.name, h)
	hs, err := core.ReadOnlyElements[float16.Float16](h)
	require.NoError(t, err)
	for i := range want {
		w := float16.Fromfloat32(want[i])
		if g := hs[i]; g.Bits() != w.Bits() && !(g.IsNaN() && w.IsNaN()) {
			t.Fatalf("%s: float16 element %d: %#04x, ggml's %v rounded %#04x", x.name, i, g.Bits(), want[i], w.Bits())
		}
	}
}

// sameInto checks that DequantizeInto writes into a tensor of its own exactly what Dequantize gave.
func sameInto(t *testing.T, f *ggufx.File, name string, want *core.Tensor) {
	t.Helper()
	dst, err := core.New(want.DType(), want.Shape()...)
	require.NoError(t, err)
	defer dst.Release()
	require.NoError(t, f.DequantizeInto(name, dst))
	a, err := want.ReadOnlyBytes()
	require.NoError(t, err)
	b, err := dst.ReadOnlyBytes()
	require.NoError(t, err)
	require.True(t, bytes.Equal(a, b), "%s: DequantizeInto %s differs from Dequantize", name, want.DType())
}

// TestDequantizeMatchesGgml: for every quantized type ggml's library dequantizes, File.Dequantize
// (and DequantizeInto) gives ggml's dequantize_row_* bit for bit, to float32 and (rounded) float16, on random blocks
// with finite scales, on random bytes of any kind (NaN counting as NaN) and on blocks that
// ggml_quantize_chunk made from random rows, at a size one goroutine converts and at one split
// between several (GOMAXPROCS raised to 4 for it).
func TestDequantizeMatchesGgml(t *testing.T) {
	l := ggmlref.Load(t)
	rng := rand.New(rand.NewPCG(49, 1))
	for _, typ := range allQuantized {
		if typ == ggufx.Q8_1 {
			continue // ggml has no dequantize_row_q8_1
		}
		t.Run(typ.String(), func(t *testing.T) {
			require.Equal(t, typ.BlockSize(), l.BlockSize(int(typ)))
			require.Equal(t, typ.BlockBytes(), l.TypeSize(int(typ)))
			require.True(t, ggufx.Dequantizable(typ))
			bs := typ.BlockSize()
			// 2^19 elements (128 rows of 4096) take two workers or more; ggml's IQ quantizers are
			// slow, so 4 quantized rows are repeated to fill that tensor.
			const perRow, bigRows = 4096, 128
			tensors := []blockTensor{
				{"random", typ, 512, 3, ggmlBlocks(rng, typ, 3*512/bs, true)},
				{"bytes", typ, 512, 3, ggmlBlocks(rng, typ, 3*512/bs, false)},
				{"one-block", typ, bs, 1, ggmlBlocks(rng, typ, 1, true)},
				{"big-random", typ, perRow, bigRows, ggmlBlocks(rng, typ, bigRows*perRow/bs, true)},
			}
			if typ != ggufx.Q8_K { // ggml_quantize_chunk has no Q8_K
				q := ggmlQuantized(t, l, rng, typ, 4, perRow)
				tensors = append(tensors, blockTensor{"quantized", typ, perRow, 4, q})
				blocks := make([]byte, 0, len(q)*bigRows/4)
				for range bigRows / 4 {
					blocks = append(blocks, q...)
				}
				tensors = append(tensors, blockTensor{"big-quantized", typ, perRow, bigRows, blocks})
			}
			f := blockFile(t, tensors...)
			prev := runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))
			defer runtime.GOMAXPROCS(prev)
			for _, x := range tensors {
				checkAgainstGgml(t, l, f, x)
			}
		})
	}
}

// The sizes of every type in the table are ggml's, and ggml's names are ggufx's in lower case.
func TestTypeTableIsGgmls(t *testing.T) {
	l := ggmlref.Load(t)
	for _, typ := range allQuantized {
		assert.Equal(t, typ.BlockSize(), l.BlockSize(int(typ)), "%s", typ)
		assert.Equal(t, typ.BlockBytes(), l.TypeSize(int(typ)), "%s", typ)
		assert.Equal(t, fmt.Sprint(typ), upper(l.TypeName(int(typ))))
	}
	assert.Len(t, allQuantized, 27)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestDequantizeLargeMatchesGgml: outputs of 32 MiB and more go out through the non-temporal
// stores of the assembly kernels where the build has them (IQ4_NL, IQ4_XS, NVFP4 beside Q4_0,
// Q8_0, Q4_K): still ggml's values bit for bit, whether Dequantize or DequantizeInto writes them.
func TestDequantizeLargeMatchesGgml(t *testing.T) {
	l := ggmlref.Load(t)
	const n = 8 << 20
	rng := rand.New(rand.NewPCG(49, 2))
	for _, typ := range []ggufx.Type{ggufx.IQ4_NL, ggufx.IQ4_XS, ggufx.NVFP4, ggufx.Q4_0, ggufx.Q8_0, ggufx.Q4_K} {
		t.Run(typ.String(), func(t *testing.T) {
			x := blockTensor{"w", typ, 4096, n / 4096, ggmlBlocks(rng, typ, n/typ.BlockSize(), true)}
			f := blockFile(t, x)
			want := make([]float32, n)
			require.NoError(t, l.Dequantize(int(typ), x.blocks, want))
			y, err := f.Dequantize("w", core.Float32)
			require.NoError(t, err)
			defer y.Release()
			into := core.MustNew(core.Float32, n/4096, 4096)
			defer into.Release()
			require.NoError(t, f.DequantizeInto("w", into))
			for _, got := range []*core.Tensor{y, into} {
				v, err := core.ReadOnlyElements[float32](got)
				require.NoError(t, err)
				for i := range want {
					if !sameBits(v[i], want[i]) {
						t.Fatalf("element %d: %v, ggml's %v", i, v[i], want[i])
					}
				}
			}
		})
	}
}

// TestDequantizeNaNBitsMatchGgml: on arbitrary bytes (infinite and NaN scales), even the NaNs are
// ggml's bit for bit, payload and sign: where ggml multiplies by -1 (TQ1_0, TQ2_0, Q2_0) the
// kernels multiply, where it negates (the IQ2 and IQ3 signs, Q1_0) they flip the sign bit.
// TestDequantizeMatchesGgml counts any NaN as any other, as the format promises no more.
func TestDequantizeNaNBitsMatchGgml(t *testing.T) {
	l := ggmlref.Load(t)
	rng := rand.New(rand.NewPCG(49, 3))
	for _, typ := range allQuantized {
		if typ == ggufx.Q8_1 {
			continue
		}
		x := blockTensor{typ.String(), typ, 4096, 4, ggmlBlocks(rng, typ, 4*4096/typ.BlockSize(), false)}
		if at := scaleFields[typ]; len(at) > 0 { // a NaN and an infinity for sure
			binary.LittleEndian.PutUint16(x.blocks[at[0]:], 0x7e01)
			binary.LittleEndian.PutUint16(x.blocks[typ.BlockBytes()+at[0]:], 0xfc00)
		}
		f := blockFile(t, x)
		want := make([]float32, 4*4096)
		require.NoError(t, l.Dequantize(int(typ), x.blocks, want))
		y, err := f.Dequantize(x.name, core.Float32)
		require.NoError(t, err)
		got, err := core.ReadOnlyElements[float32](y)
		require.NoError(t, err)
		nans := 0
		for i := range want {
			if want[i] != want[i] {
				nans++
			}
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: element %d is %#x, ggml's %#x", typ, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
		y.Release()
		if len(scaleFields[typ]) > 0 {
			assert.NotZero(t, nans, "%s: no NaN was tried", typ)
		}
	}
}
