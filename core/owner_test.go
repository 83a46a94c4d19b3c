package core_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
)

// foreignBlock is memory "from elsewhere": a Go array the test keeps alive, wrapped with a
// release function that counts its calls.
type foreignBlock struct {
	mem      [16]float64
	released atomic.Int32
}

func (b *foreignBlock) wrap(t *testing.T) *core.Tensor {
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&b.mem[0]), Device: core.CPUDevice,
		DType: core.Float64, Shape: []int64{4, 4}}, func() { b.released.Add(1) })
	require.NoError(t, err)
	return x
}

func TestWrapReleaseExplicit(t *testing.T) {
	base := leakcheck.Settle()
	b := &foreignBlock{}
	x := b.wrap(t)
	assert.True(t, x.Foreign())
	assert.Equal(t, base+1, core.LiveForeign())
	v, err := x.Slice(0, 1, 3, 1)
	require.NoError(t, err)
	x.Release()
	x.Release() // idempotent
	assert.Zero(t, b.released.Load(), "a live view keeps the memory")
	v2, err := v.Transpose()
	require.NoError(t, err)
	v.Release()
	assert.Zero(t, b.released.Load())
	v2.Release()
	assert.Equal(t, int32(1), b.released.Load())
	assert.Equal(t, base, core.LiveForeign())
	runtime.GC()
	assert.Equal(t, int32(1), b.released.Load(), "exactly once")
	_, err = x.View()
	assert.ErrorIs(t, err, core.ErrReleased)
}

func TestWrapReleaseGC(t *testing.T) {
	base := leakcheck.Settle()
	b := &foreignBlock{}
	var v *core.Tensor
	func() {
		x := b.wrap(t)
		var err error
		v, err = x.Index(0, 1)
		require.NoError(t, err)
	}()
	runtime.GC()
	runtime.GC()
	assert.Zero(t, b.released.Load(), "the view is reachable")
	runtime.KeepAlive(v)
	v = nil
	assert.True(t, leakcheck.Until(func() bool { return b.released.Load() == 1 }))
	assert.True(t, leakcheck.Until(func() bool { return core.LiveForeign() == base }))
	runtime.GC()
	assert.Equal(t, int32(1), b.released.Load())
}

func TestWrapExplicit(t *testing.T) {
	base := leakcheck.Settle()
	b := &foreignBlock{}
	desc := core.Desc{Data: unsafe.Pointer(&b.mem[0]), Device: core.CPUDevice, DType: core.Float64,
		Shape: []int64{4, 4}}
	release := func() { b.released.Add(1) }

	// dropped without Release: no cleanup runs, the memory stays held
	func() {
		x, err := core.WrapExplicit(desc, release)
		require.NoError(t, err)
		assert.True(t, x.Foreign())
	}()
	for range 5 { // collections, and time for any cleanup they queued
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	assert.Zero(t, b.released.Load(), "an explicit tensor is never released by the collector")
	assert.Equal(t, base+1, core.LiveForeign())

	// released, with a view that outlives it and is collected: release runs once, after the view
	x, err := core.WrapExplicit(desc, release)
	require.NoError(t, err)
	func() {
		v, err := x.Index(0, 1)
		require.NoError(t, err)
		x.Release()
		assert.Equal(t, int32(0), b.released.Load(), "the view holds the memory")
		runtime.KeepAlive(v)
	}()
	assert.True(t, leakcheck.Until(func() bool { return b.released.Load() == 1 }),
		"the view's cleanup lets the memory go")

	// an invalid description runs release before the error
	bad := desc
	bad.Shape = []int64{-1}
	_, err = core.WrapExplicit(bad, release)
	require.ErrorIs(t, err, core.ErrInvalid)
	assert.Equal(t, int32(2), b.released.Load())
	assert.Equal(t, base+1, core.LiveForeign(), "only the dropped tensor's memory is still held")
}

// dense stands for a value of another library built over a tensor's memory.
type dense struct{ data []float64 }

func TestAttachKeepsAlive(t *testing.T) {
	base := leakcheck.Settle()
	b := &foreignBlock{}
	var d *dense
	func() {
		x := b.wrap(t)
		s, err := core.Elements[float64](x)
		require.NoError(t, err)
		d = &dense{data: s}
		require.NoError(t, core.Attach(d, x))
		x.Release()
	}()
	runtime.GC()
	runtime.GC()
	assert.Zero(t, b.released.Load(), "the attached value keeps the memory")
	runtime.KeepAlive(d)
	d = nil
	assert.True(t, leakcheck.Until(func() bool { return b.released.Load() == 1 }))
	assert.True(t, leakcheck.Until(func() bool { return core.LiveForeign() == base }))

	x := b.wrap(t)
	x.Release()
	assert.ErrorIs(t, core.Attach(&dense{}, x), core.ErrReleased)
	// Go memory: nothing to hold, nothing to fail
	assert.NoError(t, core.Attach(&dense{}, core.MustFromSlice([]float64{1})))
}

func TestWrapKeep(t *testing.T) {
	type owner struct{ buf []int32 }
	o := &owner{buf: []int32{1, 2, 3}}
	collected := make(chan struct{})
	runtime.AddCleanup(o, func(ch chan struct{}) { close(ch) }, collected)
	var v *core.Tensor
	func() {
		x, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&o.buf[0]), Device: core.CPUDevice,
			DType: core.Int32, Shape: []int64{3}}, o)
		require.NoError(t, err)
		v, err = x.Reverse(0)
		require.NoError(t, err)
	}()
	o = nil
	runtime.GC()
	runtime.GC()
	select {
	case <-collected:
		t.Fatal("the owner was collected while a view of its memory was alive")
	case <-time.After(20 * time.Millisecond):
	}
	assert.Equal(t, []int32{3, 2, 1}, elems[int32](t, v))
	runtime.KeepAlive(v)
	v = nil
	assert.Eventually(t, func() bool {
		runtime.GC()
		select {
		case <-collected:
			return true
		default:
			return false
		}
	}, 5*time.Second, 5*time.Millisecond)

	_, err := core.WrapKeep(core.Desc{Device: core.CPUDevice, DType: core.Int32, Shape: []int64{3}}, nil)
	assert.ErrorIs(t, err, core.ErrNullData)
}

func TestImportVersionedDeleterOnce(t *testing.T) {
	base := leakcheck.Settle()
	shape := []int64{3}
	data := []int16{1, 2, 3}
	m := &core.DLManagedTensorVersioned{Version: core.Version, Flags: core.FlagReadOnly,
		DLTensor: core.DLTensor{Data: unsafe.Pointer(&data[0]), Device: core.CPUDevice, Ndim: 1,
			Dtype: core.Int16, Shape: &shape[0]}}
	calls := 0
	x, err := core.ImportVersioned(m, func() { calls++ })
	require.NoError(t, err)
	assert.True(t, x.ReadOnly())
	x.Release()
	assert.Equal(t, 1, calls)

	m.Version.Major = 2
	calls = 0
	_, err = core.ImportVersioned(m, func() { calls++ })
	assert.ErrorIs(t, err, core.ErrVersion)
	assert.Equal(t, 1, calls)

	leg := &core.DLManagedTensor{DLTensor: m.DLTensor}
	calls = 0
	y, err := core.ImportLegacy(leg, func() { calls++ })
	require.NoError(t, err)
	assert.False(t, y.ReadOnly())
	y.Release()
	assert.Equal(t, 1, calls)
	leg.DLTensor.Ndim = -4
	calls = 0
	_, err = core.ImportLegacy(leg, func() { calls++ })
	assert.ErrorIs(t, err, core.ErrNdim)
	assert.Equal(t, 1, calls)
	_, err = core.ImportLegacy(nil, nil)
	assert.ErrorIs(t, err, core.ErrNil)
	_, err = core.ImportVersioned(nil, nil)
	assert.ErrorIs(t, err, core.ErrNil)
	assert.Equal(t, base, core.LiveForeign())
}

// TestConcurrentHolders has goroutines take views, attach values and release, on one wrapped
// tensor, while the tensor itself is released: run with -race; the release runs once, last.
func TestConcurrentHolders(t *testing.T) {
	base := leakcheck.Settle()
	b := &foreignBlock{}
	x := b.wrap(t)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				v, err := x.Index(1, int64((w+i)%4))
				if err != nil {
					t.Error(err)
					return
				}
				if err := core.Attach(&dense{}, v); err != nil {
					t.Error(err)
				}
				if _, err := core.At[float64](v, 0); err != nil {
					t.Error(err)
				}
				v.Release()
			}
		})
	}
	wg.Wait()
	assert.Zero(t, b.released.Load())
	x.Release()
	assert.True(t, leakcheck.Until(func() bool { return b.released.Load() == 1 }))
	assert.True(t, leakcheck.Until(func() bool { return core.LiveForeign() == base }))
}

// TestForeignMeansOwned: Foreign is about ownership, not about where the memory lies: device or
// C memory wrapped without a release, whose lifetime the caller manages, is not foreign.
func TestForeignMeansOwned(t *testing.T) {
	d := core.Desc{Data: fakeAddr(0x10000), Device: core.DLDevice{DeviceType: core.CUDA}, DType: core.Float32, Shape: []int64{4}}
	x, err := core.Wrap(d, nil)
	require.NoError(t, err)
	assert.False(t, x.Foreign(), "no release: the caller keeps the device memory alive")
	k, err := core.WrapKeep(d, new(int))
	require.NoError(t, err)
	assert.False(t, k.Foreign())
	y, err := core.Wrap(d, func() {})
	require.NoError(t, err)
	assert.True(t, y.Foreign())
	y.Release()
	assert.False(t, core.MustNew(core.Float32, 4).Foreign())
}
