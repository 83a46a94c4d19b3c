//go:build amd64 && !purego

package ggufx

import "golang.org/x/sys/cpu"

// On amd64 with AVX2, Q4_0, Q8_0 and Q4_K are dequantized by assembly kernels
// (kernels_amd64.s). The block scales are widened from fp16 in Go (a table lookup), so the
// kernels need AVX2 alone. A Q4_0 (Q8_0) value is q-8 (q) converted to float32 and multiplied
// by the scale, one rounding, as in dqQ4_0 (dqQ8_0); a Q4_K value is d·sc·q then minus dmin·m,
// two roundings, as in dqQ4_K (no fused multiply-add, which would round once and differ from
// ggml's reference). The purego build tag keeps the Go kernels.

// q4_0AVX2 dequantizes n blocks of x into y, block i scaled by d[i].
//
//go:noescape
func q4_0AVX2(y *float32, x *byte, d *float32, n int)

// q4_KAVX2 dequantizes n Q4_K blocks of x into y; dm holds, for each 64 elements, the
// d·sc and dmin·m of their two halves (d1, m1, d2, m2), 16 floats a block.
//
//go:noescape
func q4_KAVX2(y *float32, x *byte, dm *float32, n int)

// q8_0AVX2 dequantizes n Q8_0 blocks of x into y, block i scaled by d[i].
//
//go:noescape
func q8_0AVX2(y *float32, x *byte, d *float32, n int)

func init() {
	if cpu.X86.HasAVX2 {
		dequantizers[Q4_0] = dqQ4_0AVX2
		dequantizers[Q4_K] = dqQ4_KAVX2
		dequantizers[Q8_0] = dqQ8_0AVX2
	}
}

// dqQ4_0AVX2 is dqQ4_0 through q4_0AVX2, in batches whose scales sit on the stack.
func dqQ4_0AVX2(y []float32, x []byte) {
	tab := f16Table()
	var d [64]float32
	for n := min(len(y)/32, len(x)/18); n > 0; {
		k := min(n, len(d))
		for i := range k {
			d[i] = half(tab, x[18*i:])
		}
		q4_0AVX2(&y[0], &x[0], &d[0], k)
		x, y, n = x[18*k:], y[32*k:], n-k
	}
}

// dqQ4_KAVX2 is dqQ4_K through q4_KAVX2: the sub-block scales and mins are unpacked in Go, as
// dqQ4_K does, 16 blocks at a time.
func dqQ4_KAVX2(y []float32, x []byte) {
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
		q4_KAVX2(&y[0], &x[0], &dm[0], k)
		x, y, n = x[144*k:], y[256*k:], n-k
	}
}

// dqQ8_0AVX2 is dqQ8_0 through q8_0AVX2, in batches whose scales sit on the stack.
func dqQ8_0AVX2(y []float32, x []byte) {
	tab := f16Table()
	var d [64]float32
	for n := min(len(y)/32, len(x)/34); n > 0; {
		k := min(n, len(d))
		for i := range k {
			d[i] = half(tab, x[34*i:])
		}
		q8_0AVX2(&y[0], &x[0], &d[0], k)
		x, y, n = x[34*k:], y[32*k:], n-k
	}
}
