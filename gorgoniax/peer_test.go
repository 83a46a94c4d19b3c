package gorgoniax_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/gorgoniax"
)

// gonumToGorgonia is our path: mat.Dense → core → tensor.Dense, sharing memory.
func gonumToGorgonia(m *mat.Dense, opts ...adapters.Option) (*tensor.Dense, error) {
	t, err := gonumx.FromDense(m)
	if err != nil {
		return nil, err
	}
	return gorgoniax.ToDense(t, opts...)
}

// gorgoniaToGonum is our path back: tensor.Dense → core → mat.Matrix.
func gorgoniaToGonum(d *tensor.Dense, opts ...adapters.Option) (mat.Matrix, error) {
	x, err := gorgoniax.FromDense(d)
	if err != nil {
		return nil, err
	}
	return gonumx.ToMatrix(x, opts...)
}

// TestPeerFailsWhereWeDoNot documents the defects of tensor.FromMat64 and tensor.ToMat64 that
// this project's bridge does not have.
func TestPeerFailsWhereWeDoNot(t *testing.T) {
	t.Run("sliced mat.Dense (stride > cols)", func(t *testing.T) {
		m := mat.NewDense(4, 5, leakcheck.Seq(20))
		s := m.Slice(1, 3, 1, 4).(*mat.Dense) // 2×3 with stride 5

		var peerPanic any
		func() {
			defer func() { peerPanic = recover() }()
			tensor.FromMat64(s, tensor.UseUnsafe())
		}()
		assert.NotNil(t, peerPanic, "tensor.FromMat64 ignores the stride and panics")
		t.Logf("tensor.FromMat64(sliced) panicked: %v", peerPanic)

		d, err := gonumToGorgonia(s, adapters.ZeroCopyOnly())
		require.NoError(t, err)
		for i := range 2 {
			for j := range 3 {
				g, err := d.At(i, j)
				require.NoError(t, err)
				assert.Equal(t, s.At(i, j), g)
			}
		}
		require.NoError(t, d.SetAt(0.5, 1, 2)) // shared: Gonum sees Gorgonia's write
		assert.Equal(t, 0.5, m.At(2, 3))
	})

	t.Run("column-major tensor.Dense", func(t *testing.T) {
		// The matrix [[1 2 3] [4 5 6]] stored column-major.
		f := tensor.New(tensor.WithShape(2, 3), tensor.AsFortran([]float64{1, 2, 3, 4, 5, 6}))
		want := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
		for i := range 2 {
			for j := range 3 {
				g, err := f.At(i, j)
				require.NoError(t, err)
				require.Equal(t, want.At(i, j), g, "Gorgonia itself reads the matrix right")
			}
		}

		peer, err := tensor.ToMat64(f)
		require.NoError(t, err)
		assert.False(t, mat.Equal(want, peer), "tensor.ToMat64 reads column-major memory as row-major")
		t.Logf("tensor.ToMat64(column-major) = %v, want %v", mat.Formatted(peer, mat.Squeeze()), mat.Formatted(want, mat.Squeeze()))

		ours, err := gorgoniaToGonum(f, adapters.ZeroCopyOnly())
		require.NoError(t, err)
		assert.True(t, mat.Equal(want, ours))
		assert.IsType(t, mat.Transpose{}, ours, "shared as the transpose of a Dense over the same memory")
	})
}

func BenchmarkMatDenseRoundTrip(b *testing.B) {
	for _, size := range []struct {
		name       string
		rows, cols int
	}{{"1KiB", 16, 8}, {"1GiB", 16384, 8192}} {
		m := mat.NewDense(size.rows, size.cols, nil)
		b.Run(fmt.Sprintf("size=%s/dlpack-core", size.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d, err := gonumToGorgonia(m, adapters.ZeroCopyOnly())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := gorgoniaToGonum(d, adapters.ZeroCopyOnly()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("size=%s/gorgonia-FromMat64-ToMat64", size.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := tensor.FromMat64(m)
				if _, err := tensor.ToMat64(d); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("size=%s/gorgonia-UseUnsafe", size.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := tensor.FromMat64(m, tensor.UseUnsafe())
				if _, err := tensor.ToMat64(d, tensor.UseUnsafe()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
