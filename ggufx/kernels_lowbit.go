package ggufx

import "encoding/binary"

// The kernels of ggml's ternary and binary types (TQ1_0, TQ2_0, Q1_0, Q2_0) and of NVFP4.

// tq1Trits holds, for a byte b of TQ1_0 and n < 5, its n-th trit as ggml reads it:
// ((uint8(b·3^n))·3) >> 8, one of 0, 1, 2.
var tq1Trits = func() (t [256][8]uint8) {
	pow3 := [5]uint32{1, 3, 9, 27, 81}
	for b := range t {
		for n, p := range pow3 {
			q := uint8(uint32(b) * p)
			t[b][n] = uint8(uint16(q) * 3 >> 8)
		}
	}
	return t
}()

// tritFactors are q - 1 for the codes q = 0-3 of TQ1_0, TQ2_0 and Q2_0: a variable, so that the
// products below stay multiplications (-1·d folded to -d would flip a NaN's sign, which ggml's
// multiplication keeps).
var tritFactors = [4]float32{-1, 0, 1, 2}

// tritValues are (q - 1)·d for the codes q = 0-3, as the reference computes them.
func tritValues(d float32) [4]float32 {
	return [4]float32{tritFactors[0] * d, tritFactors[1] * d, tritFactors[2] * d, tritFactors[3] * d}
}

// block_tq1_0: qs[48] (5 trits a byte, in base 3 scaled to a byte), qh[4] (4 trits a byte), fp16
// d; value (trit - 1)·d. Elements: the trits n = 0..4 of qs[0:32] (32 each), of qs[32:48] (16
// each), then n = 0..3 of qh[0:4].
func dqTQ1_0(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 256 && len(x) >= 54 {
		b := (*[54]byte)(x)
		v := tritValues(half(tab, b[52:]))
		o := (*[256]float32)(y)
		for m, q := range (*[32]byte)(b[0:]) {
			tr := &tq1Trits[q]
			o[m] = v[tr[0]&3]
			o[32+m] = v[tr[1]&3]
			o[64+m] = v[tr[2]&3]
			o[96+m] = v[tr[3]&3]
			o[128+m] = v[tr[4]&3]
		}
		for m, q := range (*[16]byte)(b[32:]) {
			tr := &tq1Trits[q]
			o[160+m] = v[tr[0]&3]
			o[176+m] = v[tr[1]&3]
			o[192+m] = v[tr[2]&3]
			o[208+m] = v[tr[3]&3]
			o[224+m] = v[tr[4]&3]
		}
		for j, q := range (*[4]byte)(b[48:]) {
			tr := &tq1Trits[q]
			o[240+j] = v[tr[0]&3]
			o[244+j] = v[tr[1]&3]
			o[248+j] = v[tr[2]&3]
			o[252+j] = v[tr[3]&3]
		}
		x, y = x[54:], y[256:]
	}
}

// block_tq2_0: qs[64] (2 bits an element), fp16 d; value (q - 1)·d. Each 32 bytes hold 128
// elements: the bits 2l, 2l+1 of byte m are element 32l + m.
func dqTQ2_0(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 256 && len(x) >= 66 {
		b := (*[66]byte)(x)
		v := tritValues(half(tab, b[64:]))
		o := (*[256]float32)(y)
		for h := range 2 {
			ob := (*[128]float32)(o[128*h:])
			for m, q := range (*[32]byte)(b[32*h:]) {
				ob[m] = v[q&3]
				ob[32+m] = v[q>>2&3]
				ob[64+m] = v[q>>4&3]
				ob[96+m] = v[q>>6]
			}
		}
		x, y = x[66:], y[256:]
	}
}

// block_q1_0: fp16 d, qs[16] (a bit an element, least significant first); value d where the bit
// is set, -d where it is clear.
func dqQ1_0(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 128 && len(x) >= 18 {
		b := (*[18]byte)(x)
		d := half(tab, b[:])
		v := [2]float32{-d, d}
		o := (*[128]float32)(y)
		for i := range 16 {
			q := b[2+i]
			ob := (*[8]float32)(o[8*i:])
			ob[0] = v[q&1]
			ob[1] = v[q>>1&1]
			ob[2] = v[q>>2&1]
			ob[3] = v[q>>3&1]
			ob[4] = v[q>>4&1]
			ob[5] = v[q>>5&1]
			ob[6] = v[q>>6&1]
			ob[7] = v[q>>7]
		}
		x, y = x[18:], y[128:]
	}
}

// block_q2_0: fp16 d, qs[16] (2 bits an element, least significant first); value (q - 1)·d.
func dqQ2_0(y []float32, x []byte) {
	tab := f16Table()
	for len(y) >= 64 && len(x) >= 18 {
		b := (*[18]byte)(x)
		v := tritValues(half(tab, b[:]))
		o := (*[64]float32)(y)
		for i := range 16 {
			q := b[2+i]
			ob := (*[4]float32)(o[4*i:])
			ob[0] = v[q&3]
			ob[1] = v[q>>2&3]
			ob[2] = v[q>>4&3]
			ob[3] = v[q>>6]
		}
		x, y = x[18:], y[64:]
	}
}

// block_nvfp4: d[4] (a UE4M3 scale for each 16 elements), qs[32] (E2M1 nibbles: in each 16
// elements, element j in the low nibble of byte j, j+8 in its high nibble); value
// kvalues_mxfp4[q]·ue4m3(d), the E2M1 values doubled and the scale halved.
func dqNVFP4(y []float32, x []byte) {
	for len(y) >= 64 && len(x) >= 36 {
		b := (*[36]byte)(x)
		o := (*[64]float32)(y)
		for s := range 4 {
			d := ue4m3[b[s]]
			qs := binary.LittleEndian.Uint64(b[4+8*s:])
			ob := (*[16]float32)(o[16*s:])
			for j := range 8 {
				q := qs >> (8 * j)
				ob[j] = kvaluesMXFP4[q&15] * d
				ob[j+8] = kvaluesMXFP4[q>>4&15] * d
			}
		}
		x, y = x[36:], y[64:]
	}
}
