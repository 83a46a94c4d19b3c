//go:build amd64 && !purego

package ggufx

import "golang.org/x/sys/cpu"

// On amd64 with AVX2, Q4_0, Q8_0 and Q4_K are dequantized by assembly kernels
// (kernels_amd64.s). The block scales are widened from fp16 in Go (a table lookup), so the
// kernels need AVX2 alone. A Q4_0 (Q8_0) value is q-8 (q) converted to float32 and multiplied
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

func init() {
	if cpu.X86.HasAVX2 {
		dequantizers[Q4_0] = func(y []float32, x []byte) { scaledAVX2(y, x, Q4_0, 0) }
		dequantizers[Q4_K] = func(y []float32, x []byte) { dqQ4_KAVX2(y, x, 0) }
		dequantizers[Q8_0] = func(y []float32, x []byte) { scaledAVX2(y, x, Q8_0, 0) }
		streamers[Q4_0] = func(y []float32, x []byte) { scaledAVX2(y, x, Q4_0, 1) }
		streamers[Q4_K] = func(y []float32, x []byte) { dqQ4_KAVX2(y, x, 1) }
		streamers[Q8_0] = func(y []float32, x []byte) { scaledAVX2(y, x, Q8_0, 1) }
	}
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
