package ggufx

import "testing"

// BenchmarkKernels runs each dequantization kernel alone on 1 Mi elements in memory (in the
// cache hierarchy's L2/L3 range for the input, not the output), without File or allocation:
// the kernels' own speed, in bytes of output.
func BenchmarkKernels(b *testing.B) {
	const n = 1 << 20
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q6_K} {
		src := make([]byte, n/typ.BlockSize()*typ.BlockBytes())
		for i := range src {
			src[i] = byte(i * 7)
		}
		for i := 0; i < len(src); i += typ.BlockBytes() { // a finite half at every place one can be
			for _, at := range []int{0, 2, 80, 82, 108, 208} {
				if at+2 <= typ.BlockBytes() {
					src[i+at], src[i+at+1] = 0, 0x3c
				}
			}
		}
		dst := make([]float32, n)
		dq := dequantizers[typ]
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				dq(dst, src)
			}
		})
	}
}
