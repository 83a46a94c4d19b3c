package cuda

import (
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// Stream is a CUstream handle. Besides handles made by NewStream (or by another library in the
// same context), two special values name the default streams of the current context.
type Stream uintptr

const (
	// StreamLegacy is CU_STREAM_LEGACY, the legacy default stream, which synchronises with every
	// blocking stream of its context.
	StreamLegacy Stream = 0x1
	// StreamPerThread is CU_STREAM_PER_THREAD, the calling thread's default stream.
	StreamPerThread Stream = 0x2
)

// Stream creation flags.
const (
	// StreamDefault makes a stream that synchronises with the legacy default stream.
	StreamDefault = 0x0
	// StreamNonBlocking makes a stream that runs concurrently with the legacy default stream
	// (CU_STREAM_NON_BLOCKING).
	StreamNonBlocking = 0x1
)

// NewStream creates a stream in device dev's primary context with the given flags
// (StreamDefault or StreamNonBlocking). Destroy it with DestroyStream.
func NewStream(dev int, flags uint32) (Stream, error) {
	var s uintptr
	err := call(dev, "cuStreamCreate", symStreamCreate, uintptr(unsafe.Pointer(&s)), uintptr(flags))
	return Stream(s), err
}

// DestroyStream destroys a stream NewStream made; work queued on it still completes.
func DestroyStream(dev int, s Stream) error {
	if s == 0 || s == StreamLegacy || s == StreamPerThread {
		return errs.Errorf(ErrArgument, "cuda: cannot destroy default stream %#x", uintptr(s))
	}
	return call(dev, "cuStreamDestroy_v2", symStreamDestroy, uintptr(s))
}

// StreamSynchronize waits until all work queued on s (in device dev's context, for the default
// streams) has completed.
func StreamSynchronize(dev int, s Stream) error {
	return call(dev, "cuStreamSynchronize", symStreamSynchronize, uintptr(s))
}

// Event is a CUevent handle.
type Event uintptr

// Event creation flags.
const (
	// EventDefault records timing.
	EventDefault = 0x0
	// EventDisableTiming makes a cheaper event for synchronisation only
	// (CU_EVENT_DISABLE_TIMING).
	EventDisableTiming = 0x2
)

// NewEvent creates an event in device dev's primary context.
func NewEvent(dev int, flags uint32) (Event, error) {
	var e uintptr
	err := call(dev, "cuEventCreate", symEventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags))
	return Event(e), err
}

// Record captures in e the work queued on s so far.
func (e Event) Record(dev int, s Stream) error {
	return call(dev, "cuEventRecord", symEventRecord, uintptr(e), uintptr(s))
}

// Synchronize waits until the work e captured has completed.
func (e Event) Synchronize(dev int) error {
	return call(dev, "cuEventSynchronize", symEventSynchronize, uintptr(e))
}

// Destroy destroys e; a pending record or wait on it still completes.
func (e Event) Destroy(dev int) error {
	return call(dev, "cuEventDestroy_v2", symEventDestroy, uintptr(e))
}

// Elapsed returns the milliseconds between the completion of start and of end (both created
// without EventDisableTiming, both recorded and complete).
func Elapsed(dev int, start, end Event) (float32, error) {
	var ms float32
	err := call(dev, "cuEventElapsedTime", symEventElapsedTime, uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end))
	return ms, err
}

// StreamWaitEvent makes all future work queued on s wait until the work e captured completes,
// without blocking the host.
func StreamWaitEvent(dev int, s Stream, e Event) error {
	return call(dev, "cuStreamWaitEvent", symStreamWaitEvent, uintptr(s), uintptr(e), 0)
}

// Pointer attributes (CUpointer_attribute) this package reads.
const (
	attrMemoryType    = 2 // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
	attrIsManaged     = 8 // CU_POINTER_ATTRIBUTE_IS_MANAGED
	attrDeviceOrdinal = 9 // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
)

// PointerInfo is what the driver knows about an address.
type PointerInfo struct {
	Kind    Kind // Device for device and managed memory, Host for pinned host memory
	Managed bool // memory from cuMemAllocManaged (or cudaMallocManaged)
	Device  int  // the ordinal of the device the memory belongs to
}

// Pointer asks the driver about address p. An address the driver does not know (pageable host
// memory, garbage) gives an *Error with CUDA_ERROR_INVALID_VALUE.
func Pointer(p uintptr) (PointerInfo, error) {
	var kind uint32
	var managed, ordinal uint64 // wide enough for whatever the driver writes (bool or int)
	err := onDevice(0, func() error {
		if err := check("cuPointerGetAttribute", invoke(syms[symPointerGetAttribute], uintptr(unsafe.Pointer(&kind)), attrMemoryType, p)); err != nil {
			return err
		}
		if err := check("cuPointerGetAttribute", invoke(syms[symPointerGetAttribute], uintptr(unsafe.Pointer(&managed)), attrIsManaged, p)); err != nil {
			return err
		}
		return check("cuPointerGetAttribute", invoke(syms[symPointerGetAttribute], uintptr(unsafe.Pointer(&ordinal)), attrDeviceOrdinal, p))
	})
	if err != nil {
		return PointerInfo{}, err
	}
	return PointerInfo{Kind: Kind(kind), Managed: managed&0xff != 0, Device: int(int32(uint32(ordinal)))}, nil
}
