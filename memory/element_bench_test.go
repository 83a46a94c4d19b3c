package memory_test

import (
	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// BenchmarkElementAccess puts the non-generic element access (memory.At, memory.SetAt, and the
// slice twins t.Float64s, t.Float32s that notebooks call) beside its generic form (core.At,
// core.Set, core.Elements), one element of a 64×64 tensor per operation; "through-Copy" is how
// At and SetAt worked before (a 0-d view and a Copy).
func BenchmarkElementAccess(b *testing.B) {
	f64 := core.MustFromSlice(make([]float64, 64*64), 64, 64)
	f32 := core.MustFromSlice(make([]float32, 64*64), 64, 64)
	f16 := core.MustNew(core.Float16, 64, 64)
	i, j := int64(17), int64(42)
	var sink complex128
	var sinkF float64
	b.Run("core.At[float64]", func(b *testing.B) {
		for b.Loop() {
			v, _ := core.At[float64](f64, i, j)
			sinkF += v
		}
	})
	b.Run("memory.At(float64)", func(b *testing.B) {
		for b.Loop() {
			v, _ := memory.At(f64, i, j)
			sink += v
		}
	})
	b.Run("memory.At(float64)-through-Copy", func(b *testing.B) {
		for b.Loop() {
			v, _ := memory.SlowAt(f64, []int64{i, j})
			sink += v
		}
	})
	b.Run("core.At[float32]", func(b *testing.B) {
		for b.Loop() {
			v, _ := core.At[float32](f32, i, j)
			sinkF += float64(v)
		}
	})
	b.Run("memory.At(float32)", func(b *testing.B) {
		for b.Loop() {
			v, _ := memory.At(f32, i, j)
			sink += v
		}
	})
	b.Run("memory.At(float16)", func(b *testing.B) {
		for b.Loop() {
			v, _ := memory.At(f16, i, j)
			sink += v
		}
	})
	b.Run("core.Set[float64]", func(b *testing.B) {
		for b.Loop() {
			_ = core.Set(f64, 2.5, i, j)
		}
	})
	b.Run("memory.SetAt(float64)", func(b *testing.B) {
		for b.Loop() {
			_ = memory.SetAt(f64, 2.5, i, j)
		}
	})
	b.Run("memory.SetAt(float64)-through-Copy", func(b *testing.B) {
		for b.Loop() {
			_ = memory.SlowSetAt(f64, 2.5, []int64{i, j})
		}
	})
	b.Run("core.Set[float32]", func(b *testing.B) {
		for b.Loop() {
			_ = core.Set(f32, float32(2.5), i, j)
		}
	})
	b.Run("memory.SetAt(float32)", func(b *testing.B) {
		for b.Loop() {
			_ = memory.SetAt(f32, 2.5, i, j)
		}
	})
	b.Run("memory.SetAt(float16)", func(b *testing.B) {
		for b.Loop() {
			_ = memory.SetAt(f16, 2.5, i, j)
		}
	})
	b.Run("core.Elements[float64]", func(b *testing.B) {
		for b.Loop() {
			s, _ := core.Elements[float64](f64)
			sinkF += s[0]
		}
	})
	b.Run("Tensor.Float64s", func(b *testing.B) {
		for b.Loop() {
			s, _ := f64.Float64s()
			sinkF += s[0]
		}
	})
	b.Run("Tensor.ReadOnlyFloat32s", func(b *testing.B) {
		for b.Loop() {
			s, _ := f32.ReadOnlyFloat32s()
			sinkF += float64(s[0])
		}
	})
	_, _ = sink, sinkF
}
