package gpu

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file need a CUDA device; they skip (or fail under DLPACK_REQUIRE_GPU=1)
// without one.

// waitForeign waits until core.LiveForeign is back to want (cleanups run asynchronously).
func waitForeign(t *testing.T, want int64) {
	t.Helper()
	assert.True(t, leakcheck.Until(func() bool { return core.LiveForeign() <= want }),
		"foreign memory leaked: %d live, want %d", core.LiveForeign(), want)
}

func TestGPUAllocAndMove(t *testing.T) {
	requireGPU(t)
	live := leakcheck.Settle()
	d, err := Alloc(core.Float32, 0, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, Device(0), d.Device())
	_, err = core.Elements[float32](d)
	require.ErrorIs(t, err, core.ErrNotHost, "the CPU never touches device memory")
	info, err := cuda.Pointer(uintptr(d.Data()))
	require.NoError(t, err)
	assert.Equal(t, cuda.Device, info.Kind)

	zeros, err := To(d, core.CPUDevice)
	require.NoError(t, err)
	assert.Equal(t, make([]float32, 6), values(t, zeros), "Alloc zeroes")

	src := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, Copy(d, src))
	back, err := To(d, core.CPUDevice)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, values(t, back))
	assert.True(t, back.Flags()&core.FlagIsCopied != 0)

	// device -> device, and a transposed view of device memory to the host
	d2, err := To(d, Device(0))
	require.NoError(t, err)
	assert.Equal(t, d.Data(), d2.Data(), "same device: a view")
	dt, err := d.Transpose()
	require.NoError(t, err)
	h, err := To(dt, core.CPUDevice)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 4, 2, 5, 3, 6}, values(t, h))
	c, err := Alloc(core.Float32, 0, 3, 2)
	require.NoError(t, err)
	require.NoError(t, Copy(c, dt))
	h, err = To(c, core.CPUDevice)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 4, 2, 5, 3, 6}, values(t, h))

	for _, x := range []*core.Tensor{d, d2, dt, c} {
		x.Release()
	}
	waitForeign(t, live)
}

func TestGPUStridedCopiesAllLayouts(t *testing.T) {
	requireGPU(t)
	r := rand.New(rand.NewSource(2))
	for iter := 0; iter < 150; iter++ {
		shape := randomShape(r)
		ls, ld := randomLayout(r, shape), randomLayout(r, shape)
		name := fmt.Sprintf("%d:%v", iter, shape)
		srcBuf := make([]float32, ls.size())
		for i := range srcBuf {
			srcBuf[i] = float32(i) + 0.25
		}
		srcBase, err := To(core.MustFromSlice(srcBuf, ls.size()), Device(0))
		require.NoError(t, err)
		src, err := ls.apply(srcBase)
		require.NoError(t, err)
		want := values(t, mirror(t, ls, srcBuf))

		h, err := core.New(core.Float32, shape...)
		require.NoError(t, err)
		require.NoError(t, Copy(h, src), name)
		assert.Equal(t, want, values(t, h), "%s D2H strides %v", name, src.Strides())

		dstBuf := make([]float32, ld.size())
		for i := range dstBuf {
			dstBuf[i] = -1
		}
		dstBase, err := To(core.MustFromSlice(dstBuf, ld.size()), Device(0))
		require.NoError(t, err)
		dst, err := ld.apply(dstBase)
		require.NoError(t, err)
		require.NoError(t, Copy(dst, mirror(t, ls, srcBuf)), name)
		whole, err := To(dstBase, core.CPUDevice)
		require.NoError(t, err)
		wb := values(t, whole)
		assert.Equal(t, want, values(t, mirror(t, ld, wb)), "%s H2D strides %v", name, dst.Strides())
		touched := 0
		for _, x := range wb {
			if x != -1 {
				touched++
			}
		}
		assert.Equal(t, int(dst.Len()), touched, "%s H2D wrote outside the destination", name)

		dst2Base, err := To(core.MustFromSlice(dstBuf, ld.size()), Device(0))
		require.NoError(t, err)
		dst2, err := ld.apply(dst2Base)
		require.NoError(t, err)
		require.NoError(t, Copy(dst2, src), name)
		whole, err = To(dst2Base, core.CPUDevice)
		require.NoError(t, err)
		assert.Equal(t, want, values(t, mirror(t, ld, values(t, whole))), "%s D2D", name)
	}
}

func TestGPUPinnedStreams(t *testing.T) {
	requireGPU(t)
	const n = 8 << 20
	p, err := AllocPinned(core.Float32, n)
	require.NoError(t, err)
	defer p.Release()
	assert.Equal(t, Pinned, p.Device())
	pd, err := core.Elements[float32](p) // pinned memory is host memory
	require.NoError(t, err)
	for i := range pd {
		pd[i] = float32(i)
	}
	s, err := NewStream(0)
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Close()) }()
	d, err := ToOn(p, Device(0), s) // queued on s
	require.NoError(t, err)
	defer d.Release()

	// A consumer on another stream sees the data once the producer made it ready for it.
	consumer, err := NewStream(0)
	require.NoError(t, err)
	defer func() { assert.NoError(t, consumer.Close()) }()
	require.NoError(t, ReadyFor(d, s, consumer.Protocol()))
	out, err := AllocPinned(core.Float32, n)
	require.NoError(t, err)
	defer out.Release()
	require.NoError(t, CopyOn(out, d, consumer))
	require.NoError(t, consumer.Synchronize())
	od, err := core.Elements[float32](out)
	require.NoError(t, err)
	assert.Equal(t, float32(12345), od[12345])
	assert.Equal(t, float32(n-1), od[n-1])
	assert.NoError(t, ReadyFor(d, s, 2))
	assert.NoError(t, ReadyFor(d, s, 1))
	require.NoError(t, s.Synchronize())
	require.NoError(t, PerThreadStream.Synchronize())
	require.NoError(t, LegacyStream.Synchronize())
}

func TestGPUManaged(t *testing.T) {
	requireGPU(t)
	m, err := AllocManaged(core.Int32, 0, 4)
	require.NoError(t, err)
	defer m.Release()
	require.NoError(t, Copy(m, core.MustFromSlice([]int32{1, 2, 3, 4}, 4)))
	h, err := ToHost(m)
	require.NoError(t, err)
	assert.Same(t, m, h, "managed memory is host-accessible")
	got, err := core.Elements[int32](h)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3, 4}, got)
	got[0] = 10 // a host write the device sees
	d, err := To(m, Device(0))
	require.NoError(t, err)
	back, err := To(d, core.CPUDevice)
	require.NoError(t, err)
	assert.Equal(t, []int32{10, 2, 3, 4}, values32(t, back))

	var copied bool
	dh, err := ToHost(d, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	assert.Equal(t, []int32{10, 2, 3, 4}, values32(t, dh))
}

func values32(t *testing.T, v *core.Tensor) []int32 {
	d, err := core.Elements[int32](v)
	require.NoError(t, err)
	return d
}

func TestGPUWrapForeign(t *testing.T) {
	requireGPU(t)
	live := leakcheck.Settle()
	p, err := cuda.MemAlloc(0, 64)
	require.NoError(t, err)
	freed := 0
	w, err := Wrap(core.Desc{Data: devicePointer(p), Device: Device(0), DType: core.Float32, Shape: []int64{16}},
		func() { freed++; assert.NoError(t, cuda.MemFree(0, p)) })
	require.NoError(t, err)
	require.NoError(t, Copy(w, core.MustFromSlice(make([]float32, 16), 16)))
	v, err := w.Slice(0, 4, 8, 1)
	require.NoError(t, err)
	w.Release()
	assert.Equal(t, 0, freed, "a live view holds the memory")
	v.Release()
	assert.Equal(t, 1, freed, "the owner's deleter ran once")
	waitForeign(t, live)

	// A pinned host pointer that claims to be device memory is refused, and freed.
	hp, err := cuda.MemAllocHost(64)
	require.NoError(t, err)
	freed = 0
	_, err = Wrap(core.Desc{Data: hp, Device: Device(0), DType: core.Float32, Shape: []int64{16}},
		func() { freed++; assert.NoError(t, cuda.MemFreeHost(hp)) })
	require.ErrorIs(t, err, ErrUnsupportedDevice)
	assert.Equal(t, 1, freed)
	// Go memory is not CUDA memory.
	buf := make([]float32, 4)
	_, err = Wrap(core.Desc{Data: addr(uintptr(0xdead0000)), Device: Pinned, DType: core.Float32, Shape: []int64{4}}, nil)
	require.ErrorIs(t, err, ErrUnsupportedDevice)
	runtime.KeepAlive(buf)
}

// BenchmarkTransfer measures host<->device copies of 64 MiB from and to pinned and pageable
// memory. Run on a machine with a GPU: go test -run '^$' -bench Transfer ./gpu
func BenchmarkTransfer(b *testing.B) {
	requireGPU(b)
	const n = 64 << 20
	d, err := Alloc(core.Uint8, 0, n)
	require.NoError(b, err)
	defer d.Release()
	pin, err := AllocPinned(core.Uint8, n)
	require.NoError(b, err)
	defer pin.Release()
	page := core.MustNew(core.Uint8, n)
	for _, c := range []struct {
		name     string
		dst, src *core.Tensor
	}{
		{"H2D/pinned", d, pin}, {"D2H/pinned", pin, d}, {"H2D/pageable", d, page}, {"D2H/pageable", page, d},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				if err := Copy(c.dst, c.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
