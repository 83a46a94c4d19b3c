package ggufx_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
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

// BenchmarkDequantize converts a 16 Mi-element tensor to float32; its bytes per second are
// those of the output, to compare with BenchmarkCopyOutput.
func BenchmarkDequantize(b *testing.B) {
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(9, 9))
	for _, typ := range []ggufx.Type{ggufx.Q4_0, ggufx.Q8_0, ggufx.Q4_K, ggufx.Q6_K} {
		blocks := randomBlocks(rng, typ, benchElements/typ.BlockSize())
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
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * benchElements)
			for b.Loop() {
				x, err := f.Dequantize("w", core.Float32)
				if err != nil {
					b.Fatal(err)
				}
				x.Release()
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
