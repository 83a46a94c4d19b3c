//go:build amd64 && !purego

package ggufx

import (
	"encoding/binary"

	"golang.org/x/sys/cpu"
)

// On amd64 with AVX2, Q4_0, Q8_0 and Q4_K are dequantized by assembly kernels
// (kernels_amd64.s), IQ4_NL, IQ4_XS and NVFP4 by kernels_nl_amd64.s, TQ2_0 by
// kernels_tq_amd64.s, the IQ1/IQ2/IQ3 grid types (kernels_grid_amd64.go) and Q1_0, Q2_0, TQ1_0
// (kernels_codes_amd64.go) by Go that prepares each group's codes and scale for assembly that
// converts and scales them. The block scales are widened from fp16 in Go (a table lookup), so
// the kernels need AVX2 alone. A Q4_0 (Q8_0) value is q-8 (q) converted to float32 and multiplied
// by the scale, one rounding, as in dqQ4_0 (dqQ8_0); a Q4_K value is d·sc·q then minus dmin·m,
// two roundings, as in dqQ4_K (no fused multiply-add, which would round once and differ from
// ggml's reference). The purego build tag keeps the Go kernels.

// q4_0AVX2 dequantizes n blocks of x into y, block i scaled by d[i]; nt not zero writes y with
// non-temporal stores (y 32-byte aligned), which do not read y's lines into the cache first.
//
//go:noescape
func q4_0AVX2(y *float32, x *byte, d *float32, n int, nt int)

// q4_KAVX2 dequantizes n Q4_K blocks of x into y; dm holds, for each 64 elements, the
// d·sc and dmin·m of their two halves (d1, m1, d2, m2), 16 floats a block; nt as for q4_0AVX2.
//
//go:noescape
func q4_KAVX2(y *float32, x *byte, dm *float32, n int, nt int)

// q8_0AVX2 dequantizes n Q8_0 blocks of x into y, block i scaled by d[i]; nt as for q4_0AVX2.
//
//go:noescape
func q8_0AVX2(y *float32, x *byte, d *float32, n int, nt int)

// nl4AVX2 dequantizes n groups of 32 elements whose 4-bit codes index tab (16 int8 values),
// group i scaled by d[i]: the first group's 16 code bytes at x, each next one stride bytes on,
// and skip bytes more after every per groups; nt as for q4_0AVX2 (kernels_nl_amd64.s).
//
//go:noescape
func nl4AVX2(y *float32, x *byte, d *float32, tab *int8, n int, per int, stride int, skip int, nt int)

// nvfp4AVX2 dequantizes n NVFP4 blocks of x into y, their sub-blocks scaled by d (4 floats a
// block), the codes indexing tab; nt as for q4_0AVX2.
//
//go:noescape
func nvfp4AVX2(y *float32, x *byte, d *float32, tab *int8, n int, nt int)

// kvaluesMXFP4i8 is kvaluesMXFP4 as the int8 table the assembly looks codes up in.
var kvaluesMXFP4i8 = func() (t [16]int8) {
	for i, v := range kvaluesMXFP4 {
		t[i] = int8(v)
	}
	return t
}()

// dqIQ4_NLAVX2 is dqIQ4_NL through nl4AVX2: the scales widened in Go, 64 blocks at a time.
func dqIQ4_NLAVX2(y []float32, x []byte, nt int) {
	tab := f16Table()
	var d [64]float32
	for n := min(len(y)/32, len(x)/18); n > 0; {
		k := min(n, len(d))
		for i := range k {
			d[i] = half(tab, x[18*i:])
		}
		nl4AVX2(&y[0], &x[2], &d[0], &kvaluesIQ4NL[0], k, 1, 18, 0, nt)
		x, y, n = x[18*k:], y[32*k:], n-k
	}
}

// dqIQ4_XSAVX2 is dqIQ4_XS through nl4AVX2: the 8 scales d·(ls - 32) of each block made in Go,
// 16 blocks at a time.
func dqIQ4_XSAVX2(y []float32, x []byte, nt int) {
	tab := f16Table()
	var d [16 * 8]float32
	for n := min(len(y)/256, len(x)/136); n > 0; {
		k := min(n, 16)
		for i := range k {
			b := (*[136]byte)(x[136*i:])
			db := half(tab, b[:])
			sh := uint32(binary.LittleEndian.Uint16(b[2:]))
			for ib := range 8 {
				ls := uint32(b[4+ib/2])>>(4*(ib%2))&15 | (sh>>(2*ib)&3)<<4
				d[8*i+ib] = db * float32(int32(ls)-32)
			}
		}
		nl4AVX2(&y[0], &x[8], &d[0], &kvaluesIQ4NL[0], 8*k, 8, 16, 8, nt)
		x, y, n = x[136*k:], y[256*k:], n-k
	}
}

// dqNVFP4AVX2 is dqNVFP4 through nvfp4AVX2: the UE4M3 scales looked up in Go, 64 blocks at a time.
func dqNVFP4AVX2(y []float32, x []byte, nt int) {
	var d [64 * 4]float32
	for n := min(len(y)/64, len(x)/36); n > 0; {
		k := min(n, 64)
		for i := range k {
			b := (*[36]byte)(x[36*i:])
			d[4*i], d[4*i+1], d[4*i+2], d[4*i+3] = ue4m3[b[0]], ue4m3[b[1]], ue4m3[b[2]], ue4m3[b[3]]
		}
		nvfp4AVX2(&y[0], &x[0], &d[0], &kvaluesMXFP4i8[0], k, nt)
		x, y, n = x[36*k:], y[64*k:], n-k
	}
}

// tq2AVX2 dequantizes n TQ2_0 blocks of x into y, block i scaled by d[i]; nt as for q4_0AVX2
// (kernels_tq_amd64.s).
//
//go:noescape
func tq2AVX2(y *float32, x *byte, d *float32, n int, nt int)

// dqTQ2_0AVX2 is dqTQ2_0 through tq2AVX2: the scales widened in Go, 64 blocks at a time.
func dqTQ2_0AVX2(y []float32, x []byte, nt int) {
	tab := f16Table()
	var d [64]float32
	for n := min(len(y)/256, len(x)/66); n > 0; {
		k := min(n, len(d))
		for i := range k {
			d[i] = half(tab, x[66*i+64:])
		}
		tq2AVX2(&y[0], &x[0], &d[0], k, nt)
		x, y, n = x[66*k:], y[256*k:], n-k
	}
}

// q6_KAVX2 dequantizes n Q6_K blocks of x into y, ds holding each block's 16 products
// d·scale; nt as for q4_0AVX2 (kernels_q6k_amd64.s).
//
//go:noescape
func q6_KAVX2(y *float32, x *byte, ds *float32, n int, nt int)

// dqQ6_KAVX2 is dqQ6_K through q6_KAVX2: the products d·scale made in Go, as dqQ6_K makes them,
// 16 blocks at a time.
func dqQ6_KAVX2(y []float32, x []byte, nt int) {
	tab := f16Table()
	var ds [16 * 16]float32
	for n := min(len(y)/256, len(x)/210); n > 0; {
		k := min(n, 16)
		for i := range k {
			b := (*[210]byte)(x[210*i:])
			d := half(tab, b[208:])
			for j, s := range b[192:208] {
				ds[16*i+j] = d * float32(int8(s))
			}
		}
		q6_KAVX2(&y[0], &x[0], &ds[0], k, nt)
		x, y, n = x[210*k:], y[256*k:], n-k
	}
}

func init() {
	if cpu.X86.HasAVX2 {
		useAVX2(Q4_0, func(y []float32, x []byte, nt int) { scaledAVX2(y, x, Q4_0, nt) })
		useAVX2(Q8_0, func(y []float32, x []byte, nt int) { scaledAVX2(y, x, Q8_0, nt) })
		useAVX2(Q4_K, dqQ4_KAVX2)
		useAVX2(Q6_K, dqQ6_KAVX2)
		useAVX2(TQ2_0, dqTQ2_0AVX2)
		useAVX2(IQ4_NL, dqIQ4_NLAVX2)
		useAVX2(IQ4_XS, dqIQ4_XSAVX2)
		useAVX2(NVFP4, dqNVFP4AVX2)
	}
}

// useAVX2 makes kernel the dequantizer of typ (nt 0) and its streamer (nt 1: non-temporal
// stores).
func useAVX2(typ Type, kernel func(y []float32, x []byte, nt int)) {
	dequantizers[typ] = func(y []float32, x []byte) { kernel(y, x, 0) }
	streamers[typ] = func(y []float32, x []byte) { kernel(y, x, 1) }
}

// scaledAVX2 dequantizes Q4_0 or Q8_0 blocks (32 elements led by an fp16 scale) through
// q4_0AVX2 or q8_0AVX2, in batches whose scales sit on the stack; nt as for q4_0AVX2.
func scaledAVX2(y []float32, x []byte, typ Type, nt int) {
	bb := typ.BlockBytes()
	tab := f16Table()
	var d [64]float32
	for n := min(len(y)/32, len(x)/bb); n > 0; {
		k := min(n, len(d))
		for i := range k {
			d[i] = half(tab, x[bb*i:])
		}
		if typ == Q4_0 {
			q4_0AVX2(&y[0], &x[0], &d[0], k, nt)
		} else {
			q8_0AVX2(&y[0], &x[0], &d[0], k, nt)
		}
		x, y, n = x[bb*k:], y[32*k:], n-k
	}
}

// dqQ4_KAVX2 is dqQ4_K through q4_KAVX2: the sub-block scales and mins are unpacked in Go, as
// dqQ4_K does, 16 blocks at a time; nt as for q4_0AVX2.
func dqQ4_KAVX2(y []float32, x []byte, nt int) {
	tab := f16Table()
	var dm [16 * 16]float32
	for n := min(len(y)/256, len(x)/144); n > 0; {
		k := min(n, 16)
		for i := range k {
			b := x[144*i : 144*i+144]
			d, dmin := half(tab, b), half(tab, b[2:])
			for j := range 8 {
				sc, m := scaleMinK4(j, b[4:16])
				dm[16*i+2*j], dm[16*i+2*j+1] = d*float32(sc), dmin*float32(m)
			}
		}
		q4_KAVX2(&y[0], &x[0], &dm[0], k, nt)
		x, y, n = x[144*k:], y[256*k:], n-k
	}
}
