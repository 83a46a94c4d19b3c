package core_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
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
	for _, d := range []core.DeviceType{0, 5, 6, 22, -1, 1000} {
		assert.False(t, d.Known(), "%d", d)
	}
}

func TestImportExplicitWith(t *testing.T) {
	base := leakcheck.Settle()
	mem := [6]float32{0, 1, 2, 3, 4, 5}
	shape, strides := []int64{2, 3}, []int64{1, 2}
	dl := &core.DLTensor{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, Ndim: 2,
		Dtype: core.Float32, Shape: &shape[0], Strides: &strides[0]}
	released := 0
	x, r, err := core.ImportExplicitWith(dl, core.FlagReadOnly, countRelease{n: &released, tag: 3})
	require.NoError(t, err)
	assert.Equal(t, 3, r.tag)
	shape[0], strides[0] = 7, 7 // read before the call returned: the tensor keeps its copies
	assert.Equal(t, []int64{2, 3}, x.Shape())
	assert.Equal(t, []int64{1, 2}, x.Strides())
	assert.True(t, x.ReadOnly())
	assert.Equal(t, unsafe.Pointer(&mem[0]), x.Data(), "zero-copy")
	x.Release()
	assert.Equal(t, 1, released)
	assert.Equal(t, base, core.LiveForeign())

	legacy := *dl // no strides: C order
	legacy.Strides, shape[0], strides[0] = nil, 2, 1
	x, _, err = core.ImportExplicitWith(&legacy, 0, countRelease{n: &released})
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 1}, x.Strides())
	assert.False(t, x.ReadOnly())
	x.Release()
	assert.Equal(t, 2, released)

	for _, tc := range []struct {
		name string
		dl   *core.DLTensor
		want error
	}{
		{"nil", nil, core.ErrNil},
		{"ndim", &core.DLTensor{Ndim: -1, Device: core.CPUDevice, Dtype: core.Float32}, core.ErrNdim},
		{"null shape", &core.DLTensor{Ndim: 1, Device: core.CPUDevice, Dtype: core.Float32}, core.ErrShape},
		{"dtype", &core.DLTensor{Data: unsafe.Pointer(&mem[0]), Ndim: 2, Device: core.CPUDevice,
			Dtype: core.DLDataType{Code: core.CodeFloat, Bits: 7, Lanes: 1}, Shape: &shape[0]}, core.ErrDType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			x, r, err := core.ImportExplicitWith(tc.dl, 0, countRelease{n: &n})
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, core.ErrInvalid)
			assert.Nil(t, x)
			assert.Nil(t, r)
			assert.Equal(t, 1, n, "release runs before the error")
		})
	}
	assert.Equal(t, base, core.LiveForeign())
}
