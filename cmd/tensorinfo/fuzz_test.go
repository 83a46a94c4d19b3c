package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// FuzzInspect: whatever a file holds, as .npy, .npz, .gguf or .parquet (or by its first bytes), inspecting it (values included) ends
// in a report or an error, never a panic, a hang or an allocation beyond what it holds.
func FuzzInspect(f *testing.F) {
	var npy, npz bytes.Buffer
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err := numpyx.Write(&npy, x); err != nil {
		f.Fatal(err)
	}
	z := numpyx.NewNPZWriter(&npz)
	if err := z.Write("x", x); err != nil {
		f.Fatal(err)
	}
	if err := z.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(npy.Bytes())
	f.Add(npz.Bytes())
	f.Add([]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'}"))
	f.Add(sharedBlobNPZ(f, 3, npy.Bytes()))
	dir := f.TempDir()
	// a small GGUF file (plain and quantized tensors, metadata) and a small Parquet file
	// (fixed_shape_tensor, permuted, and primitive columns), written by ggufx and parquetx
	for _, name := range []string{"seed.gguf", "seed.parquet"} {
		path := filepath.Join(dir, name)
		if name == "seed.gguf" {
			writeGGUF(f, path, nil)
		} else {
			writeParquet(f, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"f.npy", "f.npz", "f.gguf", "f.parquet", "f.bin"} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := inspect(path, options{stats: true, repr: true, maxInflated: 64 << 20})
			if err == nil && r.Format == "" {
				t.Fatalf("%s: a report without a format", name)
			}
		}
	})
}
