package ggufx_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
)

// h16 reads the half at b.
func h16(b []byte) float32 { return float16.Frombits(binary.LittleEndian.Uint16(b)).Float32() }

// elementValue is a second, independent reading of ggml's dequantize_row_* formulas: element e
// of a block, found from its index alone (which byte, which bits, which sub-block scale),
// rather than by walking the block as ggml and the package do.
func elementValue(typ ggufx.Type, b []byte, e int) float32 {
	nib := func(qs []byte, e int) int { // element e of a 32-element block of nibbles
		if e < 16 {
			return int(qs[e] & 15)
		}
		return int(qs[e-16] >> 4)
	}
	bit := func(x uint32, i int) int { return int(x>>i) & 1 }
	switch typ {
	case ggufx.Q4_0:
		return float32(nib(b[2:], e)-8) * h16(b)
	case ggufx.Q4_1:
		return float32(float32(nib(b[4:], e))*h16(b)) + h16(b[2:])
	case ggufx.Q5_0:
		q := nib(b[6:], e) + 16*bit(binary.LittleEndian.Uint32(b[2:]), e)
		return float32(q-16) * h16(b)
	case ggufx.Q5_1:
		q := nib(b[8:], e) + 16*bit(binary.LittleEndian.Uint32(b[4:]), e)
		return float32(float32(q)*h16(b)) + h16(b[2:])
	case ggufx.Q8_0:
		return float32(int8(b[2+e])) * h16(b)
	case ggufx.Q8_1:
		return float32(int8(b[4+e])) * h16(b)
	case ggufx.Q8_K:
		return float32(int8(b[4+e])) * math.Float32frombits(binary.LittleEndian.Uint32(b))
	case ggufx.MXFP4: // E2M1 (sign, 2 exponent bits, 1 mantissa bit) times 2^(e-127)
		q := nib(b[1:], e)
		m := float64(q & 1)
		v := m / 2 // exponent 0: subnormal, 0 or 0.5
		if ex := q >> 1 & 3; ex > 0 {
			v = math.Ldexp(1+m/2, ex-1)
		}
		if q&8 != 0 && v != 0 { // ggml's table holds 0, not -0, for nibble 8: +0 out
			v = -v
		}
		return float32(math.Ldexp(v, int(b[0])-127))
	case ggufx.Q2_K:
		n, g, l := e/128, e%128/32, e%32
		q := int(b[16+32*n+l]>>(2*g)) & 3
		sc := b[e/16]
		d, dmin := h16(b[80:]), h16(b[82:])
		return float32(d*float32(sc%16)*float32(q)) - dmin*float32(sc/16)
	case ggufx.Q3_K:
		n, g, l := e/128, e%128/32, e%32
		q := int(b[32+32*n+l]>>(2*g)) & 3
		if b[l]&(1<<(4*n+g)) == 0 {
			q -= 4
		}
		s := e / 16
		sc6 := int(b[96+s%8]>>(4*(s/8)))%16 + 16*(int(b[104+s%4]>>(2*(s/4)))%4)
		return h16(b[108:]) * float32(sc6-32) * float32(q)
	case ggufx.Q4_K, ggufx.Q5_K:
		s, l := e/32, e%32
		scales := b[4:16]
		var sc, m int
		if s < 4 {
			sc, m = int(scales[s])%64, int(scales[s+4])%64
		} else {
			sc = int(scales[s+4])%16 + 16*(int(scales[s-4])/64)
			m = int(scales[s+4])/16 + 16*(int(scales[s])/64)
		}
		var q int
		if typ == ggufx.Q4_K {
			q = int(b[16+32*(s/2)+l])
		} else {
			q = int(b[48+32*(s/2)+l])
		}
		if s%2 == 1 {
			q /= 16
		} else {
			q %= 16
		}
		if typ == ggufx.Q5_K && b[16+l]&(1<<s) != 0 {
			q += 16
		}
		return float32(h16(b)*float32(sc)*float32(q)) - h16(b[2:])*float32(m)
	case ggufx.Q6_K:
		n, k, l := e/128, e%128/32, e%32
		lo := int(b[64*n+32*(k%2)+l])
		if k >= 2 {
			lo /= 16
		} else {
			lo %= 16
		}
		hi := int(b[128+32*n+l]>>(2*k)) % 4
		q := lo + 16*hi - 32
		return h16(b[208:]) * float32(int8(b[192+e/16])) * float32(q)
	}
	panic(typ.String())
}

// randomBlocks returns n blocks of typ of random bytes whose halves and floats are finite.
func randomBlocks(rng *rand.Rand, typ ggufx.Type, n int) []byte {
	bb := typ.BlockBytes()
	out := make([]byte, n*bb)
	for i := range out {
		out[i] = byte(rng.Uint32())
	}
	finite := func(b []byte) { // a half with exponent < 31, most near 1
		h := uint16(rng.Uint32()) &^ 0x7c00
		h |= uint16(rng.IntN(31)) << 10
		if rng.IntN(4) > 0 {
			h = h&^0x7c00 | uint16(8+rng.IntN(14))<<10
		}
		binary.LittleEndian.PutUint16(b, h)
	}
	for k := range n {
		b := out[k*bb : (k+1)*bb]
		switch typ {
		case ggufx.Q4_0, ggufx.Q5_0, ggufx.Q8_0:
			finite(b)
		case ggufx.Q4_1, ggufx.Q5_1, ggufx.Q8_1, ggufx.Q4_K, ggufx.Q5_K:
			finite(b)
			finite(b[2:])
		case ggufx.Q2_K:
			finite(b[80:])
			finite(b[82:])
		case ggufx.Q3_K:
			finite(b[108:])
		case ggufx.Q6_K:
			finite(b[208:])
		case ggufx.Q8_K:
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(rng.NormFloat64())))
		}
	}
	return out
}

// quantFile builds, by hand (blockFile), a file with one tensor of each type of blocks, named
// after the type: ne [2 blocks, 3].
func quantFile(t *testing.T, blocks map[ggufx.Type][]byte, types []ggufx.Type) *ggufx.File {
	tensors := make([]blockTensor, len(types))
	for i, typ := range types {
		tensors[i] = blockTensor{name: typ.String(), typ: typ, perRow: 2 * typ.BlockSize(), rows: 3, blocks: blocks[typ]}
	}
	return blockFile(t, tensors...)
}

var quantTypes = []ggufx.Type{ggufx.Q4_0, ggufx.Q4_1, ggufx.Q5_0, ggufx.Q5_1, ggufx.Q8_0, ggufx.Q8_1,
	ggufx.Q2_K, ggufx.Q3_K, ggufx.Q4_K, ggufx.Q5_K, ggufx.Q6_K, ggufx.Q8_K, ggufx.MXFP4}

// Random blocks of every type dequantize exactly as the independent reading says, to float32
// and (rounded) to float16.
func TestDequantizeRandomBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	blocks := map[ggufx.Type][]byte{}
	for _, typ := range quantTypes {
		blocks[typ] = randomBlocks(rng, typ, 6)
	}
	f := quantFile(t, blocks, quantTypes)
	for _, typ := range quantTypes {
		t.Run(typ.String(), func(t *testing.T) {
			bs, bb := typ.BlockSize(), typ.BlockBytes()
			want := make([]float32, 6*bs)
			for i := range want {
				want[i] = elementValue(typ, blocks[typ][i/bs*bb:], i%bs)
			}
			x, err := f.Dequantize(typ.String(), core.Float32)
			require.NoError(t, err)
			defer x.Release()
			assert.Equal(t, []int64{3, int64(2 * bs)}, x.Shape())
			assert.NotZero(t, x.Flags()&core.FlagIsCopied)
			got, err := x.Float32s()
			require.NoError(t, err)
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					t.Fatalf("element %d (block %d, %d): %v, want %v", i, i/bs, i%bs, got[i], want[i])
				}
			}
			h, err := f.Dequantize(typ.String(), core.Float16)
			require.NoError(t, err)
			defer h.Release()
			hs, err := h.Float16s()
			require.NoError(t, err)
			for i := range want {
				require.Equal(t, float16.Fromfloat32(want[i]).Bits(), hs[i].Bits(), "element %d", i)
			}
		})
	}
}

// Blocks worked out by hand: one element of each code path, its value computed on paper.
func TestDequantizeByHand(t *testing.T) {
	const one, half, two, minusOne = 0x3c00, 0x3800, 0x4000, 0xbc00
	put := func(b []byte, at int, h uint16) { binary.LittleEndian.PutUint16(b[at:], h) }
	type check struct {
		e    int
		want float32
	}
	cases := []struct {
		typ    ggufx.Type
		fill   func(b []byte)
		checks []check
	}{
		{ggufx.Q4_0, func(b []byte) { put(b, 0, half); b[2] = 0x9f }, // (15-8)/2, (9-8)/2, (0-8)/2
			[]check{{0, 3.5}, {16, 0.5}, {1, -4}}},
		{ggufx.Q4_1, func(b []byte) { put(b, 0, half); put(b, 2, minusOne); b[4] = 0x31 }, // 1/2-1, 3/2-1
			[]check{{0, -0.5}, {16, 0.5}, {1, -1}}},
		{ggufx.Q5_0, func(b []byte) { put(b, 0, one); b[2], b[4] = 1, 1; b[7] = 0xf0 }, // qh bits 0 and 16
			[]check{{0, 0}, {16, 0}, {1, -16}, {17, -1}}},
		{ggufx.Q5_1, func(b []byte) { put(b, 0, one); put(b, 2, half); b[4] = 2; b[9] = 2 }, // (2|16)+0.5
			[]check{{1, 18.5}, {0, 0.5}}},
		{ggufx.Q8_0, func(b []byte) { put(b, 0, two); b[5] = 0xfd }, // -3·2
			[]check{{3, -6}, {0, 0}}},
		{ggufx.Q2_K, func(b []byte) { b[0], b[2] = 0x21, 0x13; b[16] = 3; put(b, 80, one); put(b, 82, half) },
			// e0: scale 1, min 2, q 3: 3 - 0.5·2; e32: scales[2] = 3 and min 1, q = (3>>2)&3 = 0
			[]check{{0, 2}, {32, -0.5}}},
		{ggufx.Q3_K, func(b []byte) { b[0] = 1; b[32] = 2; put(b, 108, one) },
			// all scales 0 (-32); e0: high bit set, q 2: -64; e1: high bit clear, q 0-4: 128
			[]check{{0, -64}, {1, 128}}},
		{ggufx.Q4_K, func(b []byte) {
			put(b, 0, one)
			put(b, 2, one)
			b[4] = 5 | 0x40
			b[8] = 3
			b[12] = 0x21
			b[16] = 2
			b[16+64] = 1
		},
			// e0: scale 5, min 3, q 2: 7; e128: sub-block 4, scale 1|1<<4 = 17, min 2, q 1: 15
			[]check{{0, 7}, {128, 15}}},
		{ggufx.Q5_K, func(b []byte) { put(b, 0, one); b[4] = 1; b[16] = 1; b[48] = 3 }, // (3+16)·1
			[]check{{0, 19}, {32, 0}}},
		{ggufx.MXFP4, func(b []byte) { b[0] = 128; b[1] = 0xf7; b[2] = 0x01 }, // scale 2^(128-127) = 2
			// e0: nibble 7 is E2M1 6 (2^2·1.5): 12; e16: nibble 15, -12; e1: nibble 1 (0.5): 1; e17: 0
			[]check{{0, 12}, {16, -12}, {1, 1}, {17, 0}}},
		{ggufx.MXFP4, func(b []byte) { b[0] = 0; b[1] = 0x0d }, // e = 0: scale 2^-127 times nibble 13 (-3)
			[]check{{0, -3 * 0x1p-127}, {16, 0}}},
		{ggufx.Q6_K, func(b []byte) { b[0] = 0x0a; b[128] = 1; b[192] = 4; put(b, 208, half) }, // 0.5·4·(26-32)
			[]check{{0, -12}, {32, 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.typ.String(), func(t *testing.T) {
			b := make([]byte, 2*tc.typ.BlockBytes())
			tc.fill(b)
			f := quantFile(t, map[ggufx.Type][]byte{tc.typ: append(b, make([]byte, 4*tc.typ.BlockBytes())...)}, []ggufx.Type{tc.typ})
			x, err := f.Dequantize(tc.typ.String(), core.Float32)
			require.NoError(t, err)
			got, err := x.Float32s()
			require.NoError(t, err)
			for _, c := range tc.checks {
				assert.Equal(t, c.want, got[c.e], "element %d", c.e)
				assert.Equal(t, c.want, elementValue(tc.typ, b, c.e), "the test's own reading, element %d", c.e)
			}
		})
	}
}

// Large tensors are split between goroutines: every block still lands in its place.
func TestDequantizeParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const rows = 1 << 10 // 1024 rows of 512 elements: 2^19 elements, two or more workers
	typ := ggufx.Q4_K
	blocks := randomBlocks(rng, typ, 2*rows)
	r := start(3, 1, 0).tensor("w", uint32(typ), 0, 512, rows)
	r.data(32, 0, nil).bytes(blocks...)
	f, err := ggufx.Open(file(t, r.b))
	require.NoError(t, err)
	defer f.Close()
	x, err := f.Dequantize("w", core.Float32)
	require.NoError(t, err)
	defer x.Release()
	got, err := x.Float32s()
	require.NoError(t, err)
	for i := 0; i < len(got); i += 97 {
		require.Equal(t, elementValue(typ, blocks[i/256*144:], i%256), got[i], "element %d", i)
	}
	require.Equal(t, elementValue(typ, blocks[len(blocks)-144:], 255), got[len(got)-1])
}

// Every quantized type is converted now; what Dequantize refuses is a dtype other than float32
// and float16, and a name the file does not have. Blocks still shares any type's blocks.
func TestDequantizeRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	types := []ggufx.Type{ggufx.IQ4_NL, ggufx.Q8_0}
	blocks := map[ggufx.Type][]byte{ggufx.IQ4_NL: randomBlocks(rng, ggufx.IQ4_NL, 6), ggufx.Q8_0: randomBlocks(rng, ggufx.Q8_0, 6)}
	f := quantFile(t, blocks, types)
	_, err := f.Dequantize("Q8_0", core.Float64)
	require.ErrorIs(t, err, ggufx.ErrType)
	assert.Contains(t, err.Error(), "float64")
	_, err = f.Dequantize("none", core.Float32)
	require.ErrorIs(t, err, ggufx.ErrNotFound)
	b, bi, err := f.Blocks("IQ4_NL")
	require.NoError(t, err)
	defer b.Release()
	assert.Equal(t, []int64{6, 18}, b.Shape())
	assert.Equal(t, []int64{3, 64}, bi.Shape)
	raw, err := b.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, blocks[ggufx.IQ4_NL], raw)
	for typ := range ggufx.Type(64) {
		assert.Equal(t, typ.Quantized() || typ == ggufx.F32 || typ == ggufx.F16 || typ == ggufx.BF16, ggufx.Dequantizable(typ), "%s", typ)
	}
}

// Plain float tensors dequantize too: F16 and BF16 widen exactly.
func TestDequantizeFloats(t *testing.T) {
	f, err := ggufx.Open(file(t, plainFile()))
	require.NoError(t, err)
	defer f.Close()
	for _, name := range []string{"F32", "F16", "BF16"} {
		x, err := f.Dequantize(name, core.Float32)
		require.NoError(t, err)
		v, err := x.Float32s()
		require.NoError(t, err)
		assert.Equal(t, []float32{1, -2, 3, -4, 5, -6}, v, name)
	}
	_, err = f.Dequantize("I32", core.Float32)
	require.ErrorIs(t, err, ggufx.ErrType)
}

// TestDequantizeLarge: outputs of 32 MiB and more go out through the kernels' non-temporal stores
// where the build has them (split across the processors): every element still equals ggml's
// formula, bit for bit.
func TestDequantizeLarge(t *testing.T) {
	const n = 8 << 20 // 32 MiB of float32
	rng := rand.New(rand.NewPCG(31, 7))
	for _, typ := range []ggufx.Type{ggufx.Q4_0, ggufx.Q8_0, ggufx.Q4_K} {
		t.Run(typ.String(), func(t *testing.T) {
			blocks := randomBlocks(rng, typ, n/typ.BlockSize())
			r := start(3, 1, 0).tensor("w", uint32(typ), 0, 4096, n/4096)
			r.data(32, 0, nil).bytes(blocks...)
			path := filepath.Join(t.TempDir(), "large.gguf")
			require.NoError(t, os.WriteFile(path, r.b, 0o644))
			f, err := ggufx.Open(path)
			require.NoError(t, err)
			defer f.Close()
			x, err := f.Dequantize("w", core.Float32)
			require.NoError(t, err)
			defer x.Release()
			got, err := core.ReadOnlyElements[float32](x)
			require.NoError(t, err)
			require.Len(t, got, n)
			bs, bb := typ.BlockSize(), typ.BlockBytes()
			for i, v := range got {
				b := blocks[i/bs*bb:][:bb]
				if want := elementValue(typ, b, i%bs); math.Float32bits(v) != math.Float32bits(want) {
					t.Fatalf("element %d is %v, ggml's formula gives %v", i, v, want)
				}
			}
		})
	}
}
