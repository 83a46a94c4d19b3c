package ggufx_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/ggufx/internal/ggmlref"
	"github.com/dlpack-go/dlpack/memory"
)

// sparseFile writes a GGUF file with one F32 tensor of n elements whose data is a hole (the file
// is extended with Truncate, nothing written): a file of any size costs no disk.
func sparseFile(b *testing.B, dir string, n uint64) string {
	r := start(3, 1, 1).str("general.architecture").u32(8).str("llama")
	r.tensor("w", 0, 0, n)
	r.data(32, 0, nil)
	path := filepath.Join(dir, fmt.Sprintf("sparse-%d.gguf", n))
	if err := os.WriteFile(path, r.b, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(r.b))+int64(4*n)); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpen: Open (map, read the header) and Close cost the same for 10 MiB and 1 GiB.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	for _, size := range []uint64{10 << 20, 1 << 30} {
		path := sparseFile(b, dir, size/4)
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			for b.Loop() {
				f, err := ggufx.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				x, err := f.Tensor("w")
				if err != nil {
					b.Fatal(err)
				}
				x.Release()
				f.Close()
			}
		})
	}
}

// benchElements is the size of the dequantization benchmarks' tensor: 16 Mi elements, 64 MiB
// of float32.
const benchElements = 16 << 20

// benchTypes are the types BenchmarkDequantize converts: those with assembly kernels, the six
// compared with ggml, and every kernel added for the IQ, TQ, NVFP4, Q1_0 and Q2_0 types.
var benchTypes = []ggufx.Type{ggufx.Q4_0, ggufx.Q8_0, ggufx.Q4_K, ggufx.Q6_K, ggufx.IQ4_XS, ggufx.IQ2_XXS,
	ggufx.NVFP4, ggufx.IQ1_S, ggufx.IQ1_M, ggufx.IQ2_XS, ggufx.IQ2_S, ggufx.IQ3_XXS, ggufx.IQ3_S,
	ggufx.IQ4_NL, ggufx.TQ1_0, ggufx.TQ2_0, ggufx.Q1_0, ggufx.Q2_0}

// BenchmarkDequantize converts a 16 Mi-element tensor (random blocks, finite scales) to float32,
// side by side with ggml's own dequantize_row_* (one thread, through purego) on the same blocks;
// bytes per second are those of the output (64 MiB):
//
//   - ggufx/T: File.Dequantize, which makes its output through memory's allocator (which keeps a
//     released block for the next allocation, so in this loop its pages are not faulted anew);
//   - ggufx-nocache/T: the same with memory's cache off, every output faulted in anew (in huge
//     pages, as memory asks for them), as a first call is;
//   - ggufx-into/T: File.DequantizeInto a float32 tensor written before (as ggml-warm);
//   - ggml-fresh/T: dequantize_row_* into a fresh 64 MiB mapping, as C's malloc of that size is
//     (mmap, and munmap at free: every page faulted in anew);
//   - ggml-warm/T: dequantize_row_* into a buffer it has already written;
//   - copy-fresh, copy-warm: copy() of 64 MiB into a tensor from memory's allocator, as
//     Dequantize's, and into a buffer written before.
//
// Run it with -cpu 1 for one processor (Dequantize splits large tensors between GOMAXPROCS
// goroutines).
func BenchmarkDequantize(b *testing.B) {
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(9, 9))
	src := make([]byte, 4*benchElements)
	for i := range src {
		src[i] = byte(i)
	}
	warm := make([]float32, benchElements)
	warmBytes := unsafe.Slice((*byte)(unsafe.Pointer(&warm[0])), 4*benchElements)
	copy(warmBytes, src)
	b.Run("copy-fresh", func(b *testing.B) {
		defer ggufx.CPUClock(b)()
		copyFresh(b, src)
	})
	b.Run("copy-warm", func(b *testing.B) {
		b.SetBytes(4 * benchElements)
		defer ggufx.CPUClock(b)()
		for b.Loop() {
			copy(warmBytes, src)
		}
	})
	into := core.MustNew(core.Float32, benchElements/4096, 4096)
	defer into.Release()
	for _, typ := range benchTypes {
		blocks := ggmlBlocks(rng, typ, benchElements/typ.BlockSize(), true)
		r := start(3, 1, 0).tensor("w", uint32(typ), 0, 4096, benchElements/4096)
		r.data(32, 0, nil).bytes(blocks...)
		path := filepath.Join(dir, typ.String()+".gguf")
		if err := os.WriteFile(path, r.b, 0o644); err != nil {
			b.Fatal(err)
		}
		f, err := ggufx.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("ggufx/"+typ.String(), func(b *testing.B) {
			b.SetBytes(4 * benchElements)
			defer ggufx.CPUClock(b)()
			for b.Loop() {
				x, err := f.Dequantize("w", core.Float32)
				if err != nil {
					b.Fatal(err)
				}
				x.Release()
			}
		})
		b.Run("ggufx-nocache/"+typ.String(), func(b *testing.B) {
			prev := memory.SetAllocation(func() memory.Allocation {
				a := memory.DefaultAllocation()
				a.CacheBytes = 0 // every release unmaps: each output's pages are faulted in anew
				return a
			}())
			defer memory.SetAllocation(prev)
			b.SetBytes(4 * benchElements)
			defer ggufx.CPUClock(b)()
			for b.Loop() {
				x, err := f.Dequantize("w", core.Float32)
				if err != nil {
					b.Fatal(err)
				}
				x.Release()
			}
		})
		b.Run("ggufx-into/"+typ.String(), func(b *testing.B) {
			if err := f.DequantizeInto("w", into); err != nil { // touched before the clock
				b.Fatal(err)
			}
			b.SetBytes(4 * benchElements)
			defer ggufx.CPUClock(b)()
			for b.Loop() {
				if err := f.DequantizeInto("w", into); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ggml-fresh/"+typ.String(), func(b *testing.B) {
			l := ggmlref.Load(b)
			b.SetBytes(4 * benchElements)
			defer ggufx.CPUClock(b)()
			for b.Loop() {
				y, free, err := ggufx.FreshFloats(benchElements)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Dequantize(int(typ), blocks, y); err != nil {
					b.Fatal(err)
				}
				free()
			}
		})
		b.Run("ggml-warm/"+typ.String(), func(b *testing.B) {
			l := ggmlref.Load(b)
			if err := l.Dequantize(int(typ), blocks, warm); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(4 * benchElements)
			defer ggufx.CPUClock(b)()
			for b.Loop() {
				if err := l.Dequantize(int(typ), blocks, warm); err != nil {
					b.Fatal(err)
				}
			}
		})
		f.Close()
	}
}

// BenchmarkCopyOutput is copy() of the dequantization benchmarks' output size (64 MiB) into a
// tensor taken as Dequantize takes its own: the yardstick of BenchmarkDequantize.
func BenchmarkCopyOutput(b *testing.B) {
	src := make([]byte, 4*benchElements)
	for i := range src {
		src[i] = byte(i)
	}
	copyFresh(b, src)
}

// copyFresh copies src (4·benchElements bytes) into a new float32 tensor from memory's
// allocator, taken as Dequantize takes its output, in each iteration of b.
func copyFresh(b *testing.B, src []byte) {
	b.SetBytes(4 * benchElements)
	for b.Loop() {
		x, err := memory.NewUninit(core.Float32, benchElements)
		if err != nil {
			b.Fatal(err)
		}
		dst, err := x.Bytes()
		if err != nil {
			b.Fatal(err)
		}
		copy(dst, src)
		x.Release()
	}
}
