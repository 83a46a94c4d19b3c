package core_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/leakcheck"
)

// countRelease is the release state of WrapExplicitWith's tests: Release counts into n.
type countRelease struct {
	n   *int
	tag int
}

func (r *countRelease) Release() { *r.n++ }

func TestWrapExplicitWith(t *testing.T) {
	base := leakcheck.Settle()
	var mem [64]float64
	for _, tc := range []struct {
		name           string
		shape, strides []int64
		wantStrides    []int64
	}{
		{"scalar", []int64{}, nil, []int64{}},
		{"vector", []int64{8}, nil, []int64{1}},
		{"4-d, inline", []int64{2, 2, 2, 2}, []int64{8, 4, 2, 1}, []int64{8, 4, 2, 1}},
		{"6-d, beyond the inline arrays", []int64{2, 2, 2, 2, 2, 2}, nil, []int64{32, 16, 8, 4, 2, 1}},
		{"strided", []int64{4, 2}, []int64{-2, 8}, []int64{-2, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			released := 0
			shape := append([]int64{}, tc.shape...)
			d := core.Desc{Data: unsafe.Pointer(&mem[32]), Device: core.CPUDevice, DType: core.Float64,
				Shape: shape, Strides: tc.strides}
			x, r, err := core.WrapExplicitWith(d, countRelease{n: &released, tag: 7})
			require.NoError(t, err)
			require.NotNil(t, r)
			assert.Equal(t, 7, r.tag, "the state is a copy of the one passed")
			if len(shape) > 0 {
				shape[0] = 99 // the tensor has its own copy
			}
			assert.Equal(t, tc.shape, x.Shape())
			assert.Equal(t, tc.wantStrides, x.Strides())
			assert.Equal(t, unsafe.Pointer(&mem[32]), x.Data(), "zero-copy")
			assert.Equal(t, base+1, core.LiveForeign())

			v, err := x.Reshape(-1) // a view holds the memory on
			if err != nil {
				v = nil // strided: no reshape view, the tensor alone holds it
			}
			x.Release()
			if v != nil {
				assert.Zero(t, released, "the view holds the memory")
				v.Release()
			}
			assert.Equal(t, 1, released)
			x.Release()
			assert.Equal(t, 1, released, "released once")
			assert.Equal(t, base, core.LiveForeign())
			_, err = core.Hold(x)
			assert.ErrorIs(t, err, core.ErrReleased, "a released tensor stays released")
		})
	}
}

func TestWrapExplicitWithRefused(t *testing.T) {
	base := leakcheck.Settle()
	var mem [4]float64
	for _, d := range []core.Desc{
		{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float64, Shape: []int64{-1}},
		{Data: nil, Device: core.CPUDevice, DType: core.Float64, Shape: []int64{4}},
		{Data: unsafe.Pointer(&mem[0]), Device: core.DLDevice{DeviceType: 99}, DType: core.Float64, Shape: []int64{4}},
		{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float64, Shape: []int64{4}, Strides: []int64{1, 1}},
	} {
		released := 0
		x, r, err := core.WrapExplicitWith(d, countRelease{n: &released})
		require.ErrorIs(t, err, core.ErrInvalid)
		assert.Nil(t, x)
		assert.Nil(t, r)
		assert.Equal(t, 1, released, "release runs before the error")
	}
	assert.Equal(t, base, core.LiveForeign())
}

func TestDeviceTypeKnown(t *testing.T) {
	for _, d := range core.DeviceTypes() {
		assert.True(t, d.Known(), "%v", d)
	}
	for _, d := range []core.DeviceType{0, 5, 6, 19, -1, 1000} {
		assert.False(t, d.Known(), "%d", d)
	}
}
