package core_test

import (
	"testing"

	"github.com/dlpack-go/dlpack/core"
)

// BenchmarkFromSlice wraps a 1 KiB and a 1 GiB slice: the cost is the same and allocates only
// the tensor's metadata, never data-sized memory (see B/op).
func BenchmarkFromSlice(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 8}, {"1GiB", 1 << 28}} {
		data := make([]float32, c.n)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x, err := core.FromSlice(data, int64(c.n/256), 256)
				if err != nil {
					b.Fatal(err)
				}
				_ = x
			}
		})
	}
}

// BenchmarkViews measures the metadata cost of a Transpose and a Slice of a large tensor.
func BenchmarkViews(b *testing.B) {
	x := core.MustFromSlice(make([]float32, 1<<20), 1024, 1024)
	b.ReportAllocs()
	for b.Loop() {
		t, err := x.Transpose()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.Slice(0, 1, core.End, 2); err != nil {
			b.Fatal(err)
		}
	}
}
