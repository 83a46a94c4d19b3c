package core_test

import (
	"testing"
	"unsafe"

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

// BenchmarkWrapExplicitImport: what a bridge pays to import a one-dimensional tensor it releases
// itself (core.DescOf, WrapExplicit, Release), beside Wrap, which also registers a cleanup.
func BenchmarkWrapExplicitImport(b *testing.B) {
	data := make([]float64, 1000)
	shape, strides := []int64{1000}, []int64{1}
	dl := &core.DLTensor{Data: unsafe.Pointer(&data[0]), Device: core.CPUDevice, Ndim: 1,
		Dtype: core.Float64, Shape: &shape[0], Strides: &strides[0]}
	fromDesc := func(wrap func(core.Desc, func()) (*core.Tensor, error)) func(*int) (*core.Tensor, error) {
		return func(released *int) (*core.Tensor, error) {
			d, err := core.DescOf(dl)
			if err != nil {
				return nil, err
			}
			return wrap(d, func() { *released++ })
		}
	}
	for _, c := range []struct {
		name string
		wrap func(released *int) (*core.Tensor, error)
	}{
		{"WrapExplicit", fromDesc(core.WrapExplicit)},
		{"Wrap", fromDesc(core.Wrap)},
		{"ImportExplicitWith", func(released *int) (*core.Tensor, error) {
			t, _, err := core.ImportExplicitWith(dl, 0, countRelease{n: released})
			return t, err
		}},
		{"WrapExplicitWith", func(released *int) (*core.Tensor, error) {
			d, err := core.DescOf(dl)
			if err != nil {
				return nil, err
			}
			t, _, err := core.WrapExplicitWith(d, countRelease{n: released})
			return t, err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			released := 0
			b.ReportAllocs()
			for b.Loop() {
				t, err := c.wrap(&released)
				if err != nil {
					b.Fatal(err)
				}
				t.Release()
			}
			if released != b.N {
				b.Fatalf("released %d of %d", released, b.N)
			}
		})
	}
}

// BenchmarkNew allocates a zeroed tensor: a small one (its data in the tensor's allocation: one
// allocation in all) and a larger one (two).
func BenchmarkNew(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape []int64
	}{{"256B", []int64{1, 64}}, {"64KiB", []int64{128, 128}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := core.New(core.Float32, c.shape...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
