package ggufx

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/x448/float16"
)

// The dequantization kernels: each turns whole blocks of src into len(dst) float32 elements,
// exactly as ggml's reference dequantize_row_* (ggml-quants.c) computes them, in float32 with
// every product rounded before a sum (no fused multiply-add, as the reference's scalar code).

// dequantizer dequantizes len(dst)/BlockSize blocks of src into dst.
type dequantizer func(dst []float32, src []byte)

// streamers are the kernels that write dst with non-temporal stores (dst 32-byte aligned, the
// whole output at least streamMin bytes): the assembly kernels where the build has them. A
// destination that large does not stay in the cache anyway, and non-temporal stores do not read
// each of its lines first, so the output costs the memory one write instead of a read and a
// write, as copy() of that size does.
var streamers = map[Type]dequantizer{}

// streamMin is the output size from which Dequantize writes through a streamer.
const streamMin = 32 << 20

var dequantizers = map[Type]dequantizer{
	F32:   dqF32,
	F16:   dqF16,
	BF16:  dqBF16,
	Q4_0:  dqQ4_0,
	Q4_1:  dqQ4_1,
	Q5_0:  dqQ5_0,
	Q5_1:  dqQ5_1,
	Q8_0:  dqQ8_0,
	Q8_1:  dqQ8_1,
	Q2_K:  dqQ2_K,
	Q3_K:  dqQ3_K,
	Q4_K:  dqQ4_K,
	Q5_K:  dqQ5_K,
	Q6_K:  dqQ6_K,
	Q8_K:  dqQ8_K,
	MXFP4: dqMXFP4,

	IQ2_XXS: dqIQ2_XXS,
	IQ2_XS:  dqIQ2_XS,
	IQ3_XXS: dqIQ3_XXS,
	IQ1_S:   dqIQ1_S,
	IQ4_NL:  dqIQ4_NL,
	IQ3_S:   dqIQ3_S,
	IQ2_S:   dqIQ2_S,
	IQ4_XS:  dqIQ4_XS,
	IQ1_M:   dqIQ1_M,
	TQ1_0:   dqTQ1_0,
	TQ2_0:   dqTQ2_0,
	NVFP4:   dqNVFP4,
	Q1_0:    dqQ1_0,
	Q2_0:    dqQ2_0,
}

// int8Float holds float32(int8(b)) for every byte b: a load instead of a conversion.
var int8Float = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(int8(i))
	}
	return t
}()

// f16 is ggml's GGML_FP16_TO_FP32 (exact), through a table of all 65536 halves.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return &t
})

func half(tab *[1 << 16]float32, b []byte) float32 {
	return tab[binary.LittleEndian.Uint16(b)]
}

func dqF32(y []float32, x []byte) {
	for i := range y {
		y[i] = math.Float32frombits(binary.LittleEndian.Uint32(x[4*i:]))
	}
}

func dqF16(y []float32, x []byte) {
	tab := f16Table()
	for i := range y {
		y[i] = half(tab, x[2*i:])
	}
}

func dqBF16(y []float32, x []byte) {
	for i := range y {
		y[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(x[2*i:])) << 16)
	}
}

// block_q4_0: fp16 d, qs[16]; element j in the low nibble of qs[j], j+16 in its high nibble;
// value (q - 8)·d.
func dqQ4_0(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 32 {
		b := x[:18:18]
		d := half(tab, b)
		var v [16]float32 // the 16 values a nibble can stand for: the same products, made once
		for q := range v {
			v[q] = float32(int32(q)-8) * d
		}
		o := y[:32:32]
		lo, hi := binary.LittleEndian.Uint64(b[2:]), binary.LittleEndian.Uint64(b[10:])
		// In the order of the output: the low nibbles (elements 0-15), then the high ones.
		a, c := o[:16:16], o[16:32:32]
		for j := range 8 {
			a[j] = v[lo>>(8*j)&15]
			a[j+8] = v[hi>>(8*j)&15]
		}
		for j := range 8 {
			c[j] = v[lo>>(8*j+4)&15]
			c[j+8] = v[hi>>(8*j+4)&15]
		}
		x, y = x[18:], y[32:]
	}
}

// block_q4_1: fp16 d, fp16 m, qs[16]; value q·d + m.
func dqQ4_1(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 32 {
		b := x[:20:20]
		d, m := half(tab, b), half(tab, b[2:])
		var v [16]float32
		for q := range v {
			v[q] = float32(float32(q)*d) + m
		}
		qs := b[4:20]
		o := y[:32:32]
		for j, q := range qs {
			o[j] = v[q&0x0f]
			o[j+16] = v[q>>4]
		}
		x, y = x[20:], y[32:]
	}
}

// block_q5_0: fp16 d, qh (32 bits, little-endian: bit j is the fifth bit of element j), qs[16];
// value (q - 16)·d.
func dqQ5_0(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 32 {
		b := x[:22:22]
		d := half(tab, b)
		qh := binary.LittleEndian.Uint32(b[2:])
		qs := b[6:22]
		o := y[:32:32]
		for j, q := range qs {
			h0 := ((qh >> uint(j)) << 4) & 0x10
			h1 := (qh >> uint(j+12)) & 0x10
			o[j] = float32(int32(uint32(q&0x0f)|h0)-16) * d
			o[j+16] = float32(int32(uint32(q>>4)|h1)-16) * d
		}
		x, y = x[22:], y[32:]
	}
}

// block_q5_1: fp16 d, fp16 m, qh (32 bits), qs[16]; value q·d + m.
func dqQ5_1(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 32 {
		b := x[:24:24]
		d, m := half(tab, b), half(tab, b[2:])
		qh := binary.LittleEndian.Uint32(b[4:])
		qs := b[8:24]
		o := y[:32:32]
		for j, q := range qs {
			h0 := ((qh >> uint(j)) << 4) & 0x10
			h1 := (qh >> uint(j+12)) & 0x10
			o[j] = float32(float32(uint32(q&0x0f)|h0)*d) + m
			o[j+16] = float32(float32(uint32(q>>4)|h1)*d) + m
		}
		x, y = x[24:], y[32:]
	}
}

// block_q8_0: fp16 d, int8 qs[32]; value q·d.
func dqQ8_0(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 32 {
		b := x[:34:34]
		d := half(tab, b)
		qs := b[2:34]
		o := y[:32:32]
		for j, q := range qs {
			o[j] = int8Float[q] * d
		}
		x, y = x[34:], y[32:]
	}
}

// block_q8_1: fp16 d, fp16 s (d times the sum of qs, unused here), int8 qs[32]; value q·d.
func dqQ8_1(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 32 {
		b := x[:36:36]
		d := half(tab, b)
		qs := b[4:36]
		o := y[:32:32]
		for j, q := range qs {
			o[j] = float32(int8(q)) * d
		}
		x, y = x[36:], y[32:]
	}
}

// block_q8_K: float32 d, int8 qs[256], int16 bsums[16] (unused here); value q·d.
func dqQ8_K(y []float32, x []byte) {
	for len(y) >= 256 {
		b := x[:292:292]
		d := math.Float32frombits(binary.LittleEndian.Uint32(b))
		qs := b[4:260]
		o := y[:256:256]
		for j, q := range qs {
			o[j] = float32(int8(q)) * d
		}
		x, y = x[292:], y[256:]
	}
}

// block_q2_K: scales[16] (low nibble: scale, high nibble: min, of each 16 elements), qs[64]
// (2 bits an element), fp16 d, fp16 dmin; value d·scale·q - dmin·min.
func dqQ2_K(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 256 {
		b := x[:84:84]
		scales := b[:16]
		d, dmin := half(tab, b[80:]), half(tab, b[82:])
		out := y[:256:256]
		is := 0
		for n := 0; n < 2; n++ {
			q := b[16+32*n : 16+32*n+32]
			for shift := uint(0); shift < 8; shift += 2 {
				for half := 0; half < 2; half++ {
					sc := scales[is]
					is++
					dl := d * float32(sc&0x0f)
					ml := dmin * float32(sc>>4)
					qq := q[16*half : 16*half+16]
					o := out[:16:16]
					for l, v := range qq {
						o[l] = float32(dl*float32((v>>shift)&3)) - ml
					}
					out = out[16:]
				}
			}
		}
		x, y = x[84:], y[256:]
	}
}

// block_q3_K: hmask[32] (the third bit, cleared meaning -4), qs[64] (low 2 bits), scales[12]
// (16 6-bit scales, offset by 32), fp16 d; value d·(scale-32)·(q - 4·!hbit).
func dqQ3_K(y []float32, x []byte) {
	tab := f16Table()
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	var scales [16]int8
	for len(y) >= 256 {
		b := x[:110:110]
		hm := b[:32]
		d := half(tab, b[108:])
		var aux [4]uint32
		aux[0] = binary.LittleEndian.Uint32(b[96:])
		aux[1] = binary.LittleEndian.Uint32(b[100:])
		tmp := binary.LittleEndian.Uint32(b[104:])
		aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4)
		aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4)
		aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4)
		aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4)
		for k, a := range aux {
			for i := range 4 {
				scales[4*k+i] = int8(a >> (8 * i))
			}
		}
		out := y[:256:256]
		is := 0
		m := uint8(1)
		for n := 0; n < 2; n++ {
			q := b[32+32*n : 32+32*n+32]
			for shift := uint(0); shift < 8; shift += 2 {
				for half := 0; half < 2; half++ {
					dl := d * float32(int32(scales[is])-32)
					is++
					qq := q[16*half : 16*half+16]
					hh := hm[16*half : 16*half+16]
					o := out[:16:16]
					for l, v := range qq {
						v := int32((v >> shift) & 3)
						if hh[l]&m == 0 {
							v -= 4
						}
						o[l] = dl * float32(v)
					}
					out = out[16:]
				}
				m <<= 1
			}
		}
		x, y = x[110:], y[256:]
	}
}

// scaleMinK4 is ggml's get_scale_min_k4: the 6-bit scale and min j of the 12 packed bytes q.
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return (q[j+4] & 0x0f) | ((q[j-4] >> 6) << 4), (q[j+4] >> 4) | ((q[j] >> 6) << 4)
}

// block_q4_K: fp16 d, fp16 dmin, scales[12] (8 6-bit scales and mins), qs[128]; each 64
// elements are 32 low nibbles then 32 high nibbles; value d·sc·q - dmin·m.
func dqQ4_K(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 256 {
		b := x[:144:144]
		d, dmin := half(tab, b), half(tab, b[2:])
		scales := b[4:16]
		out := y[:256:256]
		for k := 0; k < 4; k++ {
			q := b[16+32*k : 16+32*k+32]
			sc, m := scaleMinK4(2*k, scales)
			d1, m1 := d*float32(sc), dmin*float32(m)
			sc, m = scaleMinK4(2*k+1, scales)
			d2, m2 := d*float32(sc), dmin*float32(m)
			var v1, v2 [16]float32 // the values a nibble stands for in each half
			for q := range v1 {
				v1[q] = float32(d1*float32(q)) - m1
				v2[q] = float32(d2*float32(q)) - m2
			}
			lo, hi := out[:32:32], out[32:64:64]
			for l, v := range q {
				lo[l] = v1[v&0x0f]
				hi[l] = v2[v>>4]
			}
			out = out[64:]
		}
		x, y = x[144:], y[256:]
	}
}

// block_q5_K: fp16 d, fp16 dmin, scales[12], qh[32] (the fifth bits), qs[128]; value
// d·sc·q - dmin·m.
func dqQ5_K(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 256 {
		b := x[:176:176]
		d, dmin := half(tab, b), half(tab, b[2:])
		scales := b[4:16]
		qh := b[16:48]
		out := y[:256:256]
		u1, u2 := uint8(1), uint8(2)
		for k := 0; k < 4; k++ {
			ql := b[48+32*k : 48+32*k+32]
			sc, m := scaleMinK4(2*k, scales)
			d1, m1 := d*float32(sc), dmin*float32(m)
			sc, m = scaleMinK4(2*k+1, scales)
			d2, m2 := d*float32(sc), dmin*float32(m)
			lo, hi := out[:32:32], out[32:64:64]
			for l, v := range ql {
				q1, q2 := uint32(v&0x0f), uint32(v>>4)
				if qh[l]&u1 != 0 {
					q1 += 16
				}
				if qh[l]&u2 != 0 {
					q2 += 16
				}
				lo[l] = float32(d1*float32(q1)) - m1
				hi[l] = float32(d2*float32(q2)) - m2
			}
			out = out[64:]
			u1 <<= 2
			u2 <<= 2
		}
		x, y = x[176:], y[256:]
	}
}

// block_q6_K: ql[128] (low 4 bits), qh[64] (high 2 bits), int8 scales[16], fp16 d; value
// d·scale·(q - 32).
func dqQ6_K(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 256 {
		b := x[:210:210]
		d := half(tab, b[208:])
		var ds [16]float32 // d·scale of each 16 elements, as the reference computes it first
		for i, s := range b[192:208] {
			ds[i] = d * float32(int8(s))
		}
		out := y[:256:256]
		for n := 0; n < 2; n++ {
			ql := b[64*n : 64*n+64]
			qh := b[128+32*n : 128+32*n+32]
			sc := ds[8*n : 8*n+8]
			o := out[:128:128]
			for h := 0; h < 2; h++ { // elements 16h to 16h+15 of each quarter share a scale
				s0, s1, s2, s3 := sc[h], sc[h+2], sc[h+4], sc[h+6]
				for l := 16 * h; l < 16*h+16; l += 8 { // eight elements of each quarter from 8-byte loads
					a := binary.LittleEndian.Uint64(ql[l:])
					c := binary.LittleEndian.Uint64(ql[l+32:])
					e := binary.LittleEndian.Uint64(qh[l:])
					o0, o1 := o[l:l+8:l+8], o[l+32:l+40:l+40]
					o2, o3 := o[l+64:l+72:l+72], o[l+96:l+104:l+104]
					for j := range 8 {
						qa, qc, qe := uint32(a>>(8*j)), uint32(c>>(8*j)), uint32(e>>(8*j))
						// q - 32 is exact as a float32: the products are the reference's.
						o0[j] = s0 * float32(int32(qa&15|(qe&3)<<4)-32)
						o1[j] = s1 * float32(int32(qc&15|(qe&0x0c)<<2)-32)
						o2[j] = s2 * float32(int32(qa>>4&15|qe&0x30)-32)
						o3[j] = s3 * float32(int32(qc>>4&15|(qe&0xc0)>>2)-32)
					}
				}
			}
			out = out[128:]
		}
		x, y = x[210:], y[256:]
	}
}

// kvaluesMXFP4 is ggml's kvalues_mxfp4: the E2M1 values of the 16 nibbles, doubled (the block
// scale is halved to match).
var kvaluesMXFP4 = [16]float32{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// e8m0Half is ggml's GGML_E8M0_TO_FP32_HALF: 2^(e-128) as a float32 (subnormal for e < 2).
func e8m0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// block_mxfp4: uint8 e (E8M0 shared exponent), qs[16]; element j in the low nibble of qs[j],
// j+16 in its high nibble; value kvalues_mxfp4[q]·2^(e-128).
func dqMXFP4(y []float32, x []byte) {
	for len(y) >= 32 {
		b := x[:17:17]
		d := e8m0Half(b[0])
		var v [16]float32
		for q, k := range kvaluesMXFP4 {
			v[q] = k * d
		}
		o := y[:32:32]
		for j, q := range b[1:17] {
			o[j] = v[q&0x0f]
			o[j+16] = v[q>>4]
		}
		x, y = x[17:], y[32:]
	}
}
