package memory_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/x448/float16"
)

const side = 4096 // 4096×4096 float32 = 64 MiB

// BenchmarkCopy64MiB is the peer of BenchmarkTransposeMaterialize4096: Go's copy of the same
// 64 MiB, the bandwidth a transpose can hope to approach.
func BenchmarkCopy64MiB(b *testing.B) {
	src := make([]float32, side*side)
	fillFloat32s(src)
	dst := fillFloat32s(make([]float32, side*side)) // touched, like the transpose's destination
	b.SetBytes(side * side * 4)
	for b.Loop() {
		copy(dst, src)
	}
}

// BenchmarkTransposeMaterialize4096 is memory.Contiguous of a transposed 4096×4096 float32
// view (without the allocation: Copy into a preallocated tensor, as Contiguous does after New).
func BenchmarkTransposeMaterialize4096(b *testing.B) {
	x := core.MustFromSlice(fillFloat32s(make([]float32, side*side)), side, side)
	xt, err := x.Transpose()
	if err != nil {
		b.Fatal(err)
	}
	dst := core.MustNew(core.Float32, side, side)
	ds, err := core.Elements[float32](dst)
	if err != nil {
		b.Fatal(err)
	}
	fillFloat32s(ds) // fault the pages in before timing, as the peer does
	b.SetBytes(side * side * 4)
	for b.Loop() {
		if err := memory.Copy(dst, xt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkContiguousTransposed4096 is the same with Contiguous's allocation included.
func BenchmarkContiguousTransposed4096(b *testing.B) {
	x := core.MustFromSlice(fillFloat32s(make([]float32, side*side)), side, side)
	xt, err := x.Transpose()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(side * side * 4)
	for b.Loop() {
		if _, err := memory.Contiguous(xt); err != nil {
			b.Fatal(err)
		}
	}
}

// fillFloat32s writes every element, so that the memory is really mapped (an untouched
// allocation reads as the kernel's shared zero page, which flatters some access patterns, and
// its first write pays a page fault per 4 KiB, which a 10-iteration run would average in).
func fillFloat32s(x []float32) []float32 {
	for i := range x {
		x[i] = float32(i)
	}
	return x
}

// castSizes are the element counts of the cast benchmarks: 4 MiB of float32 (in cache) and
// 64 MiB (from memory).
var castSizes = []struct {
	name string
	n    int
}{{"4MiB", 1 << 20}, {"64MiB", 16 << 20}}

func castSource(n int) []float32 {
	r := rand.New(rand.NewPCG(5, 6))
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(r.NormFloat64() * 100)
	}
	return src
}

// benchCopy times memory.Copy(dst, src), reporting bytes per op; dst is written once before
// timing, so that no first-touch page fault is timed.
func benchCopy(b *testing.B, dst, src *core.Tensor, bytes int64) {
	if err := memory.Copy(dst, src); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(bytes)
	for b.Loop() {
		if err := memory.Copy(dst, src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCastFloat32ToFloat16 casts float32 to float16 with Copy (MB/s of float32 read).
func BenchmarkCastFloat32ToFloat16(b *testing.B) {
	for _, c := range castSizes {
		b.Run(c.name, func(b *testing.B) {
			src := core.MustFromSlice(castSource(c.n))
			benchCopy(b, core.MustNew(core.Float16, int64(c.n)), src, int64(c.n)*4)
		})
	}
}

// BenchmarkCastFloat32ToFloat16Peer is the peer: a loop over float16.Fromfloat32.
func BenchmarkCastFloat32ToFloat16Peer(b *testing.B) {
	for _, c := range castSizes {
		b.Run(c.name, func(b *testing.B) {
			src := castSource(c.n)
			dst := make([]float16.Float16, c.n)
			b.SetBytes(int64(c.n) * 4)
			for b.Loop() {
				for i, f := range src {
					dst[i] = float16.Fromfloat32(f)
				}
			}
		})
	}
}

// BenchmarkCastFloat16ToFloat32 casts float16 to float32 with Copy (MB/s of float32 written).
func BenchmarkCastFloat16ToFloat32(b *testing.B) {
	for _, c := range castSizes {
		b.Run(c.name, func(b *testing.B) {
			src := core.MustNew(core.Float16, int64(c.n))
			if err := memory.Copy(src, core.MustFromSlice(castSource(c.n))); err != nil {
				b.Fatal(err)
			}
			benchCopy(b, core.MustNew(core.Float32, int64(c.n)), src, int64(c.n)*4)
		})
	}
}

// BenchmarkCastFloat16ToFloat32Peer is the peer: a loop over float16.Float32.
func BenchmarkCastFloat16ToFloat32Peer(b *testing.B) {
	for _, c := range castSizes {
		b.Run(c.name, func(b *testing.B) {
			src := make([]float16.Float16, c.n)
			for i, f := range castSource(c.n) {
				src[i] = float16.Fromfloat32(f)
			}
			dst := make([]float32, c.n)
			b.SetBytes(int64(c.n) * 4)
			for b.Loop() {
				for i, h := range src {
					dst[i] = h.Float32()
				}
			}
		})
	}
}

// BenchmarkCastBFloat16 casts 1 Mi float32 to bfloat16 and back with Copy (MB/s of float32).
func BenchmarkCastBFloat16(b *testing.B) {
	const n = 1 << 20
	f32 := core.MustFromSlice(castSource(n))
	bf := core.MustNew(core.BFloat16, n)
	for _, c := range []struct {
		name     string
		dst, src *core.Tensor
	}{{"float32-to-bfloat16", bf, f32}, {"bfloat16-to-float32", f32, bf}} {
		b.Run(c.name, func(b *testing.B) { benchCopy(b, c.dst, c.src, n*4) })
	}
}

// BenchmarkClone clones 1 Mi float64 (8 MiB) views with a few stride patterns.
func BenchmarkClone(b *testing.B) {
	base := core.MustNew(core.Float64, 1024, 1024)
	big := core.MustNew(core.Float64, 1024, 2048)
	for _, x := range []*core.Tensor{base, big} {
		v, err := core.Elements[float64](x)
		if err != nil {
			b.Fatal(err)
		}
		for i := range v {
			v[i] = float64(i)
		}
	}
	cases := []struct {
		name string
		view func() (*core.Tensor, error)
	}{
		{"contiguous", func() (*core.Tensor, error) { return base, nil }},
		{"reversed", func() (*core.Tensor, error) { return base.Reverse(1) }},
		{"step2", func() (*core.Tensor, error) { return big.Slice(1, core.Begin, core.End, 2) }},
		{"transposed", func() (*core.Tensor, error) { return base.Transpose() }},
		{"broadcast", func() (*core.Tensor, error) {
			row, err := base.Slice(0, 0, 1, 1)
			if err != nil {
				return nil, err
			}
			return row.BroadcastTo(1024, 1024)
		}},
		{"permuted4d", func() (*core.Tensor, error) {
			r, err := base.Reshape(16, 64, 32, 32)
			if err != nil {
				return nil, err
			}
			return r.Permute(0, 3, 1, 2)
		}},
		{"permuted5d-small-inner", func() (*core.Tensor, error) {
			r, err := base.Reshape(4, 8, 32, 256, 4)
			if err != nil {
				return nil, err
			}
			return r.Permute(3, 1, 0, 2, 4)
		}},
	}
	for _, c := range cases {
		v, err := c.view()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(1024 * 1024 * 8)
			for b.Loop() {
				if _, err := memory.Clone(v, memory.COrder); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCopyOverlap prices the overlap handling of Copy on 1024×1024 float64 (8 MiB):
// "disjoint" is a plain copy between two buffers (the overlap test is a few comparisons),
// "shifted" copies a view onto the same buffer shifted by one row (through a temporary, as
// NumPy's copyto does), and "plain-copy" is Go's copy() of the same bytes, the floor.
func BenchmarkCopyOverlap(b *testing.B) {
	const n = 1024
	a := core.MustFromSlice(make([]float64, (n+1)*n), n+1, n)
	other := core.MustNew(core.Float64, n, n)
	lower, _ := a.Slice(0, 1, n+1, 1)
	upper, _ := a.Slice(0, 0, n, 1)
	b.Run("disjoint", func(b *testing.B) {
		b.SetBytes(n * n * 8)
		for b.Loop() {
			if err := memory.Copy(other, upper); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("shifted", func(b *testing.B) {
		b.SetBytes(n * n * 8)
		for b.Loop() {
			if err := memory.Copy(lower, upper); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain-copy", func(b *testing.B) {
		dst, src := make([]float64, n*n), make([]float64, n*n)
		b.SetBytes(n * n * 8)
		for b.Loop() {
			copy(dst, src)
		}
	})
}

// BenchmarkTransposeAgainstCopy interleaves the two benchmarks above, copy() of 64 MiB and the
// transposed materialization of a 4096×4096 float32 view into a preallocated tensor, round by
// round (21 rounds of one each per b.N), so that both see the same load on a shared machine. It
// reports the median time of each and the median of the per-round ratios of transpose to copy
// speed (ratio; the goal is ≥ 0.8 with two processors, ≥ 0.6 with one). The sources and
// destinations are the benchmarks' own (Go memory, written before timing). kernels=best runs the
// kernels this CPU takes; on a CPU with AVX-512, kernels=avx2 runs the AVX ones that a CPU
// without it takes (memory.UseAVX512), so that one machine measures both.
func BenchmarkTransposeAgainstCopy(b *testing.B) {
	b.Run("kernels=best", benchTransposeAgainstCopy)
	b.Run("kernels=avx2", func(b *testing.B) {
		if !memory.UseAVX512(false) {
			b.Skip("this CPU has no AVX-512 kernels to turn off: kernels=best is the AVX path here")
		}
		defer memory.UseAVX512(true)
		benchTransposeAgainstCopy(b)
	})
}

func benchTransposeAgainstCopy(b *testing.B) {
	src := fillFloat32s(make([]float32, side*side))
	dstCopy := fillFloat32s(make([]float32, side*side))
	x := core.MustFromSlice(fillFloat32s(make([]float32, side*side)), side, side)
	xt, err := x.Transpose()
	if err != nil {
		b.Fatal(err)
	}
	dst := core.MustNew(core.Float32, side, side)
	ds, err := core.Elements[float32](dst)
	if err != nil {
		b.Fatal(err)
	}
	fillFloat32s(ds)
	var tc, tt, ratio []float64
	for range b.N {
		for range 21 {
			t0 := time.Now()
			copy(dstCopy, src)
			t1 := time.Now()
			if err := memory.Copy(dst, xt); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			c, t := t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds()
			tc, tt, ratio = append(tc, c), append(tt, t), append(ratio, c/t)
		}
	}
	const mb = side * side * 4 / 1e6
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(mb/medianOf(tc), "copy-MB/s")
	b.ReportMetric(mb/medianOf(tt), "transpose-MB/s")
	b.ReportMetric(medianOf(ratio), "ratio")
}

func medianOf(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}
