package gonumx_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/memory"
)

func at(t *testing.T, x *core.Tensor, idx ...int64) float64 {
	t.Helper()
	v, err := core.At[float64](x, idx...)
	require.NoError(t, err)
	return v
}

func TestFromDenseSharesMemory(t *testing.T) {
	m := mat.NewDense(3, 4, leakcheck.Seq(12))
	x, err := gonumx.FromDense(m)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4}, x.Shape())
	assert.Equal(t, []int64{4, 1}, x.Strides())
	assert.Equal(t, core.Float64, x.DType())
	assert.Equal(t, unsafe.Pointer(&m.RawMatrix().Data[0]), x.Data(), "pointer identity")
	for i := range 3 {
		for j := range 4 {
			assert.Equal(t, m.At(i, j), at(t, x, int64(i), int64(j)))
		}
	}
	m.Set(2, 3, -7)
	assert.Equal(t, -7.0, at(t, x, 2, 3), "Gonum write seen through the tensor")
	require.NoError(t, core.Set(x, 42.0, 1, 2))
	assert.Equal(t, 42.0, m.At(1, 2), "tensor write seen through Gonum")
}

func TestFromDenseSliced(t *testing.T) {
	m := mat.NewDense(4, 5, leakcheck.Seq(20))
	s := m.Slice(1, 3, 2, 5).(*mat.Dense) // 2×3, stride 5
	x, err := gonumx.FromDense(s)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, x.Shape())
	assert.Equal(t, []int64{5, 1}, x.Strides())
	for i := range 2 {
		for j := range 3 {
			assert.Equal(t, s.At(i, j), at(t, x, int64(i), int64(j)))
		}
	}
	require.NoError(t, core.Set(x, 99.0, 1, 0))
	assert.Equal(t, 99.0, m.At(2, 2))
}

func TestFromVecDenseColumnView(t *testing.T) {
	m := mat.NewDense(3, 4, leakcheck.Seq(12))
	col := m.ColView(2).(*mat.VecDense) // Inc 4
	x, err := gonumx.FromVecDense(col)
	require.NoError(t, err)
	assert.Equal(t, []int64{3}, x.Shape())
	assert.Equal(t, []int64{4}, x.Strides())
	assert.Equal(t, []float64{3, 7, 11}, []float64{at(t, x, 0), at(t, x, 1), at(t, x, 2)})
	require.NoError(t, core.Set(x, -1.0, 1))
	assert.Equal(t, -1.0, m.At(1, 2))
}

func TestFromOtherStorage(t *testing.T) {
	c := mat.NewCDense(2, 2, []complex128{1 + 1i, 2, 3, 4 - 1i})
	xc, err := gonumx.FromCDense(c)
	require.NoError(t, err)
	assert.Equal(t, core.Complex128, xc.DType())
	v, err := core.At[complex128](xc, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, 4-1i, v)
	require.NoError(t, core.Set(xc, 9i, 0, 1))
	assert.Equal(t, 9i, c.At(0, 1))

	g32 := &blas32.General{Rows: 2, Cols: 2, Stride: 3, Data: []float32{1, 2, 0, 3, 4}}
	x32, err := gonumx.FromGeneral32(g32)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 1}, x32.Strides())
	f, err := core.At[float32](x32, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(3), f)
	assert.Equal(t, unsafe.Pointer(&g32.Data[0]), x32.Data())

	v32, err := gonumx.FromVector32(&blas32.Vector{N: 2, Inc: 2, Data: []float32{5, 0, 6}})
	require.NoError(t, err)
	f, err = core.At[float32](v32, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(6), f)

	cv, err := gonumx.FromCVector(&cblas128.Vector{N: 2, Inc: 1, Data: []complex128{1, 2i}})
	require.NoError(t, err)
	assert.Equal(t, []int64{2}, cv.Shape())

	g, err := gonumx.FromGeneral(&blas64.General{Rows: 1, Cols: 2, Stride: 2, Data: []float64{1, 2}})
	require.NoError(t, err)
	assert.Equal(t, 2.0, at(t, g, 0, 1))
	v64, err := gonumx.FromVector(&blas64.Vector{N: 3, Inc: 1, Data: []float64{1, 2, 3}})
	require.NoError(t, err)
	assert.Equal(t, 3.0, at(t, v64, 2))
}

func TestFromBadStorage(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		make func() (*core.Tensor, error)
	}{
		{"stride below cols", core.ErrStrides, func() (*core.Tensor, error) {
			return gonumx.FromGeneral(&blas64.General{Rows: 2, Cols: 3, Stride: 2, Data: leakcheck.Seq(6)})
		}},
		{"data too short", core.ErrBounds, func() (*core.Tensor, error) {
			return gonumx.FromGeneral(&blas64.General{Rows: 2, Cols: 3, Stride: 4, Data: leakcheck.Seq(6)})
		}},
		{"negative rows", core.ErrShape, func() (*core.Tensor, error) {
			return gonumx.FromGeneral32(&blas32.General{Rows: -1, Cols: 3, Stride: 3})
		}},
		{"huge stride", core.ErrOverflow, func() (*core.Tensor, error) {
			return gonumx.FromCGeneral(&cblas128.General{Rows: 3, Cols: 1, Stride: 1 << 62, Data: make([]complex128, 1)})
		}},
		{"zero increment", core.ErrStrides, func() (*core.Tensor, error) {
			return gonumx.FromVector(&blas64.Vector{N: 2, Inc: 0, Data: leakcheck.Seq(2)})
		}},
		{"negative increment", core.ErrStrides, func() (*core.Tensor, error) {
			return gonumx.FromVector32(&blas32.Vector{N: 2, Inc: -1, Data: []float32{1, 2}})
		}},
		{"vector too short", core.ErrBounds, func() (*core.Tensor, error) {
			return gonumx.FromCVector(&cblas128.Vector{N: 3, Inc: 2, Data: make([]complex128, 4)})
		}},
		{"nil", core.ErrNil, func() (*core.Tensor, error) { return gonumx.FromGeneral(nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := tc.make()
			require.ErrorIs(t, err, tc.err)
			require.ErrorIs(t, err, core.ErrInvalid)
			assert.Contains(t, err.Error(), "gonumx: ")
			assert.Nil(t, x)
		})
	}
	bad := &mat.Dense{}
	bad.SetRawMatrix(blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: leakcheck.Seq(3)})
	_, err := gonumx.FromDense(bad)
	assert.ErrorIs(t, err, core.ErrBounds, "a Dense corrupted through SetRawMatrix")
	// under a transpose it fails the same way, instead of being copied by Gonum (which panics)
	_, err = gonumx.FromMatrix(bad.T())
	assert.ErrorIs(t, err, core.ErrBounds, "the transpose of a corrupted Dense")
	// a transpose of a matrix without dense storage is still copied
	sym := mat.NewSymDense(2, []float64{1, 2, 2, 3})
	c, err := gonumx.FromMatrix(sym.T())
	require.NoError(t, err)
	assert.Equal(t, 2.0, at(t, c, 1, 0))
}

func TestFromEmpty(t *testing.T) {
	assert.Equal(t, []int64{0, 0}, must(gonumx.FromDense(&mat.Dense{})).Shape())
	assert.Equal(t, []int64{0, 0}, must(gonumx.FromDense(nil)).Shape())
	assert.Equal(t, []int64{0}, must(gonumx.FromVecDense(&mat.VecDense{})).Shape())
	assert.Equal(t, []int64{0, 0}, must(gonumx.FromCDense(nil)).Shape())
}

func TestStructuredStorage(t *testing.T) {
	sym := mat.NewSymDense(3, []float64{1, 2, 3, 0, 4, 5, 0, 0, 6})
	xs, uplo, err := gonumx.FromSymDense(sym)
	require.NoError(t, err)
	assert.Equal(t, blas.Upper, uplo)
	for i := range 3 {
		for j := i; j < 3; j++ {
			assert.Equal(t, sym.At(i, j), at(t, xs, int64(i), int64(j)), "upper triangle is the matrix")
		}
	}
	require.NoError(t, core.Set(xs, 8.0, 0, 2))
	assert.Equal(t, 8.0, sym.At(2, 0), "shared: the write is the symmetric element")

	tri := mat.NewTriDense(2, mat.Lower, []float64{1, 99, 2, 3})
	xt, uplo, diag, err := gonumx.FromTriDense(tri)
	require.NoError(t, err)
	assert.Equal(t, blas.Lower, uplo)
	assert.Equal(t, blas.NonUnit, diag)
	assert.Equal(t, 2.0, at(t, xt, 1, 0))
	assert.Equal(t, 99.0, at(t, xt, 0, 1), "the other triangle is storage, not the matrix")
	assert.Equal(t, 0.0, tri.At(0, 1))

	// 4×4 band with kl=1, ku=1: storage rows min(4, 4+1)=4 of width 3.
	band := mat.NewBandDense(4, 4, 1, 1, []float64{
		0, 1, 2,
		3, 4, 5,
		6, 7, 8,
		9, 10, 0,
	})
	xb, kl, ku, err := gonumx.FromBandDense(band)
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 3}, xb.Shape())
	assert.Equal(t, 1, kl)
	assert.Equal(t, 1, ku)
	for i := range 4 {
		for j := max(0, i-kl); j <= min(3, i+ku); j++ {
			assert.Equal(t, band.At(i, j), at(t, xb, int64(i), int64(j-i+kl)), "(%d,%d)", i, j)
		}
	}

	d := mat.NewDiagDense(3, []float64{7, 8, 9})
	xd, err := gonumx.FromDiagDense(d)
	require.NoError(t, err)
	assert.Equal(t, 8.0, at(t, xd, 1))
	require.NoError(t, core.Set(xd, 5.0, 2))
	assert.Equal(t, 5.0, d.At(2, 2))

	full := gonumx.Materialize(sym)
	assert.True(t, full.Flags()&core.FlagIsCopied != 0)
	assert.Equal(t, 8.0, at(t, full, 2, 0))
	assert.Equal(t, 0.0, at(t, gonumx.Materialize(tri), 0, 1))
}

func TestFromMatrix(t *testing.T) {
	m := mat.NewDense(2, 3, leakcheck.Seq(6))
	var copied bool
	x, err := gonumx.FromMatrix(m.T(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.False(t, copied)
	assert.Equal(t, []int64{3, 2}, x.Shape())
	assert.Equal(t, []int64{1, 3}, x.Strides())
	assert.True(t, x.IsFortranContiguous())
	assert.Equal(t, m.At(1, 2), at(t, x, 2, 1))

	v := mat.NewVecDense(3, []float64{1, 2, 3})
	xv, err := gonumx.FromMatrix(v, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 1}, xv.Shape())
	assert.Equal(t, unsafe.Pointer(&v.RawVector().Data[0]), xv.Data())

	sym := mat.NewSymDense(2, []float64{1, 2, 2, 3})
	_, err = gonumx.FromMatrix(sym, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	xs, err := gonumx.FromMatrix(sym, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	assert.Equal(t, 2.0, at(t, xs, 1, 0))

	xa, err := gonumx.FromMatrix(m, adapters.AlwaysCopy())
	require.NoError(t, err)
	assert.NotEqual(t, unsafe.Pointer(&m.RawMatrix().Data[0]), xa.Data())
	_, err = gonumx.FromMatrix(nil)
	require.ErrorIs(t, err, core.ErrNil)
}

// layouts are tensors of every layout ToDense meets, with whether it can share them.
func layouts(t *testing.T) []struct {
	name   string
	x      *core.Tensor
	shared bool
} {
	t.Helper()
	base := core.MustFromSlice(leakcheck.Seq(20), 4, 5)
	sliced, err := base.Slice(1, 1, 4, 1) // [4 3] strides [5 1]
	require.NoError(t, err)
	fortran, err := memory.Clone(base, memory.FortranOrder)
	require.NoError(t, err)
	fortran, err = fortran.WithFlags(0)
	require.NoError(t, err)
	negative, err := base.Reverse(0)
	require.NoError(t, err)
	bcast, err := core.MustFromSlice(leakcheck.Seq(5), 1, 5).BroadcastTo(3, 5)
	require.NoError(t, err)
	ro, err := base.AsReadOnly()
	require.NoError(t, err)
	step, err := base.Slice(1, 0, 5, 2)
	require.NoError(t, err)
	return []struct {
		name   string
		x      *core.Tensor
		shared bool
	}{
		{"c-order", base, true},
		{"sliced rows (stride > cols)", sliced, true},
		{"row vector", core.MustFromSlice(leakcheck.Seq(3), 1, 3), true},
		{"fortran", fortran, false},
		{"negative strides", negative, false},
		{"broadcast", bcast, false},
		{"read-only", ro, false},
		{"column step 2", step, false},
		{"float32", core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2), false},
	}
}

func TestToDenseLayouts(t *testing.T) {
	for _, tc := range layouts(t) {
		t.Run(tc.name, func(t *testing.T) {
			if tc.x.DType() == core.Float64 && tc.name != "fortran" { // ToMatrix shares Fortran order
				ok, why := gonumx.Shareable(tc.x)
				assert.Equal(t, tc.shared, ok, why)
			}
			var copied bool
			m, err := gonumx.ToDense(tc.x, adapters.ReportCopy(&copied))
			require.NoError(t, err)
			assert.Equal(t, !tc.shared, copied)
			want, err := memory.Cast(tc.x, core.Float64)
			require.NoError(t, err)
			r, c := m.Dims()
			require.Equal(t, []int64{int64(r), int64(c)}, tc.x.Shape())
			for i := range r {
				for j := range c {
					assert.Equal(t, at(t, want, int64(i), int64(j)), m.At(i, j))
				}
			}
			_, err = gonumx.ToDense(tc.x, adapters.ZeroCopyOnly())
			if tc.shared {
				require.NoError(t, err)
				assert.Equal(t, tc.x.Data(), unsafe.Pointer(&m.RawMatrix().Data[0]), "pointer identity")
				m.Set(r-1, c-1, -5)
				assert.Equal(t, -5.0, at(t, tc.x, int64(r-1), int64(c-1)), "Gonum write seen through the tensor")
				require.NoError(t, core.Set(tc.x, -6.0, 0, 0))
				assert.Equal(t, -6.0, m.At(0, 0), "tensor write seen through Gonum")
			} else {
				require.ErrorIs(t, err, adapters.ErrCopyRequired)
				assert.Contains(t, err.Error(), "gonumx: ")
			}
			ma, err := gonumx.ToDense(tc.x, adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
			require.NoError(t, err)
			assert.True(t, copied)
			assert.NotEqual(t, tc.x.Data(), unsafe.Pointer(&ma.RawMatrix().Data[0]))
		})
	}
}

func TestToMatrixFortranIsATransposeOverTheSameMemory(t *testing.T) {
	cbuf := core.MustFromSlice(leakcheck.Seq(6), 3, 2) // memory of a 2×3 matrix in column-major order
	f, err := cbuf.Transpose()                         // [2 3] strides [1 2]
	require.NoError(t, err)
	m, err := gonumx.ToMatrix(f, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	tr, ok := m.(mat.Transpose)
	require.True(t, ok, "got %T", m)
	d := tr.Matrix.(*mat.Dense)
	assert.Equal(t, f.Data(), unsafe.Pointer(&d.RawMatrix().Data[0]))
	for i := range 2 {
		for j := range 3 {
			assert.Equal(t, at(t, f, int64(i), int64(j)), m.At(i, j))
		}
	}
	d.Set(2, 1, 100) // element (1, 2) of the transpose
	assert.Equal(t, 100.0, at(t, f, 1, 2))

	// Through FromMatrix it comes back as the same Fortran-order view.
	back, err := gonumx.FromMatrix(m)
	require.NoError(t, err)
	assert.Equal(t, f.Strides(), back.Strides())
	assert.Equal(t, f.Data(), back.Data())

	// Row-major tensors are plain Dense.
	m2, err := gonumx.ToMatrix(cbuf)
	require.NoError(t, err)
	assert.IsType(t, &mat.Dense{}, m2)
}

func TestToVectorsAndOthers(t *testing.T) {
	base := core.MustFromSlice(leakcheck.Seq(10), 10)
	step, err := base.Slice(0, 1, 10, 3) // [3] stride 3
	require.NoError(t, err)
	v, err := gonumx.ToVecDense(step, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, 3, v.RawVector().Inc)
	assert.Equal(t, []float64{2, 5, 8}, []float64{v.AtVec(0), v.AtVec(1), v.AtVec(2)})
	v.SetVec(2, 0)
	assert.Equal(t, 0.0, at(t, base, 7))

	rev, err := base.Reverse(0)
	require.NoError(t, err)
	_, err = gonumx.ToVecDense(rev, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	vr, err := gonumx.ToVecDense(rev)
	require.NoError(t, err)
	assert.Equal(t, 10.0, vr.AtVec(0))

	cx := core.MustFromSlice([]complex128{1, 2, 3, 4i}, 2, 2)
	cd, err := gonumx.ToCDense(cx, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	cd.Set(0, 0, 7i)
	c0, _ := core.At[complex128](cx, 0, 0)
	assert.Equal(t, 7i, c0)
	cv, err := gonumx.ToCVector(core.MustFromSlice([]complex128{1, 2}), adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, 2, cv.N)

	fx := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	g, err := gonumx.ToGeneral32(fx, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	g.Data[5] = 60
	f5, _ := core.At[float32](fx, 1, 2)
	assert.Equal(t, float32(60), f5)
	v32, err := gonumx.ToVector32(core.MustFromSlice([]float32{1, 2}), adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, 2, v32.N)
	// A float64 tensor rounds to float32 in a copy, when asked to.
	var copied bool
	_, err = gonumx.ToGeneral32(core.MustFromSlice([]float64{0.5, 1.5}, 1, 2), adapters.ReportCopy(&copied))
	require.ErrorIs(t, err, adapters.ErrCast)
	assert.False(t, copied)
	g64, err := gonumx.ToGeneral32(core.MustFromSlice([]float64{0.5, 1.5}, 1, 2), adapters.ReportCopy(&copied),
		adapters.AllowCast())
	require.NoError(t, err)
	assert.True(t, copied)
	assert.Equal(t, []float32{0.5, 1.5}, g64.Data)
}

func TestToErrors(t *testing.T) {
	_, err := gonumx.ToDense(core.MustFromSlice(leakcheck.Seq(8), 2, 2, 2))
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	_, err = gonumx.ToVecDense(core.MustFromSlice(leakcheck.Seq(4), 2, 2))
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	_, err = gonumx.ToDense(nil)
	require.ErrorIs(t, err, core.ErrNil)
	x := core.MustFromSlice(leakcheck.Seq(4), 2, 2)
	x.Release()
	_, err = gonumx.ToDense(x)
	require.ErrorIs(t, err, core.ErrReleased)
	assert.False(t, first(gonumx.Shareable(x)))

	// Device memory: never touched, refused (it cannot be copied by the CPU either).
	var fake [4]float64
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&fake[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float64, Shape: []int64{2, 2}}, nil)
	require.NoError(t, err)
	assert.False(t, first(gonumx.Shareable(dev)))
	_, err = gonumx.ToDense(dev)
	require.ErrorIs(t, err, core.ErrNotHost)
	_, err = gonumx.ToDense(dev, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	// A dtype nothing can cast to float64.
	_, err = gonumx.ToDense(core.MustNew(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, 2, 2))
	require.Error(t, err)
}

// A conversion that fails after deciding to copy (device memory the CPU cannot copy, a dtype
// nothing casts from) leaves the caller's ReportCopy flag as it was, whatever was in it.
func TestToFailedCopyLeavesReport(t *testing.T) {
	var fake [4]complex128 // room for every target's 2×2 or 4 elements
	onDevice := func(dt core.DLDataType, shape ...int64) func() *core.Tensor {
		return func() *core.Tensor {
			x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&fake[0]), Device: core.DLDevice{DeviceType: core.CUDA},
				DType: dt, Shape: shape}, nil)
			require.NoError(t, err)
			return x
		}
	}
	float8 := func(shape ...int64) func() *core.Tensor {
		return func() *core.Tensor {
			return core.MustNew(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, shape...)
		}
	}
	type conv = func(*core.Tensor, ...adapters.Option) error
	toDense := func(x *core.Tensor, o ...adapters.Option) error { _, err := gonumx.ToDense(x, o...); return err }
	cases := []struct {
		name string
		to   conv
		in   func() *core.Tensor
	}{
		{"ToDense/device", toDense, onDevice(core.Float64, 2, 2)},
		{"ToDense/float8", toDense, float8(2, 2)},
		{"ToMatrix/device", func(x *core.Tensor, o ...adapters.Option) error { _, err := gonumx.ToMatrix(x, o...); return err },
			onDevice(core.Float64, 2, 2)},
		{"ToVecDense/device", func(x *core.Tensor, o ...adapters.Option) error { _, err := gonumx.ToVecDense(x, o...); return err },
			onDevice(core.Float64, 4)},
		{"ToCDense/device", func(x *core.Tensor, o ...adapters.Option) error { _, err := gonumx.ToCDense(x, o...); return err },
			onDevice(core.Complex128, 2, 2)},
		{"ToCVector/float8", func(x *core.Tensor, o ...adapters.Option) error { _, err := gonumx.ToCVector(x, o...); return err },
			float8(4)},
		{"ToGeneral32/device", func(x *core.Tensor, o ...adapters.Option) error { _, err := gonumx.ToGeneral32(x, o...); return err },
			onDevice(core.Float32, 2, 2)},
		{"ToVector32/float8", func(x *core.Tensor, o ...adapters.Option) error { _, err := gonumx.ToVector32(x, o...); return err },
			float8(4)},
	}
	for _, c := range cases {
		for _, policy := range []adapters.Option{nil, adapters.AlwaysCopy()} {
			for _, sentinel := range []bool{false, true} {
				copied := sentinel
				err := c.to(c.in(), policy, adapters.ReportCopy(&copied))
				require.Error(t, err, c.name)
				assert.Equal(t, sentinel, copied, "%s (AlwaysCopy: %v): ReportCopy was set by a conversion that failed", c.name, policy != nil)
			}
		}
	}
}

func TestToEmpty(t *testing.T) {
	m, err := gonumx.ToDense(core.MustNew(core.Float64, 0, 3), adapters.ZeroCopyOnly())
	require.NoError(t, err)
	r, c := m.Dims()
	assert.Equal(t, []int{0, 3}, []int{r, c})
	assert.Equal(t, []int64{0, 3}, must(gonumx.FromDense(m)).Shape())
	m, err = gonumx.ToDense(core.MustNew(core.Float64, 0, 0))
	require.NoError(t, err)
	assert.True(t, m.IsEmpty())
	v, err := gonumx.ToVecDense(core.MustNew(core.Float64, 0))
	require.NoError(t, err)
	assert.Equal(t, 0, v.Len())
}

// foreign wraps a copy of data as foreign memory whose release flips the returned flag.
// foreign is a float64 tensor of shape holding data, over memory unmapped on release.
func foreign(t *testing.T, data []float64, shape ...int64) (*core.Tensor, *atomic.Int32) {
	t.Helper()
	m, err := foreignmem.Twin(core.MustFromSlice(data, shape...))
	require.NoError(t, err)
	return m.Tensor, m.Releases
}

func TestLifetimeGonumValueKeepsForeignMemory(t *testing.T) {
	leakcheck.Check(t)
	x, releases := foreign(t, leakcheck.Seq(6), 2, 3)
	released := func() bool { return releases.Load() != 0 }
	m, err := gonumx.ToDense(x, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	x.Release()
	x = nil
	for range 5 {
		runtime.GC()
	}
	assert.False(t, released(), "released while the *mat.Dense is reachable")
	assert.Equal(t, 6.0, m.At(1, 2))

	// A tensor made over the Dense keeps the Dense, and so the memory, alive.
	back := must(gonumx.FromDense(m))
	m = nil
	for range 5 {
		runtime.GC()
	}
	assert.False(t, released(), "released while a tensor over the Dense is reachable")
	assert.Equal(t, 6.0, at(t, back, 1, 2))
	runtime.KeepAlive(back)
	back = nil
	assert.True(t, leakcheck.Until(released), "never released after the last holder was dropped")
	assert.Equal(t, int32(1), releases.Load())
}

func TestLifetimeBlas32(t *testing.T) {
	leakcheck.Check(t)
	m, err := foreignmem.Twin(core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2))
	require.NoError(t, err)
	x, releases := m.Tensor, m.Releases
	m = foreignmem.Mapped{}
	g, err := gonumx.ToGeneral32(x)
	require.NoError(t, err)
	x.Release()
	for range 5 {
		runtime.GC()
	}
	assert.Zero(t, releases.Load())
	assert.Equal(t, float32(4), g.Data[3])
	runtime.KeepAlive(g)
	g = nil
	assert.True(t, leakcheck.Until(func() bool { return releases.Load() == 1 }))
}

// roundTrip is tensor → Gonum value → tensor with the Gonum type for the dtype and rank.
func roundTrip(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	switch {
	case x.DType() == core.Float64 && x.Ndim() == 2:
		m, err := gonumx.ToMatrix(x, opts...)
		if err != nil {
			return nil, err
		}
		return gonumx.FromMatrix(m)
	case x.DType() == core.Float64:
		v, err := gonumx.ToVecDense(x, opts...)
		if err != nil {
			return nil, err
		}
		return gonumx.FromVecDense(v)
	case x.DType() == core.Complex128 && x.Ndim() == 2:
		m, err := gonumx.ToCDense(x, opts...)
		if err != nil {
			return nil, err
		}
		return gonumx.FromCDense(m)
	case x.DType() == core.Complex128:
		v, err := gonumx.ToCVector(x, opts...)
		if err != nil {
			return nil, err
		}
		return gonumx.FromCVector(v)
	case x.Ndim() == 2:
		g, err := gonumx.ToGeneral32(x, opts...)
		if err != nil {
			return nil, err
		}
		return gonumx.FromGeneral32(g)
	default:
		v, err := gonumx.ToVector32(x, opts...)
		if err != nil {
			return nil, err
		}
		return gonumx.FromVector32(v)
	}
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name:      "gonum",
		DTypes:    []core.DLDataType{core.Float64, core.Float32, core.Complex128},
		MinNdim:   1,
		MaxNdim:   2,
		RoundTrip: roundTrip,
		Shareable: gonumx.Shareable,
		Casts: []adaptertest.Cast{
			{To: core.Float64, RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				m, err := gonumx.ToDense(x, opts...)
				if err != nil {
					return nil, err
				}
				return gonumx.FromDense(m)
			}},
			{To: core.Float64, RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				m, err := gonumx.ToMatrix(x, opts...)
				if err != nil {
					return nil, err
				}
				return gonumx.FromMatrix(m)
			}},
			{To: core.Complex128, RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				m, err := gonumx.ToCDense(x, opts...)
				if err != nil {
					return nil, err
				}
				return gonumx.FromCDense(m)
			}},
			{To: core.Float32, RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
				g, err := gonumx.ToGeneral32(x, opts...)
				if err != nil {
					return nil, err
				}
				return gonumx.FromGeneral32(g)
			}},
		},
	})
}

// must is for conversions a test knows cannot fail.
func must(t *core.Tensor, err error) *core.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

// first is the verdict of a Shareable.
func first(ok bool, _ string) bool { return ok }

// TestNeverGuesses: a cast that keeps every value is a reported copy; any other needs
// adapters.AllowCast.
func TestNeverGuesses(t *testing.T) {
	z := core.MustFromSlice([]complex128{1 + 2i, 3, 4i, 5}, 2, 2)
	_, err := gonumx.ToDense(z)
	require.ErrorIs(t, err, adapters.ErrCast)
	assert.EqualError(t, err, "gonumx: tensor is complex128, *mat.Dense holds float64: casting would drop the "+
		"imaginary part (pass adapters.AllowCast() to cast)")
	m, err := gonumx.ToDense(z, adapters.AllowCast())
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 3, 0, 5}, m.RawMatrix().Data, "AllowCast takes the real part")

	big := core.MustFromSlice([]int64{1<<53 + 1, 2}, 1, 2)
	_, err = gonumx.ToDense(big)
	require.ErrorIs(t, err, adapters.ErrCast)
	assert.ErrorContains(t, err, "int64")
	m, err = gonumx.ToDense(big, adapters.AllowCast())
	require.NoError(t, err)
	assert.Equal(t, []float64{1 << 53, 2}, m.RawMatrix().Data)

	var copied bool
	m, err = gonumx.ToDense(core.MustFromSlice([]int32{-7, 1 << 30}, 1, 2), adapters.ReportCopy(&copied))
	require.NoError(t, err, "int32 → float64 keeps every value")
	assert.True(t, copied)
	assert.Equal(t, []float64{-7, 1 << 30}, m.RawMatrix().Data)

	_, err = gonumx.ToDense(core.MustFromSlice([]float32{0.5, 1}, 1, 2), adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired, "a cast is a copy")
}
