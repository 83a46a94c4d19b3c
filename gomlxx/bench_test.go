package gomlxx_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/gomlxx"
	"github.com/dlpack-go/dlpack/gonumx"
)

// gonumGoMLXGonum is the round trip Gonum → GoMLX → Gonum through this module: one copy into
// GoMLX where the matrix's memory is not GoMLX's (ToTensor), none on the way back.
func gonumGoMLXGonum(b *testing.B, m *mat.Dense) *mat.Dense {
	mt, err := gonumx.FromDense(m)
	if err != nil {
		b.Fatal(err)
	}
	g, err := gomlxx.ToTensor(mt)
	if err != nil {
		b.Fatal(err)
	}
	v, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
	if err != nil {
		b.Fatal(err)
	}
	d, err := gonumx.ToDense(v, adapters.ZeroCopyOnly())
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkGonumRoundTrip: mat.Dense → *tensors.Tensor → mat.Dense, float64, against GoMLX's
// own copying constructors (FromFlatDataAndDimensions in, a copy of ConstFlatData out).
func BenchmarkGonumRoundTrip(b *testing.B) {
	for _, size := range []struct {
		name       string
		rows, cols int
	}{{"1KiB", 16, 8}, {"1GiB", 16384, 8192}} {
		m := mat.NewDense(size.rows, size.cols, nil)
		b.Run(fmt.Sprintf("size=%s/dlpack-go", size.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size.rows * size.cols * 8))
			gonumGoMLXGonum(b, m) // warm-up: the heap grows here, not in the timed loop
			for b.Loop() {
				gonumGoMLXGonum(b, m)
			}
		})
		// the matrix lives in memory GoMLX allocated (a view FromTensor made): ToTensor hands
		// the GoMLX tensor back, and nothing is copied either way
		g := tensors.FromShape(shapes.Make(dtypes.Float64, size.rows, size.cols))
		v, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
		if err != nil {
			b.Fatal(err)
		}
		inGoMLX, err := gonumx.ToDense(v, adapters.ZeroCopyOnly())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("size=%s/dlpack-go-GoMLX-memory", size.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size.rows * size.cols * 8))
			for b.Loop() {
				mt, err := gonumx.FromDense(inGoMLX)
				if err != nil {
					b.Fatal(err)
				}
				back, err := gomlxx.ToTensor(mt, adapters.ZeroCopyOnly())
				if err != nil || back != g {
					b.Fatal(err, "not the same GoMLX tensor")
				}
				v, err := gomlxx.FromTensor(back, adapters.ZeroCopyOnly())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := gonumx.ToDense(v, adapters.ZeroCopyOnly()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("size=%s/gomlx-FromFlatData-ConstFlatData", size.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size.rows * size.cols * 8))
			gomlxOwn(b, m) // warm-up, as above
			for b.Loop() {
				gomlxOwn(b, m)
			}
		})
		m = nil
	}
}

// gomlxOwn is the same round trip with GoMLX's own copying constructors.
func gomlxOwn(b *testing.B, m *mat.Dense) *mat.Dense {
	raw := m.RawMatrix()
	t := tensors.FromFlatDataAndDimensions(raw.Data, raw.Rows, raw.Cols)
	var back *mat.Dense
	if err := tensors.ConstFlatData(t, func(flat []float64) {
		back = mat.NewDense(raw.Rows, raw.Cols, slices.Clone(flat))
	}); err != nil || back == nil {
		b.Fatal(err)
	}
	return back
}
