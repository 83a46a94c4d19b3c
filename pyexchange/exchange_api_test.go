package pyexchange_test

import (
	"math/bits"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/pyexchange"
)

func TestExchangeAPITable(t *testing.T) {
	api := pyexchange.ExchangeAPI()
	require.NotNil(t, api)
	assert.Equal(t, core.DLPackVersion{Major: 1, Minor: 3}, api.Header.Version)
	assert.Nil(t, api.Header.PrevAPI)
	for name, fn := range map[string]uintptr{
		"managed_tensor_allocator": api.ManagedTensorAllocator, "managed_tensor_from_py_object_no_sync": api.ManagedTensorFromPyObjectNoSync,
		"managed_tensor_to_py_object_no_sync": api.ManagedTensorToPyObjectNoSync,
		"dltensor_from_py_object_no_sync":     api.DLTensorFromPyObjectNoSync, "current_work_stream": api.CurrentWorkStream,
	} {
		assert.NotZero(t, fn, name)
	}
	assert.Same(t, api, pyexchange.ExchangeAPI(), "one static table")
}

// checkAllocated verifies a tensor of the allocator against what was asked, writes and reads it
// through a Go import (cdlpack.ImportVersioned, no Python needed), and lets it go.
func checkAllocated(t *testing.T, m *core.DLManagedTensorVersioned, dt core.DLDataType, shape []int64) {
	t.Helper()
	require.NotNil(t, m)
	assert.Equal(t, core.Version, m.Version)
	assert.Zero(t, m.Flags)
	dl := m.DLTensor
	assert.Equal(t, core.DLDevice{DeviceType: core.CPU}, dl.Device)
	assert.Equal(t, dt, dl.Dtype)
	assert.Zero(t, dl.ByteOffset)
	assert.Zero(t, uintptr(dl.Data)%256, "data aligned to 256 bytes")
	require.EqualValues(t, len(shape), dl.Ndim)
	if len(shape) > 0 {
		assert.Equal(t, shape, unsafe.Slice(dl.Shape, len(shape)))
		want := make([]int64, len(shape))
		s := int64(1)
		for i := len(shape) - 1; i >= 0; i-- {
			want[i] = s
			s *= max(shape[i], 1)
		}
		assert.Equal(t, want, unsafe.Slice(dl.Strides, len(shape)), "compact row-major strides")
	}
	ts, err := cdlpack.ImportVersioned(m)
	require.NoError(t, err)
	h, err := core.Hold(ts)
	require.NoError(t, err)
	b, err := ts.Bytes()
	require.NoError(t, err)
	for i := range b {
		require.Zero(t, b[i], "zeroed at %d", i)
	}
	if len(b) > 0 {
		b[0], b[len(b)-1] = 1, 2
	}
	h.Release()
	ts.Release()
}

func TestExchangeAllocate(t *testing.T) {
	foreign := leakcheck.Settle()
	before := pyexchange.ExchangeAPILiveAllocations()
	f64 := core.DLDataType{Code: core.CodeFloat, Bits: 64, Lanes: 1}
	for _, c := range []struct {
		dt    core.DLDataType
		shape []int64
	}{
		{f64, []int64{2, 3}}, {f64, nil}, {f64, []int64{0, 4}}, {f64, []int64{5}},
		{core.DLDataType{Code: core.CodeInt, Bits: 8, Lanes: 1}, []int64{3, 1, 2}},
		{core.DLDataType{Code: core.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}, []int64{7}},
		{core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 4}, []int64{2, 2}},
		{core.DLDataType{Code: core.CodeBool, Bits: 8, Lanes: 1}, []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	} {
		m, err := pyexchange.ExchangeAllocate(c.dt, core.DLDevice{DeviceType: core.CPU}, c.shape)
		require.NoError(t, err, "%v %v", c.dt, c.shape)
		assert.Equal(t, before+1, pyexchange.ExchangeAPILiveAllocations())
		checkAllocated(t, m, c.dt, c.shape)
	}
	assert.Equal(t, foreign, leakcheck.Settle(), "every import let go")
	assert.Equal(t, before, pyexchange.ExchangeAPILiveAllocations(), "every deleter ran")
}

func TestExchangeAllocateRefuses(t *testing.T) {
	before := pyexchange.ExchangeAPILiveAllocations()
	f64 := core.DLDataType{Code: core.CodeFloat, Bits: 64, Lanes: 1}
	cpu := core.DLDevice{DeviceType: core.CPU}
	for _, c := range []struct {
		name  string
		dt    core.DLDataType
		dev   core.DLDevice
		shape []int64
		want  string
	}{
		{"cuda", f64, core.DLDevice{DeviceType: core.CUDA}, []int64{2}, "BufferError: .*device type 2"},
		{"negative", f64, cpu, []int64{2, -1}, "ValueError: .*shape\\[1\\] = -1"},
		{"overflow", f64, cpu, []int64{1 << 40, 1 << 40}, "ValueError: .*too large"},
		{"huge", f64, cpu, []int64{1 << 23, 1 << 23}, "MemoryError: .*too large"},
		{"ndim", f64, cpu, make([]int64, 65), "ValueError: .*ndim 65"},
		{"bits 0", core.DLDataType{Code: core.CodeFloat, Lanes: 1}, cpu, []int64{2}, "ValueError: .*dtype"},
		{"lanes 0", core.DLDataType{Code: core.CodeFloat, Bits: 8}, cpu, []int64{2}, "ValueError: .*dtype"},
		{"code", core.DLDataType{Code: 99, Bits: 8, Lanes: 1}, cpu, []int64{2}, "ValueError: .*dtype"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := pyexchange.ExchangeAllocate(c.dt, c.dev, c.shape)
			require.ErrorIs(t, err, pyexchange.ErrAllocate)
			assert.Regexp(t, c.want, err.Error())
			assert.Nil(t, m)
		})
	}
	assert.Equal(t, before, pyexchange.ExchangeAPILiveAllocations())
}

// FuzzExchangeAllocate feeds the allocator prototypes of any dtype, device and shape: it must
// refuse or allocate exactly what was asked, never crash, and its deleter must free it.
func FuzzExchangeAllocate(f *testing.F) {
	f.Add(uint8(2), uint8(64), uint16(1), int32(1), uint8(2), int64(2), int64(3), int64(0))
	f.Add(uint8(17), uint8(4), uint16(1), int32(1), uint8(1), int64(7), int64(0), int64(0))
	f.Add(uint8(2), uint8(64), uint16(1), int32(2), uint8(1), int64(7), int64(0), int64(0))
	f.Add(uint8(2), uint8(64), uint16(1), int32(1), uint8(3), int64(-1), int64(3), int64(1<<62))
	f.Add(uint8(0), uint8(0), uint16(0), int32(-7), uint8(0), int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, code, nbits uint8, lanes uint16, dev int32, nd uint8, a, b, c int64) {
		shape := []int64{a, b, c}[:int(nd)%4]
		// Keep real allocations small; larger requests are still refused or checked without
		// allocating when they cannot be met.
		n, bytes := uint64(1), uint64(0)
		overflow := false
		for _, d := range shape {
			if d < 0 {
				overflow = true // refused before any allocation
				break
			}
			hi, lo := bits.Mul64(n, uint64(d))
			overflow = overflow || hi != 0
			n = lo
		}
		if !overflow {
			hi, lo := bits.Mul64(n, uint64(nbits)*uint64(lanes))
			bytes = lo / 8
			if hi != 0 || bytes > 1<<24 && bytes < 1<<47 {
				return // a real request for more memory than a fuzz test should take
			}
		}
		dt := core.DLDataType{Code: core.DataTypeCode(code), Bits: nbits, Lanes: lanes}
		before := pyexchange.ExchangeAPILiveAllocations()
		m, err := pyexchange.ExchangeAllocate(dt, core.DLDevice{DeviceType: core.DeviceType(dev)}, shape)
		if err != nil {
			require.ErrorIs(t, err, pyexchange.ErrAllocate)
			require.Nil(t, m)
			require.Equal(t, before, pyexchange.ExchangeAPILiveAllocations())
			return
		}
		require.Equal(t, core.CPU, m.DLTensor.Device.DeviceType)
		require.Equal(t, dt, m.DLTensor.Dtype)
		require.EqualValues(t, len(shape), m.DLTensor.Ndim)
		require.Zero(t, uintptr(m.DLTensor.Data)%256)
		cdlpack.DeleteVersioned(m)
		require.Equal(t, before, pyexchange.ExchangeAPILiveAllocations())
	})
}
