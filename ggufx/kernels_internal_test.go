package ggufx

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// BenchmarkKernels runs each dequantization kernel alone on 1 Mi elements in memory (in the
// cache hierarchy's L2/L3 range for the input, not the output), without File or allocation:
// the kernels' own speed, in bytes of output.
func BenchmarkKernels(b *testing.B) {
	const n = 1 << 20
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q6_K, IQ4_XS, IQ2_XXS, NVFP4, IQ1_S, IQ1_M, IQ2_XS, IQ2_S,
		IQ3_XXS, IQ3_S, IQ4_NL, TQ1_0, TQ2_0, Q1_0, Q2_0} {
		src := make([]byte, n/typ.BlockSize()*typ.BlockBytes())
		for i := range src {
			src[i] = byte(i * 7)
		}
		for i := 0; i < len(src); i += typ.BlockBytes() { // a finite half at every place one can be
			for _, at := range []int{0, 2, 52, 64, 80, 82, 108, 208} {
				if at+2 <= typ.BlockBytes() {
					src[i+at], src[i+at+1] = 0, 0x3c
				}
			}
		}
		dst := make([]float32, n)
		dq := dequantizers[typ]
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * n)
			defer cpuClock(b)()
			for b.Loop() {
				dq(dst, src)
			}
		})
	}
}

// The kernel Dequantize uses for each type (the assembly one where the build has it) agrees
// bit for bit with the Go kernel on random blocks: every byte value, any half as the scale,
// and lengths that are not a multiple of the assembly's batch.
func TestKernelsAgreeWithGo(t *testing.T) {
	goKernels := map[Type]dequantizer{Q4_0: dqQ4_0, Q8_0: dqQ8_0, Q4_K: dqQ4_K, IQ4_NL: dqIQ4_NL, IQ4_XS: dqIQ4_XS, NVFP4: dqNVFP4,
		IQ2_XXS: dqIQ2_XXS, IQ2_XS: dqIQ2_XS, IQ2_S: dqIQ2_S, IQ3_XXS: dqIQ3_XXS, IQ3_S: dqIQ3_S, IQ1_S: dqIQ1_S, IQ1_M: dqIQ1_M, TQ2_0: dqTQ2_0, TQ1_0: dqTQ1_0, Q1_0: dqQ1_0, Q2_0: dqQ2_0, Q6_K: dqQ6_K}
	rng := rand.New(rand.NewPCG(7, 8))
	for typ, ref := range goKernels {
		for _, blocks := range []int{1, 15, 16, 17, 63, 64, 65, 200} {
			src := make([]byte, blocks*typ.BlockBytes())
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			want := make([]float32, blocks*typ.BlockSize())
			ref(want, src)
			kernels := map[string]dequantizer{"cached": dequantizers[typ]}
			if s, ok := streamers[typ]; ok {
				kernels["non-temporal"] = s
			}
			for name, dq := range kernels {
				got := aligned32(len(want)) // what the non-temporal stores need
				dq(got, src)
				for i := range want {
					if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
						t.Fatalf("%s (%s), %d blocks: element %d is %v (%#x), the Go kernel's %v (%#x)", typ, name, blocks, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
	}
}

// aligned32 returns n float32s whose first is 32-byte aligned.
func aligned32(n int) []float32 {
	b := make([]float32, n+8)
	off := int((32 - uintptr(unsafe.Pointer(&b[0]))%32) % 32 / 4)
	return b[off : off+n]
}
