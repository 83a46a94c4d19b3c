package gpu

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// nbytes validates dtype and shape the way core.New does and returns the bytes the elements
// occupy when compact.
func nbytes(dtype core.DLDataType, shape []int64) (int64, error) {
	if err := dtype.Validate(); err != nil {
		return 0, err
	}
	if len(shape) > core.MaxNdim {
		return 0, errs.Errorf(core.ErrNdim, "gpu: ndim = %d exceeds %d", len(shape), core.MaxNdim)
	}
	n := uint64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, errs.Errorf(core.ErrShape, "gpu: shape[%d] = %d is negative", i, d)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > 1<<62 {
			return 0, errs.Errorf(core.ErrOverflow, "gpu: the size of shape %v overflows int64", shape)
		}
		n = lo
	}
	hi, b := bits.Mul64(n, uint64(dtype.Bits)*uint64(dtype.Lanes))
	if hi != 0 || b > 1<<62 {
		return 0, errs.Errorf(core.ErrOverflow, "gpu: the bytes of %d elements of %s overflow int64", n, dtype)
	}
	return int64((b + 7) / 8), nil
}

// Alloc allocates a zeroed, C-order tensor in the memory of CUDA device dev (kDLCUDA). Its Data
// is a device address: the CPU must not touch it (core's accessors refuse with core.ErrNotHost);
// move it with To or Copy. The memory is freed (cuMemFree in the device's primary context) when
// the last holder lets go, as for any foreign memory in core.
func Alloc(dtype core.DLDataType, dev int, shape ...int64) (*core.Tensor, error) {
	n, err := nbytes(dtype, shape)
	if err != nil {
		return nil, inOp("alloc", err)
	}
	d := core.Desc{Device: core.DLDevice{DeviceType: core.CUDA, DeviceID: int32(dev)}, DType: dtype, Shape: shape}
	if dev < 0 || dev > 1<<30 {
		return nil, errs.Errorf(ErrNoDevice, "gpu: no device ordinal %d to allocate on", dev)
	}
	if n == 0 { // nothing to allocate, but the device must exist, as for any other size
		if err := checkDevice(dev); err != nil {
			return nil, inOp("alloc", err)
		}
		return core.Wrap(d, nil)
	}
	p, err := cuda.MemAlloc(dev, n)
	if err != nil {
		return nil, inOp(fmt.Sprintf("alloc %d bytes on cuda:%d", n, dev), err)
	}
	// the memset may return before the device is done: wait, so that work on any stream
	// (non-blocking ones included) sees zeros
	err = cuda.Memset(dev, p, 0, n, cuda.StreamLegacy, false)
	if err == nil {
		err = syncLegacy(dev)
	}
	if err != nil {
		cuda.MemFree(dev, p) //nolint:errcheck // the first error is the one to report
		return nil, inOp("alloc", err)
	}
	d.Data = devicePointer(p)
	return core.Wrap(d, func() { cuda.MemFree(dev, p) }) //nolint:errcheck // nothing to report to
}

// AllocPinned allocates a zeroed, C-order tensor in page-locked host memory (kDLCUDAHost,
// device 0): host memory that the CPU reads and writes like any other (Data, Span, ... work) and
// that copies to and from any device at full speed, asynchronously on a stream. It is freed with
// cuMemFreeHost when the last holder lets go.
func AllocPinned(dtype core.DLDataType, shape ...int64) (*core.Tensor, error) {
	n, err := nbytes(dtype, shape)
	if err != nil {
		return nil, inOp("alloc pinned", err)
	}
	d := core.Desc{Device: core.DLDevice{DeviceType: core.CUDAHost}, DType: dtype, Shape: shape}
	if n == 0 {
		if _, err := cuda.DeviceCount(); err != nil {
			return nil, inOp("alloc pinned", err)
		}
		return core.Wrap(d, nil)
	}
	p, err := cuda.MemAllocHost(n)
	if err != nil {
		return nil, inOp(fmt.Sprintf("alloc %d pinned bytes", n), err)
	}
	clear(unsafe.Slice((*byte)(p), n))
	d.Data = p
	return core.Wrap(d, func() { cuda.MemFreeHost(p) }) //nolint:errcheck // nothing to report to
}

// AllocManaged allocates a zeroed, C-order tensor in CUDA managed memory (kDLCUDAManaged)
// attached to device dev: one address that the host and every device can use. The host may read
// it (core's accessors work) once the device work that wrote it has completed (synchronise the
// stream, or use ToHost, which synchronises). It is freed with cuMemFree.
func AllocManaged(dtype core.DLDataType, dev int, shape ...int64) (*core.Tensor, error) {
	n, err := nbytes(dtype, shape)
	if err != nil {
		return nil, inOp("alloc managed", err)
	}
	if dev < 0 || dev > 1<<30 {
		return nil, errs.Errorf(ErrNoDevice, "gpu: no device ordinal %d to allocate managed memory on", dev)
	}
	d := core.Desc{Device: core.DLDevice{DeviceType: core.CUDAManaged, DeviceID: int32(dev)}, DType: dtype, Shape: shape}
	if n == 0 {
		if err := checkDevice(dev); err != nil {
			return nil, inOp("alloc managed", err)
		}
		return core.Wrap(d, nil)
	}
	p, err := cuda.MemAllocManaged(dev, n)
	if err != nil {
		return nil, inOp(fmt.Sprintf("alloc %d managed bytes on cuda:%d", n, dev), err)
	}
	if err := cuda.Memset(dev, p, 0, n, cuda.StreamLegacy, false); err != nil {
		cuda.MemFree(dev, p) //nolint:errcheck // the Memset error is the one to report
		return nil, inOp("alloc managed", err)
	}
	if err := cuda.Synchronize(dev); err != nil {
		cuda.MemFree(dev, p) //nolint:errcheck // the Synchronize error is the one to report
		return nil, inOp("alloc managed", err)
	}
	d.Data = devicePointer(p)
	return core.Wrap(d, func() { cuda.MemFree(dev, p) }) //nolint:errcheck // nothing to report to
}

// checkDevice returns nil if the driver has CUDA device dev, and otherwise an error that matches
// ErrNoDevice (no driver, no device, or not that many).
func checkDevice(dev int) error {
	n, err := deviceCount()
	if err != nil {
		return err
	}
	if dev < 0 || dev >= n {
		return errs.Errorf(ErrNoDevice, "gpu: no device ordinal %d, the driver reports %d device(s)", dev, n)
	}
	return nil
}

// The driver queries of Wrap and of the empty allocations, which the tests replace with a fake
// driver where no GPU exists.
var (
	deviceCount = cuda.DeviceCount
	pointerInfo = cuda.Pointer
)

// Wrap makes a tensor over CUDA memory another library hands over (a device pointer from a C
// library, a cudaMallocHost buffer, managed memory): release is its owner's deleter, called
// exactly once when the last holder lets go, or before Wrap returns an error. Besides core's
// validation of d (see core.Wrap), Wrap asks the driver what the address is and refuses (with
// ErrUnsupportedDevice) memory that is not what d.Device claims: kDLCUDA must be device (or
// managed) memory of that device, kDLCUDAHost pinned host memory, kDLCUDAManaged managed memory.
// An empty tensor (a size of 0) has no memory to ask about: its Data may be anything, NULL or
// junk, as core accepts, and its device is taken from d.Device. Other device types are refused
// with ErrUnsupportedDevice; without a driver, or for a kDLCUDA or kDLCUDAManaged device ordinal
// the driver does not have, the error matches ErrNoDevice.
func Wrap(d core.Desc, release func()) (*core.Tensor, error) {
	fail := func(err error) (*core.Tensor, error) {
		if release != nil {
			release()
		}
		if !strings.HasPrefix(err.Error(), "gpu: ") {
			err = fmt.Errorf("gpu: wrap: %w", err)
		}
		return nil, err
	}
	dt := d.Device.DeviceType
	if dt != core.CUDA && dt != core.CUDAHost && dt != core.CUDAManaged {
		return fail(errs.Errorf(ErrUnsupportedDevice, "gpu: cannot wrap %s memory (want cuda, cuda_host or cuda_managed)", d.Device))
	}
	// the descriptor is untrusted: checked before the driver hears of its address (v has the
	// byte offset folded into Data)
	v, err := core.ValidateDesc(d)
	if err != nil {
		return fail(err)
	}
	if dt == core.CUDAHost { // pinned memory belongs to no device: the driver must be there
		if _, err := deviceCount(); err != nil {
			return fail(err)
		}
	} else if err := checkDevice(int(d.Device.DeviceID)); err != nil {
		return fail(err)
	}
	if !slices.Contains(v.Shape, 0) {
		addr := uintptr(v.Data)
		info, err := pointerInfo(addr)
		if err != nil {
			return fail(errs.Errorf(ErrUnsupportedDevice, "gpu: %#x is not CUDA memory: %w", addr, err))
		}
		switch {
		case dt == core.CUDA && (info.Kind != cuda.Device || info.Device != int(d.Device.DeviceID)):
			return fail(errs.Errorf(ErrUnsupportedDevice, "gpu: %#x is %s memory of device %d, not %s memory", addr, info.Kind, info.Device, d.Device))
		case dt == core.CUDAHost && info.Kind != cuda.Host:
			return fail(errs.Errorf(ErrUnsupportedDevice, "gpu: %#x is %s memory, not pinned host memory", addr, info.Kind))
		case dt == core.CUDAManaged && !info.Managed:
			return fail(errs.Errorf(ErrUnsupportedDevice, "gpu: %#x is %s memory, not managed memory", addr, info.Kind))
		}
	}
	t, err := core.Wrap(d, release)
	if err != nil {
		return nil, inOp("wrap", err)
	}
	return t, nil
}

// devicePointer turns a device address into the unsafe.Pointer a core.Desc carries. The
// address is not Go memory: the garbage collector ignores it, and Go code never dereferences it.
func devicePointer(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// address returns the address of t's first element.
func address(t *core.Tensor) uintptr { return uintptr(t.Data()) }
