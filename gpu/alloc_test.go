package gpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
)

// wrapCounting wraps d with a release that counts its calls.
func wrapCounting(d core.Desc) (*core.Tensor, *int, error) {
	released := new(int)
	w, err := Wrap(d, func() { *released++ })
	return w, released, err
}

func TestWrapEmpty(t *testing.T) {
	f := installFakeDriver(t, 2)
	managed := core.DLDevice{DeviceType: core.CUDAManaged, DeviceID: 1}
	// DLPack producers may leave any pointer in an empty tensor: NULL, junk, or one freed long
	// ago. The driver knows none of these; Wrap must not ask it about them.
	for _, dev := range []core.DLDevice{Device(0), Device(1), Pinned, managed} {
		for _, data := range []uintptr{0, 0xdead0000, 0x8} {
			for _, shape := range [][]int64{{0}, {3, 0}, {0, 5, 2}} {
				d := core.Desc{Data: addr(data), ByteOffset: 64, Device: dev, DType: core.Float32, Shape: shape}
				w, released, err := wrapCounting(d)
				require.NoError(t, err, "%s %#x %v", dev, data, shape)
				assert.Equal(t, dev, w.Device())
				assert.Equal(t, shape, w.Shape())
				assert.Zero(t, w.Len())
				assert.Zero(t, *released)
				w.Release()
				assert.Equal(t, 1, *released, "the owner's deleter runs once")
			}
		}
	}
	assert.Empty(t, f.queries(), "no pointer of an empty tensor reaches the driver")

	// Everything else is still checked, and the deleter still runs exactly once on failure.
	bad := []struct {
		name string
		d    core.Desc
		is   error
	}{
		{"no such device", core.Desc{Data: addr(0xdead0000), Device: Device(2), DType: core.Float32, Shape: []int64{0}}, ErrNoDevice},
		{"no such managed device", core.Desc{Device: core.DLDevice{DeviceType: core.CUDAManaged, DeviceID: 7}, DType: core.Float32, Shape: []int64{0}}, ErrNoDevice},
		{"negative size", core.Desc{Data: addr(0xdead0000), Device: Device(0), DType: core.Float32, Shape: []int64{0, -1}}, core.ErrShape},
		{"bad dtype", core.Desc{Data: addr(0xdead0000), Device: Device(0), DType: core.DLDataType{Code: 99, Bits: 8, Lanes: 1}, Shape: []int64{0}}, core.ErrDType},
		{"bad strides", core.Desc{Data: addr(0xdead0000), Device: Device(0), DType: core.Float32, Shape: []int64{0}, Strides: []int64{1, 1}}, core.ErrStrides},
		{"negative device id", core.Desc{Device: core.DLDevice{DeviceType: core.CUDA, DeviceID: -1}, DType: core.Float32, Shape: []int64{0}}, core.ErrDevice},
		{"not a CUDA device", core.Desc{Device: core.DLDevice{DeviceType: core.ROCM}, DType: core.Float32, Shape: []int64{0}}, ErrUnsupportedDevice},
	}
	for _, c := range bad {
		w, released, err := wrapCounting(c.d)
		require.ErrorIs(t, err, c.is, c.name)
		assert.Regexp(t, "^gpu: ", err.Error(), c.name)
		assert.Nil(t, w, c.name)
		assert.Equal(t, 1, *released, "%s: the owner's deleter runs once on failure", c.name)
	}
	assert.Empty(t, f.queries())

	// A tensor with elements is still checked against the driver.
	f.alloc(0x7000_0000, cuda.PointerInfo{Kind: cuda.Device, Device: 1})
	w, released, err := wrapCounting(core.Desc{Data: addr(0x7000_0000), Device: Device(1), DType: core.Float32, Shape: []int64{2, 2}})
	require.NoError(t, err)
	w.Release()
	assert.Equal(t, 1, *released)
	_, released, err = wrapCounting(core.Desc{Data: addr(0x7000_0000), Device: Device(0), DType: core.Float32, Shape: []int64{2, 2}})
	require.ErrorIs(t, err, ErrUnsupportedDevice, "memory of device 1 said to be on device 0")
	assert.Equal(t, 1, *released)
	_, released, err = wrapCounting(core.Desc{Data: addr(0xdead0000), Device: Device(0), DType: core.Float32, Shape: []int64{1}})
	require.ErrorIs(t, err, ErrUnsupportedDevice, "an address the driver does not know")
	assert.Contains(t, err.Error(), "0xdead0000 is not CUDA memory")
	assert.Equal(t, 1, *released)
	_, released, err = wrapCounting(core.Desc{Data: addr(0x7000_0000), ByteOffset: 16, Device: Device(1), DType: core.Float32, Shape: []int64{1}})
	require.ErrorIs(t, err, ErrUnsupportedDevice, "the driver is asked about the first element")
	assert.Equal(t, 1, *released)
	assert.Equal(t, []uintptr{0x7000_0000, 0x7000_0000, 0xdead0000, 0x7000_0010}, f.queries())
}

// An empty allocation has no memory to ask the driver for, but its device must exist all the
// same: a tensor on a device the machine lacks is refused at any size.
func TestAllocEmptyChecksDevice(t *testing.T) {
	installFakeDriver(t, 2)
	allocs := map[string]func(dev int, shape ...int64) (*core.Tensor, error){
		"Alloc": func(dev int, shape ...int64) (*core.Tensor, error) { return Alloc(core.Float32, dev, shape...) },
		"AllocManaged": func(dev int, shape ...int64) (*core.Tensor, error) {
			return AllocManaged(core.Float32, dev, shape...)
		},
	}
	for name, alloc := range allocs {
		for _, dev := range []int{0, 1} {
			x, err := alloc(dev, 3, 0)
			require.NoError(t, err, "%s on device %d", name, dev)
			assert.Equal(t, int32(dev), x.Device().DeviceID)
			assert.Equal(t, []int64{3, 0}, x.Shape())
			x.Release()
		}
		for _, dev := range []int{2, 7} {
			x, err := alloc(dev, 0)
			require.ErrorIs(t, err, ErrNoDevice, "%s on device %d of 2", name, dev)
			assert.Contains(t, err.Error(), "the driver reports 2 device(s)")
			assert.Nil(t, x)
		}
	}
}
