//go:build amd64 && !purego

package ggufx

import "golang.org/x/sys/cpu"

// On amd64 with AVX2, Q4_0 is dequantized by an assembly kernel (kernels_amd64.s). The block
// scales are widened from fp16 in Go (a table lookup), so the kernel needs AVX2 alone; each
// value is (q-8) converted to float32 and multiplied by the scale, one rounding, as in dqQ4_0.
// The purego build tag keeps the Go kernels.

// q4_0AVX2 dequantizes n blocks of x into y, block i scaled by d[i].
//
//go:noescape
func q4_0AVX2(y *float32, x *byte, d *float32, n int)

func init() {
	if cpu.X86.HasAVX2 {
		dequantizers[Q4_0] = dqQ4_0AVX2
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
