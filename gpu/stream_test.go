package gpu

import (
	"fmt"
	"math/bits"
	"os"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
)

// requireGPU skips t, with the reason, where CUDA cannot be used; with DLPACK_REQUIRE_GPU=1
// (set by the device check) it fails instead.
func requireGPU(t testing.TB) {
	t.Helper()
	if err := cuda.Available(); err != nil {
		require.ErrorIs(t, err, ErrNoDevice)
		if os.Getenv("DLPACK_REQUIRE_GPU") == "1" {
			t.Fatalf("DLPACK_REQUIRE_GPU=1 but %v", err)
		}
		t.Skipf("no CUDA device: %v", err)
	}
}

// requireNoGPU skips tests of the no-device paths where a device exists.
func requireNoGPU(t *testing.T) {
	t.Helper()
	if cuda.Available() == nil {
		t.Skip("a CUDA device is present: the no-device paths cannot be observed here")
	}
}

// bigHandle is a stream handle as a 64-bit driver hands them out (an address), or as a 32-bit one
// would.
const bigHandle = 0x7f00dead0000 >> (64 - bits.UintSize)

func TestStreamFromProtocol(t *testing.T) {
	cases := []struct {
		v      int64
		handle uintptr
		noSync bool
		str    string
		errIs  error
	}{
		{v: 1, handle: 1, str: "legacy"},
		{v: 2, handle: 2, str: "per-thread"},
		{v: -1, handle: 0, noSync: true, str: "no-sync"},
		{v: 3, handle: 3, str: "stream 0x3"},
		{v: bigHandle, handle: bigHandle, str: fmt.Sprintf("stream %#x", uint64(bigHandle))},
		{v: 0, errIs: ErrStream},
		{v: -2, errIs: ErrStream},
		{v: -1 << 63, errIs: ErrStream},
	}
	for _, c := range cases {
		s, err := StreamFromProtocol(c.v)
		if c.errIs != nil {
			require.ErrorIs(t, err, c.errIs, "v=%d", c.v)
			assert.Regexp(t, `^gpu: stream -?\d+ is`, err.Error(), "the message names the stream first")
			continue
		}
		require.NoError(t, err, "v=%d", c.v)
		assert.Equal(t, c.handle, s.Handle(), "v=%d", c.v)
		assert.Equal(t, c.noSync, s.IsNoSync(), "v=%d", c.v)
		assert.Equal(t, c.str, s.String(), "v=%d", c.v)
		assert.Equal(t, c.v, s.Protocol(), "v=%d round trip", c.v)
		assert.NoError(t, s.Close(), "closing a stream one does not own does nothing")
	}
	// The zero Stream is the legacy default stream.
	var z Stream
	assert.Equal(t, int64(1), z.Protocol())
	assert.Equal(t, uintptr(1), z.Handle())
	assert.Equal(t, "legacy", z.String())
	assert.Equal(t, int64(2), PerThreadStream.Protocol())
	assert.Equal(t, int64(-1), NoSync.Protocol())
	fs := ForeignStream(0x1234, 0)
	assert.Equal(t, int64(0x1234), fs.Protocol())
	assert.NoError(t, fs.Close())
	assert.NoError(t, NoSync.Synchronize())
}

func TestReadyForWithoutDevice(t *testing.T) {
	host := core.MustFromSlice([]float32{1, 2, 3}, 3)
	assert.NoError(t, ReadyFor(host, LegacyStream, 1), "None on the host")
	assert.NoError(t, ReadyFor(host, LegacyStream, -1))
	assert.ErrorIs(t, ReadyFor(host, LegacyStream, 5), ErrStream)
	assert.ErrorIs(t, ReadyFor(host, LegacyStream, 0), ErrStream)

	buf := make([]float32, 3)
	dev, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Device(0), DType: core.Float32, Shape: []int64{3}}, buf)
	require.NoError(t, err)
	assert.NoError(t, ReadyFor(dev, LegacyStream, -1), "-1: no synchronisation, no driver call")
	assert.NoError(t, ReadyFor(dev, LegacyStream, 1), "the same stream: nothing to do")
	assert.ErrorIs(t, ReadyFor(dev, LegacyStream, 0), ErrStream)
	rocm, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.ROCM}, DType: core.Float32, Shape: []int64{3}}, buf)
	require.NoError(t, err)
	assert.ErrorIs(t, ReadyFor(rocm, LegacyStream, 1), ErrUnsupportedDevice)
	assert.ErrorIs(t, ReadyFor(nil, LegacyStream, 1), core.ErrNil, "an error, not a panic")
	if cuda.Available() != nil {
		assert.ErrorIs(t, ReadyFor(dev, LegacyStream, 2), ErrNoDevice)
	}
}

func TestNoDevice(t *testing.T) {
	requireNoGPU(t)
	_, err := Alloc(core.Float32, 0, 2, 3)
	require.ErrorIs(t, err, ErrNoDevice)
	assert.Contains(t, err.Error(), "gpu: alloc")
	_, err = Alloc(core.Float32, 0, 0)
	require.ErrorIs(t, err, ErrNoDevice, "even empty tensors need a device")
	_, err = AllocPinned(core.Float32, 4)
	require.ErrorIs(t, err, ErrNoDevice)
	_, err = AllocManaged(core.Float32, 0, 4)
	require.ErrorIs(t, err, ErrNoDevice)
	_, err = NewStream(0)
	require.ErrorIs(t, err, ErrNoDevice)
	_, err = To(core.MustFromSlice([]float32{1}, 1), Device(0))
	require.ErrorIs(t, err, ErrNoDevice)

	released := 0
	_, err = Wrap(core.Desc{Data: addr(0x1000), Device: Device(0), DType: core.Float32, Shape: []int64{4}}, func() { released++ })
	require.ErrorIs(t, err, ErrNoDevice)
	assert.Equal(t, 1, released, "the owner's deleter runs once on failure")

	// A copy that needs the driver says so, without touching the memory.
	buf := make([]float32, 4)
	dev, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Device(0), DType: core.Float32, Shape: []int64{4}}, buf)
	require.NoError(t, err)
	require.ErrorIs(t, Copy(core.MustNew(core.Float32, 4), dev), ErrNoDevice)
	_, err = ToHost(dev)
	require.ErrorIs(t, err, ErrNoDevice)
}

func TestCopyErrors(t *testing.T) {
	buf := make([]float32, 6)
	dev, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Device(0), DType: core.Float32, Shape: []int64{2, 3}}, buf)
	require.NoError(t, err)
	host := core.MustNew(core.Float32, 2, 3)

	require.ErrorIs(t, Copy(core.MustNew(core.Float32, 3, 2), dev), core.ErrShape)
	ro, err := host.AsReadOnly()
	require.NoError(t, err)
	require.ErrorIs(t, Copy(ro, dev), core.ErrReadOnly)
	rocm, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.ROCM}, DType: core.Float32, Shape: []int64{2, 3}}, buf)
	require.NoError(t, err)
	require.ErrorIs(t, Copy(host, rocm), ErrUnsupportedDevice)
	_, err = To(host, core.DLDevice{DeviceType: core.Vulkan})
	require.ErrorIs(t, err, ErrUnsupportedDevice)
	require.ErrorIs(t, CopyOn(host, dev, NoSync), ErrStream)
	_, err = ToOn(host, Device(0), NoSync)
	require.ErrorIs(t, err, ErrStream)
	_, err = To(nil, Device(0))
	require.ErrorIs(t, err, core.ErrNil)
	require.ErrorIs(t, Copy(nil, host), core.ErrNil)
	v, err := host.View()
	require.NoError(t, err)
	v.Release()
	require.ErrorIs(t, Copy(v, dev), core.ErrReleased)

	// Host to host needs no device: it is memory.Copy, casts included (a narrowing one when
	// asked for).
	src := core.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	require.ErrorIs(t, Copy(host, src), adapters.ErrCast)
	require.NoError(t, Copy(host, src, adapters.AllowCast()))
	got, err := core.Elements[float32](host)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, got)

	// Sub-byte dtypes only as raw, C-contiguous copies of the same dtype.
	i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	sb, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Device(0), DType: i4, Shape: []int64{8}}, buf)
	require.NoError(t, err)
	require.ErrorIs(t, Copy(core.MustNew(core.Int8, 8), sb), adapters.ErrUnsupported)

	_, err = Alloc(core.Float32, 0, -1)
	require.ErrorIs(t, err, core.ErrShape)
	_, err = Alloc(core.Float32, 0, 1<<40, 1<<40)
	require.ErrorIs(t, err, core.ErrOverflow)
	_, err = AllocPinned(core.DLDataType{Code: 99, Bits: 8, Lanes: 1}, 1)
	require.ErrorIs(t, err, core.ErrDType)
	_, err = Alloc(core.Float32, -1, 1)
	require.ErrorIs(t, err, ErrNoDevice)

	released := 0
	_, err = Wrap(core.Desc{Device: core.DLDevice{DeviceType: core.ROCM}, DType: core.Float32, Shape: []int64{0}}, func() { released++ })
	require.ErrorIs(t, err, ErrUnsupportedDevice)
	assert.Equal(t, 1, released)
}

func TestToHostPolicies(t *testing.T) {
	host := core.MustFromSlice([]float32{1, 2}, 2)
	got, err := ToHost(host)
	require.NoError(t, err)
	assert.Same(t, host, got, "a host tensor needs no copy")
	var copied bool
	got, err = ToHost(host, adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	assert.NotEqual(t, host.Data(), got.Data())

	buf := make([]float32, 2)
	dev, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Device(0), DType: core.Float32, Shape: []int64{2}}, buf)
	require.NoError(t, err)
	_, err = ToHost(dev, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	require.ErrorIs(t, err, core.ErrNotHost)
	assert.Contains(t, err.Error(), "cuda:0")
	_, err = ToHost(nil)
	require.ErrorIs(t, err, core.ErrNil)

	// With copies done in host memory in place of the missing device, the move itself.
	withHostCopies(t, func() {
		buf[0], buf[1] = 7, 8
		var copied bool
		h, err := ToHost(dev, adapters.ReportCopy(&copied))
		require.NoError(t, err)
		assert.True(t, copied)
		assert.Equal(t, core.CPUDevice, h.Device())
		assert.Equal(t, core.FlagIsCopied, h.Flags()&core.FlagIsCopied)
		assert.Equal(t, []float32{7, 8}, values(t, h))
		same, err := To(dev, Device(0))
		require.NoError(t, err)
		assert.Equal(t, dev.Data(), same.Data(), "already there: a view, no copy")
	})
}

func TestStreamCopiesCloseOnce(t *testing.T) {
	f := installFakeDriver(t, 1)
	s, err := NewStream(0)
	require.NoError(t, err)
	c := s // a copy shares the stream, and its ownership
	require.NoError(t, s.Synchronize())
	require.NoError(t, s.Close())
	require.NoError(t, c.Close(), "a copy of a closed stream: Close does nothing")
	require.NoError(t, s.Close(), "and so does a second Close")
	assert.Equal(t, []cuda.Stream{s.handle}, f.destroys(), "the handle is destroyed once")

	// The driver may hand the same handle value to the next stream: the stale copies must
	// leave it alone.
	s2, err := NewStream(0)
	require.NoError(t, err)
	require.Equal(t, s.handle, s2.handle, "the fake reuses the handle")
	require.NoError(t, c.Close())
	require.NoError(t, s.Close())
	assert.Len(t, f.destroys(), 1, "closing stale copies destroyed the new stream")
	require.NoError(t, s2.Synchronize(), "the new stream is alive")
	require.NoError(t, s2.Close())
	assert.Equal(t, []cuda.Stream{s.handle, s2.handle}, f.destroys())
}

func TestStreamConcurrentClose(t *testing.T) {
	f := installFakeDriver(t, 1)
	for range 20 {
		s, err := NewStream(0)
		require.NoError(t, err)
		const n = 8
		errs := make(chan error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range n {
			c := s
			wg.Go(func() {
				<-start
				errs <- c.Close()
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
	}
	assert.Len(t, f.destroys(), 20, "one destroy per stream, however many copies close it at once")
}

func TestClosedStreamRefused(t *testing.T) {
	f := installFakeDriver(t, 1)
	s, err := NewStream(0)
	require.NoError(t, err)
	c := s
	require.NoError(t, s.Close())
	synced := len(f.syncs())
	check := func(err error, what string) {
		t.Helper()
		require.ErrorIs(t, err, ErrStream, what)
		assert.Contains(t, err.Error(), "closed", what)
	}
	check(c.Synchronize(), "Synchronize on a copy")
	check(s.Synchronize(), "Synchronize")
	buf := make([]float32, 4)
	dev, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: Device(0), DType: core.Float32, Shape: []int64{4}}, buf)
	require.NoError(t, err)
	host := core.MustNew(core.Float32, 4)
	check(CopyOn(host, dev, c), "CopyOn")
	check(CopyOn(dev, host, c), "CopyOn")
	_, err = ToOn(host, Device(0), c)
	check(err, "ToOn")
	check(ReadyFor(dev, c, 1), "ReadyFor with a closed producer")
	assert.Len(t, f.syncs(), synced, "a closed handle never reaches the driver")
	assert.Equal(t, "stream 0x1000", c.String())
}

func TestDefaultStreamsNeverDestroyed(t *testing.T) {
	f := installFakeDriver(t, 1)
	fs := ForeignStream(0x5000, 0)
	p, err := StreamFromProtocol(0x6000)
	require.NoError(t, err)
	for _, s := range []Stream{LegacyStream, PerThreadStream, NoSync, {}, fs, p} {
		require.NoError(t, s.Close(), "%s", s)
		require.NoError(t, s.Close(), "%s", s)
	}
	assert.Empty(t, f.destroys())
	require.NoError(t, LegacyStream.Synchronize(), "still usable after Close")
	require.NoError(t, PerThreadStream.Synchronize())
	require.NoError(t, NoSync.Synchronize())
	assert.Equal(t, []cuda.Stream{cuda.StreamLegacy, cuda.StreamPerThread}, f.syncs())
}
