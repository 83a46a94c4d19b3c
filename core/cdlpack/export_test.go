//go:build cgo

package cdlpack_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/core/cdlpack/internal/ctest"
)

// churn runs the collector and allocates, so that Go memory nobody holds gets freed and reused.
func churn() {
	for range 3 {
		runtime.GC()
		junk := make([][]float64, 64)
		for i := range junk {
			junk[i] = make([]float64, 1024)
			for j := range junk[i] {
				junk[i][j] = -1e9
			}
		}
		runtime.KeepAlive(junk)
	}
}

func iota64(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i)
	}
	return s
}

// sumOf adds up 0..n-1.
func sumOf(n int) float64 { return float64(n*(n-1)) / 2 }

func TestExportVersionedCConsumer(t *testing.T) {
	base := cdlpack.LiveExports()
	foreign := leakcheck.Settle()

	m := func() *core.DLManagedTensorVersioned {
		tt, err := core.FromSlice(iota64(24), 2, 3, 4)
		require.NoError(t, err)
		m, err := cdlpack.ExportVersioned(tt)
		require.NoError(t, err)
		tt.Release() // the export holds its own view
		return m
	}()
	require.Equal(t, base+1, cdlpack.LiveExports())
	churn() // the Go slice is unreachable from Go now: only the export keeps it

	assert.Equal(t, core.Version, m.Version)
	assert.Equal(t, core.Flags(0), m.Flags)
	assert.Equal(t, int32(3), m.DLTensor.Ndim)
	assert.Equal(t, []int64{2, 3, 4}, unsafe.Slice(m.DLTensor.Shape, 3))
	assert.Equal(t, []int64{12, 4, 1}, unsafe.Slice(m.DLTensor.Strides, 3))
	assert.Equal(t, uint64(0), m.DLTensor.ByteOffset)
	assert.Equal(t, core.CPUDevice, m.DLTensor.Device)
	assert.Equal(t, core.Float64, m.DLTensor.Dtype)

	sum, flags, err := ctest.SumVersioned(m)
	require.NoError(t, err)
	assert.Equal(t, sumOf(24), sum)
	assert.Zero(t, flags)

	ctest.DeleteVersioned(m)
	assert.Equal(t, base, cdlpack.LiveExports())
	assert.Equal(t, foreign, core.LiveForeign())
}

func TestExportLegacyCConsumer(t *testing.T) {
	base := cdlpack.LiveExports()
	m := func() *core.DLManagedTensor {
		tt, err := core.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
		require.NoError(t, err)
		m, err := cdlpack.ExportLegacy(tt)
		require.NoError(t, err)
		tt.Release()
		return m
	}()
	churn()
	sum, err := ctest.SumLegacy(m)
	require.NoError(t, err)
	assert.Equal(t, 21.0, sum)
	assert.Equal(t, core.Int32, m.DLTensor.Dtype)
	require.NoError(t, ctest.DeleteOnThread(unsafe.Pointer(m), true))
	assert.Equal(t, base, cdlpack.LiveExports())
}

// TestExportStridedViews exports views with negative, zero and non-unit strides and offsets; the
// C consumer must read exactly the view's elements from data at the first element.
func TestExportStridedViews(t *testing.T) {
	base := cdlpack.LiveExports()
	src := core.MustFromSlice(iota64(24), 4, 6)
	rev := func(x *core.Tensor) *core.Tensor { v, err := x.Reverse(1); require.NoError(t, err); return v }
	sl := func(x *core.Tensor) *core.Tensor { v, err := x.Slice(1, 1, 6, 2); require.NoError(t, err); return v }
	tr := func(x *core.Tensor) *core.Tensor { v, err := x.Transpose(); require.NoError(t, err); return v }
	bc := func(x *core.Tensor) *core.Tensor {
		v, err := x.Index(0, 2) // row 2: 12..17
		require.NoError(t, err)
		v, err = v.BroadcastTo(3, 6)
		require.NoError(t, err)
		return v
	}
	cases := []struct {
		name string
		view *core.Tensor
		sum  float64
		ro   bool
	}{
		{"whole", src, sumOf(24), false},
		{"reversed", rev(src), sumOf(24), false},
		{"odd-columns", sl(src), 1 + 3 + 5 + 7 + 9 + 11 + 13 + 15 + 17 + 19 + 21 + 23, false},
		{"reversed-odd", sl(rev(src)), 0 + 2 + 4 + 6 + 8 + 10 + 12 + 14 + 16 + 18 + 20 + 22, false},
		{"transposed", tr(src), sumOf(24), false},
		{"broadcast", bc(src), 3 * (12 + 13 + 14 + 15 + 16 + 17), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := cdlpack.ExportVersioned(c.view)
			require.NoError(t, err)
			assert.Equal(t, c.view.Data(), m.DLTensor.Data, "data is the first element")
			assert.Equal(t, uint64(0), m.DLTensor.ByteOffset)
			assert.Equal(t, c.view.Strides(), unsafe.Slice(m.DLTensor.Strides, c.view.Ndim()))
			sum, flags, err := ctest.SumVersioned(m)
			require.NoError(t, err)
			assert.Equal(t, c.sum, sum)
			assert.Equal(t, c.ro, flags&uint64(core.FlagReadOnly) != 0)
			cdlpack.DeleteVersioned(m)
		})
	}
	assert.Equal(t, base, cdlpack.LiveExports())
}

func TestExportFlags(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3})
	ro, err := x.AsReadOnly()
	require.NoError(t, err)
	cp, err := x.WithFlags(core.FlagIsCopied)
	require.NoError(t, err)
	for _, c := range []struct {
		t    *core.Tensor
		want core.Flags
	}{{x, 0}, {ro, core.FlagReadOnly}, {cp, core.FlagIsCopied}} {
		m, err := cdlpack.ExportVersioned(c.t)
		require.NoError(t, err)
		assert.Equal(t, c.want, m.Flags)
		_, flags, err := ctest.SumVersioned(m)
		require.NoError(t, err)
		assert.Equal(t, uint64(c.want), flags)
		cdlpack.DeleteVersioned(m)
	}
}

func TestExportScalarAndEmpty(t *testing.T) {
	base := cdlpack.LiveExports()
	s := core.Scalar(int64(42))
	m, err := cdlpack.ExportVersioned(s)
	require.NoError(t, err)
	assert.Equal(t, int32(0), m.DLTensor.Ndim)
	sum, _, err := ctest.SumVersioned(m)
	require.NoError(t, err)
	assert.Equal(t, 42.0, sum)
	cdlpack.DeleteVersioned(m)

	e := core.MustFromSlice([]float64{}, 0, 3)
	m, err = cdlpack.ExportVersioned(e)
	require.NoError(t, err)
	require.NotNil(t, m.DLTensor.Strides, "strides are written for ndim > 0, empty or not")
	assert.Equal(t, []int64{0, 3}, unsafe.Slice(m.DLTensor.Shape, 2))
	sum, _, err = ctest.SumVersioned(m)
	require.NoError(t, err)
	assert.Zero(t, sum)
	cdlpack.DeleteVersioned(m)
	assert.Equal(t, base, cdlpack.LiveExports())
}

func TestExportRefusesReleased(t *testing.T) {
	base := cdlpack.LiveExports()
	x := core.MustFromSlice([]float64{1})
	x.Release()
	_, err := cdlpack.ExportVersioned(x)
	assert.ErrorIs(t, err, core.ErrReleased)
	assert.Contains(t, err.Error(), "cdlpack:")
	_, err = cdlpack.ExportLegacy(x)
	assert.ErrorIs(t, err, core.ErrReleased)
	_, err = cdlpack.ExportVersioned(nil)
	assert.ErrorIs(t, err, core.ErrNil)
	assert.Equal(t, base, cdlpack.LiveExports())
}

// TestExportDeviceMemory exports a tensor whose data is a device address (no Go memory, nothing
// to pin) and one over an opaque OpenCL handle (byte_offset kept).
func TestExportDeviceMemory(t *testing.T) {
	base := cdlpack.LiveExports()
	foreign := leakcheck.Settle()
	released := 0
	const devAddr = 0x7f0000001000 // a device address: never dereferenced on the host
	cu, err := core.Wrap(core.Desc{Data: fakeAddr(devAddr), Device: core.DLDevice{DeviceType: core.CUDA, DeviceID: 1},
		DType: core.Float32, Shape: []int64{4, 4}, ByteOffset: 64}, func() { released++ })
	require.NoError(t, err)
	m, err := cdlpack.ExportVersioned(cu)
	require.NoError(t, err)
	cu.Release()
	assert.Zero(t, released, "the export holds the device memory")
	assert.Equal(t, core.DLDevice{DeviceType: core.CUDA, DeviceID: 1}, m.DLTensor.Device)
	assert.Equal(t, uintptr(devAddr+64), uintptr(m.DLTensor.Data), "byte_offset folded into data")
	assert.Equal(t, uint64(0), m.DLTensor.ByteOffset)
	_, _, err = ctest.SumVersioned(m)
	assert.Error(t, err, "the C consumer refuses device memory")
	cdlpack.DeleteVersioned(m)
	assert.Equal(t, 1, released)

	cl, err := core.Wrap(core.Desc{Data: fakeAddr(0x1000), Device: core.DLDevice{DeviceType: core.OpenCL},
		DType: core.Float32, Shape: []int64{8}, ByteOffset: 16}, nil)
	require.NoError(t, err)
	v, err := cl.Slice(0, 2, 8, 1)
	require.NoError(t, err)
	ml, err := cdlpack.ExportLegacy(v)
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x1000), uintptr(ml.DLTensor.Data), "an opaque handle is passed as is")
	assert.Equal(t, uint64(16+2*4), ml.DLTensor.ByteOffset)
	cdlpack.DeleteLegacy(ml)
	assert.Equal(t, base, cdlpack.LiveExports())
	assert.Equal(t, foreign, core.LiveForeign())
}

// TestExportDeleterOnForeignThread calls the deleter of a versioned export from a C thread.
func TestExportDeleterOnForeignThread(t *testing.T) {
	base := cdlpack.LiveExports()
	m, err := cdlpack.ExportVersioned(core.MustFromSlice(iota64(10)))
	require.NoError(t, err)
	require.NoError(t, ctest.DeleteOnThread(unsafe.Pointer(m), false))
	assert.Equal(t, base, cdlpack.LiveExports())
}

// TestExportKeepsImportAlive exports a tensor imported from a C producer: the producer's memory
// must outlive the Go tensor until the C consumer lets go of the export.
func TestExportKeepsImportAlive(t *testing.T) {
	c := ctest.NewCounter()
	in, err := cdlpack.ImportVersioned(ctest.ProduceVersioned(c, 0, 5))
	require.NoError(t, err)
	m, err := cdlpack.ExportLegacy(in)
	require.NoError(t, err)
	in.Release()
	churn()
	assert.Zero(t, c.Calls())
	sum, err := ctest.SumLegacy(m)
	require.NoError(t, err)
	assert.Equal(t, sumOf(5), sum)
	ctest.DeleteLegacy(m)
	assert.Equal(t, int64(1), c.Calls())
}

// TestExportGoMemoryStaysPinned checks, from Go, that the consumer sees writes made by Go after
// the export (same memory, no copy).
func TestExportSharesMemory(t *testing.T) {
	data := iota64(4)
	x := core.MustFromSlice(data)
	m, err := cdlpack.ExportVersioned(x)
	require.NoError(t, err)
	assert.Equal(t, unsafe.Pointer(&data[0]), m.DLTensor.Data)
	data[3] = 100
	sum, _, err := ctest.SumVersioned(m)
	require.NoError(t, err)
	assert.Equal(t, 0+1+2+100.0, sum)
	cdlpack.DeleteVersioned(m)
}

func TestExportDeleterIdempotent(t *testing.T) {
	base := cdlpack.LiveExports()
	foreign := leakcheck.Settle()
	c := ctest.NewCounter()
	in, err := cdlpack.ImportVersioned(ctest.ProduceVersioned(c, 0, 3))
	require.NoError(t, err)
	m, err := cdlpack.ExportVersioned(in)
	require.NoError(t, err)
	in.Release()
	ctest.DeleteTwiceVersioned(m)
	assert.Equal(t, base, cdlpack.LiveExports(), "the second call did not count twice")
	assert.Equal(t, int64(1), c.Calls(), "the view was released once")
	assert.Equal(t, foreign, core.LiveForeign())
	cdlpack.DeleteVersioned(nil)
	cdlpack.DeleteLegacy(nil)
}

// fakeAddr turns an address that is not Go memory (a device address, an opaque handle) into an
// unsafe.Pointer.
func fakeAddr(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }
