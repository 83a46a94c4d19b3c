package core_test

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

func TestHoldKeepsForeignMemoryUntilReleased(t *testing.T) {
	buf := make([]float64, 4)
	var releases int
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: core.Float64,
		Shape: []int64{4}}, func() { releases++ })
	require.NoError(t, err)
	h, err := core.Hold(x, nil, core.Scalar(1.0))
	require.NoError(t, err)
	x.Release()
	assert.Zero(t, releases, "a hold outlives the tensor's own Release")
	h.Release()
	assert.Equal(t, 1, releases, "the last holder was the hold")
	h.Release() // a second Release of a let-go hold does nothing
	assert.Equal(t, 1, releases)

	_, err = core.Hold(x)
	assert.ErrorIs(t, err, core.ErrReleased)
}

func TestHoldRefusesReleasedAndHoldsNothing(t *testing.T) {
	var releases int
	buf := make([]int32, 2)
	a, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: core.Int32,
		Shape: []int64{2}}, func() { releases++ })
	require.NoError(t, err)
	b := core.Scalar(int32(1))
	b.Release()
	_, err = core.Hold(a, b, a)
	require.ErrorIs(t, err, core.ErrReleased)
	a.Release()
	assert.Equal(t, 1, releases, "a failed Hold let go of what it had taken")
}

func TestHoldAgainstConcurrentRelease(t *testing.T) {
	for range 200 {
		buf := make([]float64, 8)
		var mu sync.Mutex
		released := false
		x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.CPUDevice, DType: core.Float64,
			Shape: []int64{8}}, func() { mu.Lock(); released = true; mu.Unlock() })
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Go(x.Release)
		h, err := core.Hold(x)
		if err != nil {
			require.ErrorIs(t, err, core.ErrReleased)
			wg.Wait()
			continue
		}
		wg.Wait()
		mu.Lock()
		assert.False(t, released, "released under a hold")
		mu.Unlock()
		h.Release()
		assert.True(t, released)
	}
}

// core refuses shapes whose strides would overflow, even when a zero in the shape makes them
// empty: every element offset must fit an int64 (numpyx agrees: see its tests).
func TestEmptyShapesStillBounded(t *testing.T) {
	_, err := core.New(core.Float64, 0, 1<<62, 1<<62)
	assert.ErrorIs(t, err, core.ErrOverflow)
	_, err = core.Wrap(core.Desc{Device: core.CPUDevice, DType: core.Float64, Shape: []int64{1 << 40, 0, 1 << 40}}, nil)
	assert.ErrorIs(t, err, core.ErrOverflow)
	x, err := core.New(core.Float64, 0, 4)
	require.NoError(t, err)
	_, err = x.Reshape(0, 1<<62, 1<<62)
	assert.ErrorIs(t, err, core.ErrOverflow)
	ok, err := core.New(core.Float64, 0, 1<<20, 1<<20)
	require.NoError(t, err, "large but representable empty shapes are fine")
	assert.True(t, ok.Empty())
}

func TestCheckNoSelfOverlap(t *testing.T) {
	data := make([]float32, 64)
	for _, c := range []struct {
		name           string
		shape, strides []int64
		offset         int64
		overlap        bool
		wantSubstr     string
	}{
		{name: "C order", shape: []int64{4, 4}, strides: []int64{4, 1}},
		{name: "transposed", shape: []int64{4, 4}, strides: []int64{1, 4}},
		{name: "negative", shape: []int64{4, 4}, strides: []int64{-4, 1}, offset: 12},
		{name: "stepped", shape: []int64{3, 3}, strides: []int64{12, 2}},
		{name: "zero stride", shape: []int64{3, 2}, strides: []int64{0, 1}, overlap: true, wantSubstr: "stride 0"},
		{name: "zero stride on size 1", shape: []int64{1, 2}, strides: []int64{0, 1}},
		{name: "rows overlap", shape: []int64{3, 4}, strides: []int64{2, 1}, overlap: true, wantSubstr: "twice"},
		// these fail the fast test and are settled element by element
		{name: "interleaved, disjoint", shape: []int64{3, 3}, strides: []int64{2, 3}},
		{name: "interleaved 2x3, disjoint", shape: []int64{2, 3}, strides: []int64{3, 2}},
		{name: "interleaved, meeting", shape: []int64{3, 3}, strides: []int64{2, 4}, overlap: true, wantSubstr: "twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, err := core.FromSliceStrided(data, c.offset, c.shape, c.strides)
			require.NoError(t, err)
			err = x.CheckNoSelfOverlap()
			if !c.overlap {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, core.ErrOverlap)
			assert.Contains(t, err.Error(), c.wantSubstr)
		})
	}
}

func TestMayShareMemory(t *testing.T) {
	a := core.MustNew(core.Float64, 4, 4)
	b := core.MustNew(core.Float64, 4, 4)
	row0, _ := a.Index(0, 0)
	row3, _ := a.Index(0, 3)
	col1, _ := a.Index(1, 1)
	tr, _ := a.Transpose()
	empty, _ := a.Slice(0, 0, 0, 1)
	assert.False(t, core.MayShareMemory(a, b))
	assert.True(t, core.MayShareMemory(a, tr))
	assert.False(t, core.MayShareMemory(row0, row3))
	assert.True(t, core.MayShareMemory(row0, col1))
	assert.True(t, core.MayShareMemory(row3, col1), "a bounds check: a column spans every row")
	assert.False(t, core.MayShareMemory(empty, a))

	// the same host bytes under another host device's label, and under a device's
	pinned, err := core.Wrap(core.Desc{Data: a.Data(), Device: core.DLDevice{DeviceType: core.CUDAHost}, DType: core.Float64,
		Shape: []int64{4}}, nil)
	require.NoError(t, err)
	assert.True(t, core.MayShareMemory(pinned, row0))
	assert.False(t, core.MayShareMemory(pinned, row3))
	onDevice, err := core.Wrap(core.Desc{Data: a.Data(), Device: core.DLDevice{DeviceType: core.CUDA}, DType: core.Float64,
		Shape: []int64{4}}, nil)
	require.NoError(t, err)
	assert.False(t, core.MayShareMemory(onDevice, row0), "device memory is not the host's")
}

func TestByteRange(t *testing.T) {
	x := core.MustFromSlice(make([]float32, 12), 3, 4)
	base := uintptr(x.Data())
	for _, c := range []struct {
		name   string
		t      *core.Tensor
		lo, hi uintptr
	}{
		{"whole", x, base, base + 48},
		{"transposed", mustView(x.Transpose()), base, base + 48},
		{"reversed rows", mustView(x.Reverse(0)), base, base + 48},
		{"row 1", mustView(x.Slice(0, 1, 2, 1)), base + 16, base + 32},
		{"column 2", mustView(x.Slice(1, 2, 3, 1)), base + 8, base + 8 + 2*16 + 4},
		{"empty", mustView(x.Slice(0, 1, 1, 1)), 0, 0},
	} {
		lo, hi := c.t.ByteRange()
		assert.Equal(t, c.lo, lo, c.name)
		assert.Equal(t, c.hi, hi, c.name)
	}
}

func mustView(v *core.Tensor, err error) *core.Tensor {
	if err != nil {
		panic(err)
	}
	return v
}
