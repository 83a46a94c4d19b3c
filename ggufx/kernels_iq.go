package ggufx

import (
	"encoding/binary"
	"math"
	"sync"
)

//go:generate go run ./internal/gridgen -o zz_grids.go

// The kernels of ggml's IQ ("importance") quantizations: IQ4_NL and IQ4_XS (a non-linear table of
// 16 values), and IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M, whose groups of 8 (or
// 4) elements are entries of a grid of magnitudes with separate signs. The grids are those of
// zz_grids.go; here they are widened once to float32, and each value is computed with the
// reference's operations in its order (the scale times the magnitude, then the sign: a flip of
// the sign bit, which is what ggml's code does, NaNs included).

// iqTables are the grids and sign tables as the kernels read them.
type iqTables struct {
	smask  [128][8]uint32 // ksigns_iq2xs[s] as sign-bit masks
	bmask  [256][8]uint32 // a byte of sign bits as sign-bit masks
	iq2xxs [256][8]float32
	iq2xs  [512][8]float32
	iq2s   [1024][8]float32
	iq3xxs [256][4]float32
	iq3s   [512][4]float32
	iq1s   [2048]uint16 // 2 bits an element: its grid value + 1
}

var iqTab = sync.OnceValue(func() *iqTables {
	t := new(iqTables)
	masks := func(bits uint8) (m [8]uint32) {
		for j := range m {
			m[j] = uint32(bits>>j&1) << 31
		}
		return m
	}
	for s, v := range ksignsIQ2XS {
		t.smask[s] = masks(v)
	}
	for b := range t.bmask {
		t.bmask[b] = masks(uint8(b))
	}
	widen8 := func(dst [][8]float32, src []uint64) {
		for i, v := range src {
			for j := range 8 {
				dst[i][j] = float32(uint8(v >> (8 * j)))
			}
		}
	}
	widen8(t.iq2xxs[:], iq2xxsGrid[:])
	widen8(t.iq2xs[:], iq2xsGrid[:])
	widen8(t.iq2s[:], iq2sGrid[:])
	widen4 := func(dst [][4]float32, src []uint32) {
		for i, v := range src {
			for j := range 4 {
				dst[i][j] = float32(uint8(v >> (8 * j)))
			}
		}
	}
	widen4(t.iq3xxs[:], iq3xxsGrid[:])
	widen4(t.iq3s[:], iq3sGrid[:])
	for i, v := range iq1sGrid {
		var c uint16
		for j := range 8 {
			c |= uint16(int8(v>>(8*j))+1) << (2 * j)
		}
		t.iq1s[i] = c
	}
	return t
})

// kvaluesIQ4NLf is kvaluesIQ4NL as float32.
var kvaluesIQ4NLf = func() (f [16]float32) {
	for i, v := range kvaluesIQ4NL {
		f[i] = float32(v)
	}
	return f
}()

// block_iq4_nl: fp16 d, qs[16]; element j in the low nibble of qs[j], j+16 in its high nibble;
// value d·kvalues_iq4nl[q].
func dqIQ4_NL(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 32 && len(x) >= 18 {
		b := (*[18]byte)(x)
		d := half(tab, b[:])
		var v [16]float32
		for q, k := range kvaluesIQ4NLf {
			v[q] = d * k
		}
		o := (*[32]float32)(y)
		for j := range 16 {
			q := b[2+j]
			o[j] = v[q&15]
			o[j+16] = v[q>>4]
		}
		x, y = x[18:], y[32:]
	}
}

// block_iq4_xs: fp16 d, uint16 scales_h (2 high bits of each sub-block's scale), scales_l[4]
// (the 4 low bits), qs[128]; each 32 elements as IQ4_NL's, with the scale d·(ls - 32).
func dqIQ4_XS(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 256 && len(x) >= 136 {
		b := (*[136]byte)(x)
		d := half(tab, b[:])
		sh := uint32(binary.LittleEndian.Uint16(b[2:]))
		o := (*[256]float32)(y)
		for ib := range 8 {
			ls := uint32(b[4+ib/2])>>(4*(ib%2))&15 | (sh>>(2*ib)&3)<<4
			dl := d * float32(int32(ls)-32)
			var v [16]float32
			for q, k := range kvaluesIQ4NLf {
				v[q] = dl * k
			}
			qs := (*[16]byte)(b[8+16*ib:])
			ob := (*[32]float32)(o[32*ib:])
			for j := range 16 {
				q := qs[j]
				ob[j] = v[q&15]
				ob[j+16] = v[q>>4]
			}
		}
		x, y = x[136:], y[256:]
	}
}

// grid8x writes the 8 values dl·g[j] with their sign bits flipped where m[j] says: ggml negates
// (a NaN's sign flips too) rather than multiplying by -1.
func grid8x(o *[8]float32, dl float32, g *[8]float32, m *[8]uint32) {
	o[0] = math.Float32frombits(math.Float32bits(dl*g[0]) ^ m[0])
	o[1] = math.Float32frombits(math.Float32bits(dl*g[1]) ^ m[1])
	o[2] = math.Float32frombits(math.Float32bits(dl*g[2]) ^ m[2])
	o[3] = math.Float32frombits(math.Float32bits(dl*g[3]) ^ m[3])
	o[4] = math.Float32frombits(math.Float32bits(dl*g[4]) ^ m[4])
	o[5] = math.Float32frombits(math.Float32bits(dl*g[5]) ^ m[5])
	o[6] = math.Float32frombits(math.Float32bits(dl*g[6]) ^ m[6])
	o[7] = math.Float32frombits(math.Float32bits(dl*g[7]) ^ m[7])
}

// grid44x writes the 8 values dl·g1[j] and dl·g2[j], their signs flipped as grid8x does.
func grid44x(o *[8]float32, dl float32, g1, g2 *[4]float32, m *[8]uint32) {
	o[0] = math.Float32frombits(math.Float32bits(dl*g1[0]) ^ m[0])
	o[1] = math.Float32frombits(math.Float32bits(dl*g1[1]) ^ m[1])
	o[2] = math.Float32frombits(math.Float32bits(dl*g1[2]) ^ m[2])
	o[3] = math.Float32frombits(math.Float32bits(dl*g1[3]) ^ m[3])
	o[4] = math.Float32frombits(math.Float32bits(dl*g2[0]) ^ m[4])
	o[5] = math.Float32frombits(math.Float32bits(dl*g2[1]) ^ m[5])
	o[6] = math.Float32frombits(math.Float32bits(dl*g2[2]) ^ m[6])
	o[7] = math.Float32frombits(math.Float32bits(dl*g2[3]) ^ m[7])
}

// block_iq2_xxs: fp16 d, then for each 32 elements two 32-bit words: the first the four grid
// indices (a byte each), the second four 7-bit sign indices and a 4-bit scale s on top; value
// d·(0.5 + s)·0.25·grid·sign.
func dqIQ2_XXS(y []float32, x []byte) {
	tab, t := f16Table(), iqTab()
	for len(y) >= 256 && len(x) >= 66 {
		b := (*[66]byte)(x)
		d := half(tab, b[:])
		o := (*[256]float32)(y)
		for ib := range 8 {
			a0 := binary.LittleEndian.Uint32(b[2+8*ib:])
			a1 := binary.LittleEndian.Uint32(b[6+8*ib:])
			db := d * (0.5 + float32(a1>>28)) * 0.25
			ob := (*[32]float32)(o[32*ib:])
			grid8x((*[8]float32)(ob[0:]), db, &t.iq2xxs[uint8(a0)], &t.smask[a1&127])
			grid8x((*[8]float32)(ob[8:]), db, &t.iq2xxs[uint8(a0>>8)], &t.smask[a1>>7&127])
			grid8x((*[8]float32)(ob[16:]), db, &t.iq2xxs[uint8(a0>>16)], &t.smask[a1>>14&127])
			grid8x((*[8]float32)(ob[24:]), db, &t.iq2xxs[uint8(a0>>24)], &t.smask[a1>>21&127])
		}
		x, y = x[66:], y[256:]
	}
}

// block_iq2_xs: fp16 d, uint16 qs[32] (9-bit grid index, 7-bit sign index), scales[8] (two 4-bit
// scales for each 32 elements); value d·(0.5 + s)·0.25·grid·sign.
func dqIQ2_XS(y []float32, x []byte) {
	tab, t := f16Table(), iqTab()
	for len(y) >= 256 && len(x) >= 74 {
		b := (*[74]byte)(x)
		d := half(tab, b[:])
		o := (*[256]float32)(y)
		for ib := range 8 {
			sc := b[66+ib]
			db0 := d * (0.5 + float32(sc&15)) * 0.25
			db1 := d * (0.5 + float32(sc>>4)) * 0.25
			q := binary.LittleEndian.Uint64(b[2+8*ib:])
			ob := (*[32]float32)(o[32*ib:])
			grid8x((*[8]float32)(ob[0:]), db0, &t.iq2xs[q&511], &t.smask[q>>9&127])
			grid8x((*[8]float32)(ob[8:]), db0, &t.iq2xs[q>>16&511], &t.smask[q>>25&127])
			grid8x((*[8]float32)(ob[16:]), db1, &t.iq2xs[q>>32&511], &t.smask[q>>41&127])
			grid8x((*[8]float32)(ob[24:]), db1, &t.iq2xs[q>>48&511], &t.smask[q>>57&127])
		}
		x, y = x[74:], y[256:]
	}
}

// block_iq2_s: fp16 d, qs[32] (low 8 bits of the grid indices), signs[32] (a byte of sign bits for
// each 8 elements), qh[8] (2 high index bits each), scales[8]; value d·(0.5 + s)·0.25·grid·sign.
func dqIQ2_S(y []float32, x []byte) {
	tab, t := f16Table(), iqTab()
	for len(y) >= 256 && len(x) >= 82 {
		b := (*[82]byte)(x)
		d := half(tab, b[:])
		o := (*[256]float32)(y)
		for ib := range 8 {
			sc := b[74+ib]
			db0 := d * (0.5 + float32(sc&15)) * 0.25
			db1 := d * (0.5 + float32(sc>>4)) * 0.25
			qh := uint32(b[66+ib])
			qs := (*[4]byte)(b[2+4*ib:])
			sg := (*[4]byte)(b[34+4*ib:])
			ob := (*[32]float32)(o[32*ib:])
			grid8x((*[8]float32)(ob[0:]), db0, &t.iq2s[uint32(qs[0])|qh<<8&0x300], &t.bmask[sg[0]])
			grid8x((*[8]float32)(ob[8:]), db0, &t.iq2s[uint32(qs[1])|qh<<6&0x300], &t.bmask[sg[1]])
			grid8x((*[8]float32)(ob[16:]), db1, &t.iq2s[uint32(qs[2])|qh<<4&0x300], &t.bmask[sg[2]])
			grid8x((*[8]float32)(ob[24:]), db1, &t.iq2s[uint32(qs[3])|qh<<2&0x300], &t.bmask[sg[3]])
		}
		x, y = x[82:], y[256:]
	}
}

// block_iq3_xxs: fp16 d, qs[64] (grid indices, one for each 4 elements), then for each 32
// elements a 32-bit word of four 7-bit sign indices and a 4-bit scale s; value
// d·(0.5 + s)·0.5·grid·sign.
func dqIQ3_XXS(y []float32, x []byte) {
	tab, t := f16Table(), iqTab()
	for len(y) >= 256 && len(x) >= 98 {
		b := (*[98]byte)(x)
		d := half(tab, b[:])
		o := (*[256]float32)(y)
		for ib := range 8 {
			a := binary.LittleEndian.Uint32(b[66+4*ib:])
			db := d * (0.5 + float32(a>>28)) * 0.5
			qs := (*[8]byte)(b[2+8*ib:])
			ob := (*[32]float32)(o[32*ib:])
			for l := range 4 {
				grid44x((*[8]float32)(ob[8*l:]), db, &t.iq3xxs[qs[2*l]], &t.iq3xxs[qs[2*l+1]], &t.smask[a>>(7*l)&127])
			}
		}
		x, y = x[98:], y[256:]
	}
}

// block_iq3_s: fp16 d, qs[64] (low 8 bits of the grid indices), qh[8] (their ninth bits), signs[32]
// (a byte of sign bits for each 8 elements), scales[4] (two 4-bit scales for each 64 elements);
// value d·(1 + 2s)·grid·sign.
func dqIQ3_S(y []float32, x []byte) {
	tab, t := f16Table(), iqTab()
	for len(y) >= 256 && len(x) >= 110 {
		b := (*[110]byte)(x)
		d := half(tab, b[:])
		o := (*[256]float32)(y)
		for ib := range 8 { // 32 elements: 8 indices, a qh byte, 4 sign bytes
			sc := uint32(b[106+ib/2]) >> (4 * (ib % 2)) & 15
			db := d * float32(1+2*sc)
			qh := uint32(b[66+ib])
			qs := (*[8]byte)(b[2+8*ib:])
			sg := (*[4]byte)(b[74+4*ib:])
			ob := (*[32]float32)(o[32*ib:])
			for l := range 4 {
				i1 := uint32(qs[2*l]) | qh<<(8-2*l)&256
				i2 := uint32(qs[2*l+1]) | qh<<(7-2*l)&256
				grid44x((*[8]float32)(ob[8*l:]), db, &t.iq3s[i1&511], &t.iq3s[i2&511], &t.bmask[sg[l]])
			}
		}
		x, y = x[110:], y[256:]
	}
}

// iq1Delta is IQ1S_DELTA and IQ1M_DELTA: the shift of every IQ1 grid value.
const iq1Delta = 0.125

// iq1DeltaOf is iq1Delta, negated where neg is 1, without a branch (the sign bits are random).
func iq1DeltaOf(neg uint32) float32 {
	return math.Float32frombits(math.Float32bits(iq1Delta) | neg<<31)
}

// iq1Group writes 8 elements of IQ1 codes c (2 bits each, the grid value + 1) from v, the four
// values dl·(g + delta) for g = -1, 0, 1 (and one never used).
func iq1Group(o *[8]float32, c uint16, v *[4]float32) {
	o[0] = v[c&3]
	o[1] = v[c>>2&3]
	o[2] = v[c>>4&3]
	o[3] = v[c>>6&3]
	o[4] = v[c>>8&3]
	o[5] = v[c>>10&3]
	o[6] = v[c>>12&3]
	o[7] = v[c>>14&3]
}

// iq1Values are dl·(g + delta) for g = -1, 0, 1, as the reference computes them.
func iq1Values(dl, delta float32) *[4]float32 {
	return &[4]float32{dl * (-1 + delta), dl * (0 + delta), dl * (1 + delta), 0}
}

// block_iq1_s: fp16 d, qs[32] (low 8 bits of the grid indices), uint16 qh[8] (for each 32
// elements: 3 more index bits for each 8, a 3-bit scale s, the sign of delta on top); value
// d·(2s + 1)·(grid ± 0.125).
func dqIQ1_S(y []float32, x []byte) {
	tab, t := f16Table(), iqTab()
	for len(y) >= 256 && len(x) >= 50 {
		b := (*[50]byte)(x)
		d := half(tab, b[:])
		o := (*[256]float32)(y)
		for ib := range 8 {
			qh := uint32(binary.LittleEndian.Uint16(b[34+2*ib:]))
			dl := d * float32(2*(qh>>12&7)+1)
			v := iq1Values(dl, iq1DeltaOf(qh>>15))
			qs := (*[4]byte)(b[2+4*ib:])
			ob := (*[32]float32)(o[32*ib:])
			for l := range 4 {
				iq1Group((*[8]float32)(ob[8*l:]), t.iq1s[uint32(qs[l])|(qh>>(3*l)&7)<<8], v)
			}
		}
		x, y = x[50:], y[256:]
	}
}

// block_iq1_m: qs[32] (low 8 bits of the grid indices), qh[16] (for each 8 elements 3 more index
// bits and the sign of delta), scales[8] (as four uint16: 3-bit scales of each 16 elements in the
// low 12 bits, the fp16 d in the top 4 bits of the four); value d·(2s + 1)·(grid ± 0.125).
func dqIQ1_M(y []float32, x []byte) {
	tab, t := f16Table(), iqTab()
	for len(y) >= 256 && len(x) >= 56 {
		b := (*[56]byte)(x)
		var sc [4]uint32
		for i := range sc {
			sc[i] = uint32(binary.LittleEndian.Uint16(b[48+2*i:]))
		}
		d := tab[uint16(sc[0]>>12|sc[1]>>8&0x00f0|sc[2]>>4&0x0f00|sc[3]&0xf000)]
		o := (*[256]float32)(y)
		for ib := range 8 {
			s := sc[ib/2] >> (6 * (ib % 2))
			dl1 := d * float32(2*(s&7)+1)
			dl2 := d * float32(2*(s>>3&7)+1)
			qs := (*[4]byte)(b[4*ib:])
			qh0, qh1 := uint32(b[32+2*ib]), uint32(b[33+2*ib])
			ob := (*[32]float32)(o[32*ib:])
			iq1Group((*[8]float32)(ob[0:]), t.iq1s[uint32(qs[0])|qh0<<8&0x700], iq1Values(dl1, iq1DeltaOf(qh0>>3&1)))
			iq1Group((*[8]float32)(ob[8:]), t.iq1s[uint32(qs[1])|qh0<<4&0x700], iq1Values(dl1, iq1DeltaOf(qh0>>7&1)))
			iq1Group((*[8]float32)(ob[16:]), t.iq1s[uint32(qs[2])|qh1<<8&0x700], iq1Values(dl2, iq1DeltaOf(qh1>>3&1)))
			iq1Group((*[8]float32)(ob[24:]), t.iq1s[uint32(qs[3])|qh1<<4&0x700], iq1Values(dl2, iq1DeltaOf(qh1>>7&1)))
		}
		x, y = x[56:], y[256:]
	}
}
