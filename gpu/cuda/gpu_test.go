package cuda

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file need a CUDA device; they skip (or fail under DLPACK_REQUIRE_GPU=1)
// without one.

func TestGPUDeviceInfo(t *testing.T) {
	requireGPU(t)
	n, err := DeviceCount()
	require.NoError(t, err)
	require.Positive(t, n)
	name, err := DeviceName(0)
	require.NoError(t, err)
	assert.NotEmpty(t, name)
	v, err := DriverVersion()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 11000)
	mem, err := TotalMem(0)
	require.NoError(t, err)
	assert.Positive(t, mem)
	t.Logf("device 0: %s, %d MiB, driver CUDA %d.%d, %d device(s)", name, mem>>20, v/1000, v%1000/10, n)

	_, err = DeviceName(n) // one past the last ordinal
	require.ErrorIs(t, err, ErrNoDevice)
	assert.Contains(t, err.Error(), "device ordinal")
}

func TestGPUDriverErrorNames(t *testing.T) {
	requireGPU(t)
	// Freeing an address that was never allocated is an error the driver names.
	err := MemFree(0, 0xdead0000)
	require.Error(t, err)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrCUDA)
	assert.Contains(t, ce.Name, "CUDA_ERROR_")
	assert.NotEmpty(t, ce.Desc, "cuGetErrorString gives a description")
	t.Log(err)
}

func TestGPUMemcpyRoundTrip(t *testing.T) {
	requireGPU(t)
	const n = 1 << 20
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i * 7)
	}
	d, err := MemAlloc(0, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, MemFree(0, d)) }()
	require.NoError(t, Memset(0, d, 0xab, n, StreamLegacy, false))
	got := make([]byte, n)
	require.NoError(t, Memcpy(0, Copy2D{Dst: uintptr(unsafe.Pointer(&got[0])), DstKind: Host, Src: d, SrcKind: Device, Width: n, Height: 1}, StreamLegacy, false))
	assert.Equal(t, byte(0xab), got[0])
	assert.Equal(t, byte(0xab), got[n-1])

	require.NoError(t, Memcpy(0, Copy2D{Dst: d, DstKind: Device, Src: uintptr(unsafe.Pointer(&src[0])), SrcKind: Host, Width: n, Height: 1}, StreamLegacy, false))
	d2, err := MemAlloc(0, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, MemFree(0, d2)) }()
	require.NoError(t, Memcpy(0, Copy2D{Dst: d2, DstKind: Device, Src: d, SrcKind: Device, Width: n, Height: 1}, StreamLegacy, false))
	require.NoError(t, Memcpy(0, Copy2D{Dst: uintptr(unsafe.Pointer(&got[0])), DstKind: Host, Src: d2, SrcKind: Device, Width: n, Height: 1}, StreamLegacy, false))
	assert.Equal(t, src, got)
}

func TestGPUMemcpy2D(t *testing.T) {
	requireGPU(t)
	// A 16x10 byte matrix with pitch 32 on the host goes to a device buffer with pitch 16: the
	// rows arrive packed and the padding stays untouched.
	const rows, width, hpitch, dpitch = 16, 10, 32, 16
	host := make([]byte, rows*hpitch)
	for i := range host {
		host[i] = byte(i)
	}
	d, err := MemAlloc(0, rows*dpitch)
	require.NoError(t, err)
	defer func() { require.NoError(t, MemFree(0, d)) }()
	require.NoError(t, Memset(0, d, 0xee, rows*dpitch, StreamLegacy, false))
	require.NoError(t, Memcpy(0, Copy2D{Dst: d, DstKind: Device, DstPitch: dpitch, Src: uintptr(unsafe.Pointer(&host[0])), SrcKind: Host, SrcPitch: hpitch, Width: width, Height: rows}, StreamLegacy, false))
	back := make([]byte, rows*dpitch)
	require.NoError(t, Memcpy(0, Copy2D{Dst: uintptr(unsafe.Pointer(&back[0])), DstKind: Host, Src: d, SrcKind: Device, Width: rows * dpitch, Height: 1}, StreamLegacy, false))
	for r := 0; r < rows; r++ {
		assert.Equal(t, host[r*hpitch:r*hpitch+width], back[r*dpitch:r*dpitch+width], "row %d", r)
		for c := width; c < dpitch; c++ {
			assert.Equal(t, byte(0xee), back[r*dpitch+c], "padding at row %d col %d", r, c)
		}
	}
}

func TestGPUStreamsEventsPinned(t *testing.T) {
	requireGPU(t)
	const n = 64 << 20
	h, err := MemAllocHost(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, MemFreeHost(h)) }()
	hb := unsafe.Slice((*byte)(h), n)
	for i := range hb {
		hb[i] = byte(i >> 10)
	}
	info, err := Pointer(uintptr(h))
	require.NoError(t, err)
	assert.Equal(t, Host, info.Kind)
	assert.False(t, info.Managed)

	d, err := MemAlloc(0, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, MemFree(0, d)) }()
	info, err = Pointer(d)
	require.NoError(t, err)
	assert.Equal(t, PointerInfo{Kind: Device, Managed: false, Device: 0}, info)

	s, err := NewStream(0, StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, DestroyStream(0, s)) }()
	start, err := NewEvent(0, EventDefault)
	require.NoError(t, err)
	defer func() { require.NoError(t, start.Destroy(0)) }()
	end, err := NewEvent(0, EventDefault)
	require.NoError(t, err)
	defer func() { require.NoError(t, end.Destroy(0)) }()

	require.NoError(t, start.Record(0, s))
	require.NoError(t, Memcpy(0, Copy2D{Dst: d, DstKind: Device, Src: uintptr(h), SrcKind: Host, Width: n, Height: 1}, s, true))
	require.NoError(t, Memset(0, uintptr(h), 0, 0, s, true)) // empty: a no-op
	require.NoError(t, end.Record(0, s))
	// The pinned buffer is reused for the way back only after the stream says the upload is done.
	require.NoError(t, end.Synchronize(0))
	ms, err := Elapsed(0, start, end)
	require.NoError(t, err)
	assert.Positive(t, ms)
	t.Logf("async H2D of %d MiB from pinned memory: %.3f ms (%.1f GB/s)", n>>20, ms, float64(n)/float64(ms)/1e6)

	for i := range hb {
		hb[i] = 0
	}
	require.NoError(t, Memcpy(0, Copy2D{Dst: uintptr(h), DstKind: Host, Src: d, SrcKind: Device, Width: n, Height: 1}, s, true))
	require.NoError(t, StreamSynchronize(0, s))
	assert.Equal(t, byte(1), hb[1024])
	assert.Equal(t, byte(((n-1)>>10)&0xff), hb[n-1])

	// Another stream waits for an event without blocking the host.
	s2, err := NewStream(0, StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, DestroyStream(0, s2)) }()
	require.NoError(t, Memset(0, d, 7, n, s, true))
	ev, err := NewEvent(0, EventDisableTiming)
	require.NoError(t, err)
	require.NoError(t, ev.Record(0, s))
	require.NoError(t, StreamWaitEvent(0, s2, ev))
	require.NoError(t, ev.Destroy(0))
	require.NoError(t, Memcpy(0, Copy2D{Dst: uintptr(h), DstKind: Host, Src: d, SrcKind: Device, Width: n, Height: 1}, s2, true))
	require.NoError(t, StreamSynchronize(0, s2))
	assert.Equal(t, byte(7), hb[0])
	assert.Equal(t, byte(7), hb[n-1])
	require.NoError(t, StreamSynchronize(0, StreamPerThread))
	require.NoError(t, Synchronize(0))
}

func TestGPUManagedMemory(t *testing.T) {
	requireGPU(t)
	const n = 4096
	m, err := MemAllocManaged(0, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, MemFree(0, m)) }()
	info, err := Pointer(m)
	require.NoError(t, err)
	assert.True(t, info.Managed)
	assert.Equal(t, 0, info.Device)
	require.NoError(t, Memset(0, m, 0x5a, n, StreamLegacy, false))
	require.NoError(t, Synchronize(0))
	// Managed memory is addressable from the host.
	mp := *(*unsafe.Pointer)(unsafe.Pointer(&m)) // a driver address, not Go memory
	b := unsafe.Slice((*byte)(mp), n)
	assert.Equal(t, byte(0x5a), b[0])
	assert.Equal(t, byte(0x5a), b[n-1])
	b[10] = 1
	got := make([]byte, 16)
	require.NoError(t, Memcpy(0, Copy2D{Dst: uintptr(unsafe.Pointer(&got[0])), DstKind: Host, Src: m, SrcKind: Unified, Width: 16, Height: 1}, StreamLegacy, false))
	assert.Equal(t, byte(1), got[10])
}
