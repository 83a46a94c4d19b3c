package core_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
)

// Tests of the one-allocation constructors (compact.go, tensor.go, view.go, many.go) and of
// Wrap: each pins down one ownership promise against what a cleanup, a chunk or a cache
// could get wrong.

// TestWrapManyDimsReleaseOnce: Wrap and WrapExplicit with more dimensions than fit inline keep
// their shape, strides and memory, and run release exactly once, explicitly or by the
// collector; WrapKeep keeps its value alive through views of any rank.
func TestWrapManyDimsReleaseOnce(t *testing.T) {
	base := leakcheck.Settle()
	mem := make([]float32, 2*3*1*2*2*1)
	for _, nd := range []int{0, 1, 4, 5, 6, core.MaxNdim} {
		shape := make([]int64, nd)
		for i := range shape {
			shape[i] = 1
		}
		if nd >= 6 {
			copy(shape, []int64{2, 3, 1, 2, 2, 1})
		}
		var n atomic.Int32
		d := core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float32, Shape: shape}
		// explicit release, with a view outstanding
		x, err := core.Wrap(d, func() { n.Add(1) })
		require.NoError(t, err, "ndim %d", nd)
		assert.Equal(t, shape, x.Shape(), "ndim %d", nd)
		v, err := x.Transpose()
		require.NoError(t, err)
		x.Release()
		assert.Zero(t, n.Load(), "ndim %d: the view holds the memory", nd)
		v.Release()
		assert.Equal(t, int32(1), n.Load(), "ndim %d", nd)

		// dropped: the collector lets go, exactly once
		var m atomic.Int32
		func() {
			x, err := core.Wrap(d, func() { m.Add(1) })
			require.NoError(t, err)
			_, err = x.View()
			require.NoError(t, err)
		}()
		assert.Equal(t, base, leakcheck.Settle(), "ndim %d: a dropped Wrap tensor and its view are collected", nd)
		assert.Equal(t, int32(1), m.Load(), "ndim %d", nd)

		// WrapExplicit
		var e atomic.Int32
		x, err = core.WrapExplicit(d, func() { e.Add(1) })
		require.NoError(t, err)
		assert.Equal(t, shape, x.Shape())
		x.Release()
		x.Release()
		assert.Equal(t, int32(1), e.Load(), "ndim %d", nd)
	}
	assert.Equal(t, base, leakcheck.Settle())
}

// TestWrapInvalidReleasesOnce: every refused desc, of any rank, runs release exactly once
// before Wrap and WrapExplicit return, and leaves no foreign memory counted.
func TestWrapInvalidReleasesOnce(t *testing.T) {
	base := leakcheck.Settle()
	var word float64
	p := unsafe.Pointer(&word)
	big := make([]int64, core.MaxNdim+1)
	for _, c := range []struct {
		name string
		d    core.Desc
		want error
	}{
		{"too many dims", core.Desc{Data: p, Device: core.CPUDevice, DType: core.Float64, Shape: big}, core.ErrNdim},
		{"bad dtype", core.Desc{Data: p, Device: core.CPUDevice, DType: core.DLDataType{Code: 77, Bits: 8, Lanes: 1}, Shape: []int64{1}}, core.ErrDType},
		{"bad device", core.Desc{Data: p, Device: core.DLDevice{DeviceType: 999}, DType: core.Float64, Shape: []int64{1}}, core.ErrDevice},
		{"negative dim, 6-d", core.Desc{Data: p, Device: core.CPUDevice, DType: core.Float64, Shape: []int64{1, 1, 1, 1, 1, -1}}, core.ErrShape},
		{"strides of the wrong length, 5-d", core.Desc{Data: p, Device: core.CPUDevice, DType: core.Float64, Shape: []int64{1, 1, 1, 1, 1}, Strides: []int64{1}}, core.ErrStrides},
		{"NULL data, 5-d", core.Desc{Device: core.CPUDevice, DType: core.Float64, Shape: []int64{1, 1, 1, 1, 2}}, core.ErrNullData},
		{"wraps around, 5-d", core.Desc{Data: fakeAddr(^uintptr(0) - 8), Device: core.CPUDevice, DType: core.Float64, Shape: []int64{1, 1, 1, 1, 4}}, core.ErrBounds},
	} {
		for _, wrap := range []func(core.Desc, func()) (*core.Tensor, error){core.Wrap, core.WrapExplicit} {
			var n atomic.Int32
			x, err := wrap(c.d, func() { n.Add(1) })
			require.ErrorIs(t, err, c.want, c.name)
			assert.Nil(t, x, c.name)
			assert.Equal(t, int32(1), n.Load(), "%s: release ran exactly once", c.name)
		}
		_, err := core.WrapKeep(c.d, &word)
		require.ErrorIs(t, err, c.want, c.name)
	}
	assert.Equal(t, base, leakcheck.Settle())
}

// TestWrapKeepManyDims: a WrapKeep tensor of more dimensions than fit inline keeps its value,
// through a view, across collections.
func TestWrapKeepManyDims(t *testing.T) {
	var collected atomic.Bool
	var v *core.Tensor
	func() {
		keep := &[64]float32{}
		keep[63] = 7
		runtime.AddCleanup(keep, func(*atomic.Bool) { collected.Store(true) }, &collected)
		x, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&keep[0]), Device: core.CPUDevice, DType: core.Float32,
			Shape: []int64{2, 2, 2, 2, 2, 2}}, keep)
		require.NoError(t, err)
		v, err = x.Reshape(64)
		require.NoError(t, err)
	}()
	for range 5 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	assert.False(t, collected.Load(), "the view keeps the value WrapKeep was given")
	got, err := core.At[float32](v, 63)
	require.NoError(t, err)
	assert.Equal(t, float32(7), got)
	runtime.KeepAlive(v)
}
