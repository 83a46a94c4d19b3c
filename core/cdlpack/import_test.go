//go:build cgo

package cdlpack_test

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/core/cdlpack/internal/ctest"
)

// eventuallyCalled collects garbage until c's deleter ran once, and checks it never runs twice.
func eventuallyCalled(t *testing.T, c ctest.Counter) {
	t.Helper()
	assert.True(t, leakcheck.Until(func() bool { return c.Calls() >= 1 }), "the deleter never ran")
	runtime.GC()
	runtime.GC()
	assert.Equal(t, int64(1), c.Calls(), "deleter ran exactly once")
}

func TestImportVersionedExplicitRelease(t *testing.T) {
	foreign := leakcheck.Settle()
	c := ctest.NewCounter()
	m := ctest.ProduceVersioned(c, 0, 2, 3)
	x, err := cdlpack.ImportVersioned(m)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, x.Shape())
	assert.Equal(t, core.Float64, x.DType())
	assert.False(t, x.ReadOnly())
	assert.True(t, x.Foreign())
	data, err := core.Elements[float64](x)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 2, 3, 4, 5}, data)
	assert.Equal(t, m.DLTensor.Data, x.Data(), "zero-copy: same memory")

	v, err := x.Index(0, 1)
	require.NoError(t, err)
	x.Release()
	assert.Zero(t, c.Calls(), "a view keeps the memory")
	got, err := core.At[float64](v, 2)
	require.NoError(t, err)
	assert.Equal(t, 5.0, got)
	v.Release()
	assert.Equal(t, int64(1), c.Calls())
	x.Release()
	v.Release()
	runtime.GC()
	assert.Equal(t, int64(1), c.Calls())
	assert.Equal(t, foreign, core.LiveForeign())
	_, err = core.Elements[float64](x)
	assert.ErrorIs(t, err, core.ErrReleased)
}

func TestImportLegacyGCPath(t *testing.T) {
	foreign := leakcheck.Settle()
	c := ctest.NewCounter()
	var keep *core.Tensor
	func() {
		x, err := cdlpack.ImportLegacy(ctest.ProduceLegacy(c, 0, 4, 5))
		require.NoError(t, err)
		keep, err = x.Slice(1, 1, 5, 2) // a view outlives x
		require.NoError(t, err)
	}()
	for range 3 {
		runtime.GC()
	}
	time.Sleep(20 * time.Millisecond)
	assert.Zero(t, c.Calls(), "the view is alive")
	got, err := core.At[float64](keep, 3, 1)
	require.NoError(t, err)
	assert.Equal(t, 18.0, got)
	runtime.KeepAlive(keep)
	keep = nil
	eventuallyCalled(t, c)
	assert.Eventually(t, func() bool { runtime.GC(); return core.LiveForeign() == foreign }, 5*time.Second, 10*time.Millisecond)
}

// holder stands for a value of another library built over an imported tensor's memory.
type holder struct{ data []float64 }

func TestImportAttachKeepsAlive(t *testing.T) {
	c := ctest.NewCounter()
	var h *holder
	func() {
		x, err := cdlpack.ImportVersioned(ctest.ProduceVersioned(c, 0, 8))
		require.NoError(t, err)
		d, err := core.Elements[float64](x)
		require.NoError(t, err)
		h = &holder{data: d}
		require.NoError(t, core.Attach(h, x))
		x.Release()
	}()
	runtime.GC()
	runtime.GC()
	assert.Zero(t, c.Calls(), "the attached value keeps the memory")
	assert.Equal(t, 7.0, h.data[7])
	runtime.KeepAlive(h)
	h = nil
	eventuallyCalled(t, c)
}

func TestImportNullDeleter(t *testing.T) {
	foreign := leakcheck.Settle()
	c := ctest.NewCounter()
	m := ctest.ProduceVersioned(c, 0, 3)
	fn := m.Deleter
	m.Deleter = 0
	x, err := cdlpack.ImportVersioned(m)
	require.NoError(t, err)
	x.Release()
	assert.Equal(t, foreign, core.LiveForeign())
	assert.Zero(t, c.Calls())
	m.Deleter = fn
	cdlpack.DeleteVersioned(m) // free it for real
	assert.Equal(t, int64(1), c.Calls())
}

func TestImportFlags(t *testing.T) {
	c := ctest.NewCounter()
	m := ctest.ProduceVersioned(c, 0, 3)
	m.Flags = core.FlagReadOnly | core.FlagIsCopied
	m.Version.Minor = 7 // a newer minor is fine
	x, err := cdlpack.ImportVersioned(m)
	require.NoError(t, err)
	assert.True(t, x.ReadOnly())
	assert.Equal(t, core.FlagReadOnly|core.FlagIsCopied, x.Flags())
	_, err = core.Elements[float64](x)
	assert.ErrorIs(t, err, core.ErrReadOnly)
	ro, err := core.ReadOnlyElements[float64](x)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 2}, ro)
	x.Release()
	assert.Equal(t, int64(1), c.Calls())
}

func TestImportNullStridesAndOffset(t *testing.T) {
	c := ctest.NewCounter()
	m := ctest.ProduceLegacy(c, 0, 2, 3)
	m.DLTensor.Strides = nil // legacy producers (NumPy < 2.4) send NULL for C order
	m.DLTensor.ByteOffset = 8
	m.DLTensor.Shape = (*int64)(unsafe.Add(unsafe.Pointer(m.DLTensor.Shape), 8)) // shape {3}
	m.DLTensor.Ndim = 1
	x, err := cdlpack.ImportLegacy(m)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, x.Strides())
	d, err := core.Elements[float64](x)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, d)
	// restore what the producer's deleter frees
	m.DLTensor.Shape = (*int64)(unsafe.Add(unsafe.Pointer(m.DLTensor.Shape), -8))
	x.Release()
	assert.Equal(t, int64(1), c.Calls())
}

// TestImportHostile feeds malformed descriptors: each must be refused with the right sentinel,
// without a panic, and the producer's deleter must still run exactly once.
func TestImportHostile(t *testing.T) {
	foreign := leakcheck.Settle()
	type mutate func(m *core.DLManagedTensorVersioned)
	shapeAt := func(m *core.DLManagedTensorVersioned, i int) *int64 {
		return (*int64)(unsafe.Add(unsafe.Pointer(m.DLTensor.Shape), 8*i))
	}
	strideAt := func(m *core.DLManagedTensorVersioned, i int) *int64 {
		return (*int64)(unsafe.Add(unsafe.Pointer(m.DLTensor.Strides), 8*i))
	}
	cases := []struct {
		name   string
		mutate mutate
		want   error
		field  string
	}{
		{"ndim -1", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Ndim = -1 }, core.ErrNdim, "ndim = -1"},
		{"ndim 65", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Ndim = 65 }, core.ErrNdim, "ndim = 65"},
		{"negative dim", func(m *core.DLManagedTensorVersioned) { *shapeAt(m, 1) = -3 }, core.ErrShape, "shape[1] = -3"},
		{"shape product overflow", func(m *core.DLManagedTensorVersioned) {
			*shapeAt(m, 0) = math.MaxInt64 / 2
			*shapeAt(m, 1) = 4
		}, core.ErrOverflow, "shape"},
		{"stride overflow", func(m *core.DLManagedTensorVersioned) { *strideAt(m, 0) = math.MaxInt64 / 2 }, core.ErrOverflow, "strides"},
		{"stride min int", func(m *core.DLManagedTensorVersioned) { *strideAt(m, 0) = math.MinInt64 }, core.ErrOverflow, "strides"},
		{"null data", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Data = nil }, core.ErrNullData, "data is NULL"},
		{"unknown dtype code", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Dtype.Code = 99 }, core.ErrDType, "dtype.code = 99"},
		{"bad bits", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Dtype.Bits = 24 }, core.ErrDType, "dtype.bits = 24"},
		{"lanes 0", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Dtype.Lanes = 0 }, core.ErrDType, "dtype.lanes = 0"},
		{"unknown device", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Device.DeviceType = 5 }, core.ErrDevice, "device_type = 5"},
		{"negative device id", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Device.DeviceID = -1 }, core.ErrDevice, "device_id = -1"},
		{"major version 2", func(m *core.DLManagedTensorVersioned) { m.Version.Major = 2 }, core.ErrVersion, "version 2.3"},
		{"major version 0", func(m *core.DLManagedTensorVersioned) { m.Version.Major = 0 }, core.ErrVersion, "version 0.3"},
		{"null shape", func(m *core.DLManagedTensorVersioned) { m.DLTensor.Shape = nil }, core.ErrShape, "shape is NULL"},
		{"byte_offset wraps", func(m *core.DLManagedTensorVersioned) { m.DLTensor.ByteOffset = math.MaxUint64 - 8 }, core.ErrBounds, "byte_offset"},
		{"negative strides below address 0", func(m *core.DLManagedTensorVersioned) {
			*strideAt(m, 0) = -(1 << 60) / 8
			*shapeAt(m, 0) = 2
		}, core.ErrBounds, "wraps"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ctest.NewCounter()
			m := ctest.ProduceVersioned(c, 65, 2, 3)
			// keep what the deleter frees, whatever the mutation does to the descriptor
			tc.mutate(m)
			var x *core.Tensor
			var err error
			require.NotPanics(t, func() { x, err = cdlpack.ImportVersioned(m) })
			require.Error(t, err)
			assert.Nil(t, x)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorIs(t, err, core.ErrInvalid)
			assert.Contains(t, err.Error(), tc.field)
			assert.Contains(t, err.Error(), "cdlpack: import:")
			assert.Equal(t, int64(1), c.Calls(), "deleter ran exactly once, before the error")
		})
	}
	t.Run("legacy ndim 65", func(t *testing.T) {
		c := ctest.NewCounter()
		m := ctest.ProduceLegacy(c, 65, 2)
		m.DLTensor.Ndim = 65
		_, err := cdlpack.ImportLegacy(m)
		assert.ErrorIs(t, err, core.ErrNdim)
		assert.Equal(t, int64(1), c.Calls())
	})
	t.Run("nil", func(t *testing.T) {
		_, err := cdlpack.ImportVersioned(nil)
		assert.ErrorIs(t, err, core.ErrNil)
		_, err = cdlpack.ImportLegacy(nil)
		assert.ErrorIs(t, err, core.ErrNil)
	})
	runtime.GC()
	assert.Equal(t, foreign, core.LiveForeign())
}

// TestImportConcurrentViews has many goroutines take views of one imported tensor, attach values
// to them and release them, while the original is released too; the deleter runs once, after
// the last of them.
func TestImportConcurrentViews(t *testing.T) {
	foreign := leakcheck.Settle()
	c := ctest.NewCounter()
	x, err := cdlpack.ImportVersioned(ctest.ProduceVersioned(c, 0, 16, 16))
	require.NoError(t, err)
	const workers = 16
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, workers*100)
	for w := range workers {
		wg.Go(func() {
			<-start
			for i := range 100 {
				v, err := x.Index(0, int64((w+i)%16))
				if err != nil {
					errs <- err
					return
				}
				r, err := v.Reverse(0)
				if err != nil {
					errs <- err
					return
				}
				got, err := core.At[float64](r, 0)
				if err != nil {
					errs <- err
					return
				}
				if want := float64(((w+i)%16)*16 + 15); got != want {
					errs <- assert.AnError
				}
				h := &holder{}
				if err := core.Attach(h, r); err != nil {
					errs <- err
					return
				}
				v.Release()
				if i%2 == 0 {
					r.Release()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Zero(t, c.Calls())
	x.Release()
	eventuallyCalled(t, c)
	assert.Eventually(t, func() bool { runtime.GC(); return core.LiveForeign() == foreign }, 5*time.Second, 10*time.Millisecond)
}

// TestRoundTrip exports a Go tensor and imports it back: same memory, and both deleters run.
func TestRoundTrip(t *testing.T) {
	base := cdlpack.LiveExports()
	foreign := leakcheck.Settle()
	data := []float32{1, 2, 3, 4, 5, 6}
	x := core.MustFromSlice(data, 3, 2)
	tr, err := x.Transpose()
	require.NoError(t, err)
	m, err := cdlpack.ExportVersioned(tr)
	require.NoError(t, err)
	y, err := cdlpack.ImportVersioned(m)
	require.NoError(t, err)
	assert.Equal(t, tr.Data(), y.Data())
	assert.Equal(t, []int64{2, 3}, y.Shape())
	assert.Equal(t, []int64{1, 2}, y.Strides())
	require.NoError(t, core.Set[float32](y, 50, 1, 2))
	assert.Equal(t, float32(50), data[5])
	assert.Equal(t, base+1, cdlpack.LiveExports())
	y.Release()
	assert.Equal(t, base, cdlpack.LiveExports())
	assert.Equal(t, foreign, core.LiveForeign())

	ml, err := cdlpack.ExportLegacy(x)
	require.NoError(t, err)
	yl, err := cdlpack.ImportLegacy(ml)
	require.NoError(t, err)
	assert.Same(t, &data[0], (*float32)(yl.Data()))
	yl.Release()
	assert.Equal(t, base, cdlpack.LiveExports())
}

// TestImportPostV13Codes imports, from a C producer, the enumeration values DLPack added after
// the v1.3 tag (ABI and minor version unchanged): TPU pinned host memory is read on the CPU, TPU
// and Ascend memory is described and never read, and a bcomplex32 tensor (two bfloat16 per
// element) keeps its dtype and size; each goes back out through ExportVersioned unchanged.
func TestImportPostV13Codes(t *testing.T) {
	cases := []struct {
		name   string
		device core.DeviceType
		dtype  core.DLDataType
		host   bool
		want   string
	}{
		{"kDLTPUHost", 20, core.Float64, true, "tpu_host:0"},
		{"kDLTPU", 19, core.Float64, false, "tpu:0"},
		{"kDLAscend", 21, core.Float64, false, "ascend:0"},
		{"kDLBcomplex", core.CPU, core.DLDataType{Code: 18, Bits: 32, Lanes: 1}, true, "cpu:0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ctest.NewCounter()
			m := ctest.ProduceVersioned(c, 0, 2, 3)
			m.DLTensor.Device.DeviceType = tc.device
			m.DLTensor.Dtype = tc.dtype // bcomplex32: 24 of the 48 bytes the producer holds
			x, err := cdlpack.ImportVersioned(m)
			require.NoError(t, err)
			assert.Equal(t, tc.want, x.Device().String())
			assert.Equal(t, tc.dtype, x.DType())
			assert.Equal(t, tc.host, x.HostAccessible())
			b, err := x.ReadOnlyBytes()
			if tc.host {
				require.NoError(t, err)
				assert.Len(t, b, 6*tc.dtype.Size())
			} else {
				assert.ErrorIs(t, err, core.ErrNotHost)
			}
			out, err := cdlpack.ExportVersioned(x)
			require.NoError(t, err)
			assert.Equal(t, tc.device, out.DLTensor.Device.DeviceType)
			assert.Equal(t, tc.dtype, out.DLTensor.Dtype)
			cdlpack.DeleteVersioned(out)
			x.Release()
			assert.Equal(t, int64(1), c.Calls())
		})
	}
}
