package core_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// TestValidateErrorsNameFieldAndValue checks that each refusal wraps the right sentinel and
// ErrInvalid, and that its message names the field and the value that was wrong.
func TestValidateErrorsNameFieldAndValue(t *testing.T) {
	p := fakeAddr(0x10000)
	ok := core.Desc{Data: p, Device: core.CPUDevice, DType: core.Float32, Shape: []int64{2, 3}}
	cases := []struct {
		name string
		edit func(d *core.Desc)
		want error
		msg  string
	}{
		{"too many dims", func(d *core.Desc) { d.Shape = make([]int64, 65) }, core.ErrNdim, "ndim = 65"},
		{"negative dim", func(d *core.Desc) { d.Shape = []int64{2, -1} }, core.ErrShape, "shape[1] = -1"},
		{"shape overflow", func(d *core.Desc) { d.Shape = []int64{1 << 40, 1 << 40} }, core.ErrOverflow, "shape"},
		{"stride count", func(d *core.Desc) { d.Strides = []int64{1} }, core.ErrStrides, "1 strides for ndim = 2"},
		{"stride overflow", func(d *core.Desc) { d.Strides = []int64{math.MaxInt64, 1} }, core.ErrOverflow, "strides [9223372036854775807 1]"},
		{"byte extent overflow", func(d *core.Desc) { d.Strides = []int64{math.MaxInt64 / 2, 1} }, core.ErrOverflow, "itemsize 4"},
		{"null data", func(d *core.Desc) { d.Data = nil }, core.ErrNullData, "6 elements"},
		{"dtype code", func(d *core.Desc) { d.DType.Code = 200 }, core.ErrDType, "dtype.code = 200"},
		{"dtype bits", func(d *core.Desc) { d.DType.Bits = 12 }, core.ErrDType, "dtype.bits = 12"},
		{"dtype lanes", func(d *core.Desc) { d.DType.Lanes = 0 }, core.ErrDType, "dtype.lanes = 0"},
		{"device type", func(d *core.Desc) { d.Device.DeviceType = 6 }, core.ErrDevice, "device_type = 6"},
		{"device id", func(d *core.Desc) { d.Device.DeviceID = -2 }, core.ErrDevice, "device_id = -2"},
		{"offset wraps", func(d *core.Desc) { d.ByteOffset = math.MaxUint64 }, core.ErrBounds, "byte_offset"},
		{"below zero", func(d *core.Desc) { d.Strides = []int64{-1 << 20, 1} }, core.ErrBounds, "wraps"},
		{"sub-byte wraps", func(d *core.Desc) {
			d.Data = fakeAddr(^uintptr(0) - 1)
			d.DType = core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
		}, core.ErrBounds, "byte extent [0, 3)"},
		{"opaque below zero", func(d *core.Desc) {
			d.Device.DeviceType = core.OpenCL
			d.Strides = []int64{-3, -1}
			d.ByteOffset = 4
		}, core.ErrBounds, "byte_offset 4 with byte extent [-20, 4)"},
		{"opaque past 2^64", func(d *core.Desc) {
			d.Device.DeviceType = core.Vulkan
			d.ByteOffset = math.MaxUint64 - 8
		}, core.ErrBounds, "byte_offset 18446744073709551607"},
		{"sub-byte strided", func(d *core.Desc) {
			d.DType = core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
			d.Strides = []int64{1, 2}
		}, core.ErrStrides, "sub-byte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := ok
			c.edit(&d)
			_, err := core.ValidateDesc(d)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
			assert.ErrorIs(t, err, core.ErrInvalid)
			assert.Contains(t, err.Error(), c.msg)
			assert.Contains(t, err.Error(), "core: ")
			released := 0
			_, err = core.Wrap(d, func() { released++ })
			assert.ErrorIs(t, err, c.want)
			assert.Equal(t, 1, released, "Wrap runs release on error too")
		})
	}
	d, err := core.ValidateDesc(core.Desc{Data: p, ByteOffset: 8, Device: core.CPUDevice, DType: core.Float32, Shape: []int64{2}})
	require.NoError(t, err)
	assert.Equal(t, unsafe.Add(p, 8), d.Data, "byte_offset folded into data on the host")
	assert.Zero(t, d.ByteOffset)
	assert.Equal(t, []int64{1}, d.Strides)
	d, err = core.ValidateDesc(core.Desc{Data: p, ByteOffset: 8, Device: core.DLDevice{DeviceType: core.Vulkan}, DType: core.Float32, Shape: []int64{2}})
	require.NoError(t, err)
	assert.Equal(t, p, d.Data, "an opaque handle keeps its offset beside it")
	assert.Equal(t, uint64(8), d.ByteOffset)
	d, err = core.ValidateDesc(core.Desc{Device: core.CPUDevice, DType: core.Float32, Shape: []int64{0, 3}, ByteOffset: 12})
	require.NoError(t, err, "empty tensors may have NULL data")
	assert.Zero(t, d.ByteOffset, "ByteOffset is 0 on the host, empty tensors too")
	assert.Nil(t, d.Data)
}

func TestValidateDLTensor(t *testing.T) {
	shape := []int64{2, 3}
	data := make([]float32, 6)
	dl := core.DLTensor{Data: unsafe.Pointer(&data[0]), Device: core.CPUDevice, Ndim: 2, Dtype: core.Float32, Shape: &shape[0]}
	d, err := core.ValidateDLTensor(&dl)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 1}, d.Strides, "NULL strides mean C order")
	shape[0] = 9
	assert.Equal(t, []int64{2, 3}, d.Shape, "the result does not alias the descriptor")

	_, err = core.ValidateDLTensor(nil)
	assert.ErrorIs(t, err, core.ErrNil)
	dl.Shape = nil
	_, err = core.ValidateDLTensor(&dl)
	assert.ErrorIs(t, err, core.ErrShape)
	dl.Ndim = 0
	d, err = core.ValidateDLTensor(&dl)
	require.NoError(t, err, "a 0-d tensor needs no shape")
	assert.Empty(t, d.Shape)
}

// TestAllocationsPastMemory: a tensor larger than the machine's memory and swap fails with
// ErrTooLarge; Go's allocator ended the process ("fatal error: runtime: out of memory") when
// Clone copied a float64 broadcast to 2^40 elements (8 TiB).
func TestAllocationsPastMemory(t *testing.T) {
	const n = 1 << 43 // 64 TiB of float64, under Go's own limit
	_, err := core.New(core.Float64, n)
	require.ErrorIs(t, err, core.ErrTooLarge)
	_, err = memory.NewUninit(core.Float64, n)
	require.ErrorIs(t, err, core.ErrTooLarge)
	_, _, err = memory.NewUninitParts(n*8, nil)
	require.ErrorIs(t, err, core.ErrTooLarge)
	x, err := core.New(core.Float64, 1<<10) // ordinary sizes are untouched
	require.NoError(t, err)
	x.Release()
}

// TestNumBytesOfHugeBroadcast: a view that repeats one element more times than bytes can be
// counted says so with math.MaxInt64; its product of bytes wrapped to 0 or a negative count.
func TestNumBytesOfHugeBroadcast(t *testing.T) {
	one := core.MustFromSlice([]float64{1}, 1)
	for _, c := range []struct {
		shape []int64
		want  int64
	}{
		{[]int64{1 << 59}, 1 << 62},
		{[]int64{1<<60 - 1}, (1<<60 - 1) * 8},
		{[]int64{1 << 60}, math.MaxInt64},
		{[]int64{1 << 31, 1 << 31}, math.MaxInt64},
		{[]int64{1 << 61}, math.MaxInt64},
	} {
		b, err := one.BroadcastTo(c.shape...)
		require.NoError(t, err)
		assert.Equal(t, c.want, b.NumBytes(), "%v", c.shape)
	}
}

// TestNumBytesOfHugeTensor: a compact tensor whose byte extent fits an int64 has a NumBytes that
// does too; counting its bits first overflowed to 0, and Bytes returned nothing for 2^61 bytes.
func TestNumBytesOfHugeTensor(t *testing.T) {
	x, err := core.Wrap(core.Desc{Data: fakeAddr(0x10000), Device: core.CPUDevice, DType: core.Float64, Shape: []int64{1 << 58}}, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1)<<61, x.NumBytes())
	b, err := x.ReadOnlyBytes() // never read: the address is not memory
	require.NoError(t, err)
	assert.Equal(t, 1<<61, len(b))
	i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	for n, want := range map[int64]int64{0: 0, 1: 1, 2: 1, 3: 2, 1 << 60: 1 << 59} {
		y, err := core.Wrap(core.Desc{Data: fakeAddr(0x10000), Device: core.CPUDevice, DType: i4, Shape: []int64{n}}, nil)
		require.NoError(t, err)
		assert.Equal(t, want, y.NumBytes(), "%d int4", n)
	}
}
