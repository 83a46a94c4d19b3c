package gpu

import (
	"fmt"
	"sync/atomic"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// Stream is a CUDA stream to order copies on, or one of the special values of the DLPack
// Python protocol. The zero value is the legacy default stream of the device the stream is used
// with (as CUDA's NULL stream is).
//
// A Stream is a small value: copies of it name the same stream. Copies of a stream NewStream
// created share its ownership as well: whichever copy closes it first destroys it, and from
// then on every copy is closed (see Close).
type Stream struct {
	handle cuda.Stream
	dev    int
	hasDev bool // false: the device of the tensor the stream is used with
	noSync bool
	own    *streamOwner // NewStream's streams only; shared by every copy
}

// streamOwner is the ownership of a stream NewStream created, shared by the copies of its
// Stream so that the handle is destroyed once, whichever copy closes it.
type streamOwner struct {
	closed atomic.Bool
}

var (
	// LegacyStream is the legacy default stream (CU_STREAM_LEGACY; protocol value 1 or None).
	LegacyStream = Stream{handle: cuda.StreamLegacy}
	// PerThreadStream is the calling thread's default stream (CU_STREAM_PER_THREAD; protocol
	// value 2). For Go callers the "thread" is the OS thread the call happens to run on, so it
	// is meant for exchanges with C and Python callers, whose calls stay on their thread.
	PerThreadStream = Stream{handle: cuda.StreamPerThread}
	// NoSync is the protocol value -1: the consumer asks the producer not to synchronise.
	NoSync = Stream{noSync: true}
)

// The driver calls on streams, which the tests replace with a fake driver where no GPU exists.
var (
	newStream         = cuda.NewStream
	destroyStream     = cuda.DestroyStream
	streamSynchronize = cuda.StreamSynchronize
)

// NewStream creates a non-blocking stream on CUDA device dev (it does not synchronise with the
// legacy default stream). Close it (any copy of it) when done.
func NewStream(dev int) (Stream, error) {
	h, err := newStream(dev, cuda.StreamNonBlocking)
	if err != nil {
		return Stream{}, inOp("new stream", err)
	}
	return Stream{handle: h, dev: dev, hasDev: true, own: new(streamOwner)}, nil
}

// ForeignStream names a stream another library created (a cudaStream_t, such as PyTorch's
// torch.cuda.current_stream().cuda_stream) on device dev. Close does nothing to it.
func ForeignStream(handle uintptr, dev int) Stream {
	return Stream{handle: cuda.Stream(handle), dev: dev, hasDev: true}
}

// StreamFromProtocol maps the stream argument of the Python protocol's __dlpack__ to a Stream:
// 1 is the legacy default stream (pass 1 for None as well), 2 the per-thread default stream,
// -1 NoSync, and any value above 2 a stream handle (a cudaStream_t). 0 is disallowed by the
// protocol, as is any other negative value: ErrStream.
func StreamFromProtocol(v int64) (Stream, error) {
	switch {
	case v == 1:
		return LegacyStream, nil
	case v == 2:
		return PerThreadStream, nil
	case v == -1:
		return NoSync, nil
	case v > 2:
		return Stream{handle: cuda.Stream(uintptr(v))}, nil
	case v == 0:
		return Stream{}, errs.Errorf(ErrStream, "gpu: stream 0 is ambiguous and disallowed by the DLPack protocol (use 1 for the legacy default stream, 2 for per-thread)")
	}
	return Stream{}, errs.Errorf(ErrStream, "gpu: stream %d is not a DLPack stream (the protocol allows -1, 1, 2 and stream handles)", v)
}

// Protocol returns the value to pass as __dlpack__'s stream argument to a producer so that it
// makes its data ready on s: 1 for the legacy default stream (and the zero Stream), 2 for the
// per-thread default stream, -1 for NoSync, the handle otherwise.
func (s Stream) Protocol() int64 {
	switch {
	case s.noSync:
		return -1
	case s.handle == 0:
		return 1
	}
	return int64(s.handle)
}

// Handle returns the CUstream handle (1 and 2 for the default streams; 0 for NoSync).
func (s Stream) Handle() uintptr {
	if s.noSync {
		return 0
	}
	if s.handle == 0 {
		return uintptr(cuda.StreamLegacy)
	}
	return uintptr(s.handle)
}

// IsNoSync reports whether s is NoSync (protocol value -1).
func (s Stream) IsNoSync() bool { return s.noSync }

// String describes the stream like "legacy", "per-thread", "no-sync" or "stream 0x7f...".
func (s Stream) String() string {
	switch {
	case s.noSync:
		return "no-sync"
	case s.handle == 0 || s.handle == cuda.StreamLegacy:
		return "legacy"
	case s.handle == cuda.StreamPerThread:
		return "per-thread"
	}
	return fmt.Sprintf("stream %#x", uintptr(s.handle))
}

// device returns the device whose context s is used in: its own, or fallback.
func (s Stream) device(fallback int) int {
	if s.hasDev {
		return s.dev
	}
	return fallback
}

// Synchronize waits until all work queued on s has completed. A stream that was not made for
// a device (the default streams, one from StreamFromProtocol) is synchronised in device 0's
// context; NoSync does nothing. A closed stream (see Close) is refused with ErrStream.
func (s Stream) Synchronize() error { return s.sync(0) }

func (s Stream) sync(dev int) error {
	if s.noSync {
		return nil
	}
	if err := s.usable(); err != nil {
		return inOp("synchronize", err)
	}
	if err := streamSynchronize(s.device(dev), cuda.Stream(s.Handle())); err != nil {
		return inOp(fmt.Sprintf("synchronize %s", s), err)
	}
	return nil
}

// Close destroys a stream NewStream created (work queued on it still completes); for every
// other Stream (the package's values, ForeignStream's, StreamFromProtocol's) it does nothing.
// Copies of a NewStream stream share it: the first Close of any copy destroys the stream, even
// when several copies close at once, and later calls on any copy do nothing and return nil, as
// Close does for streams it does not own. A closed stream is refused (ErrStream) wherever it is
// used afterwards; the handle Handle returns is then stale, and may name another stream. Close
// must not run while another goroutine is still using the stream.
func (s Stream) Close() error {
	if s.own == nil || !s.own.closed.CompareAndSwap(false, true) {
		return nil
	}
	if err := destroyStream(s.dev, s.handle); err != nil {
		return inOp(fmt.Sprintf("close %s", s), err)
	}
	return nil
}

// usable returns an error matching ErrStream when s was closed.
func (s Stream) usable() error {
	if s.own != nil && s.own.closed.Load() {
		return errs.Errorf(ErrStream, "gpu: %s was closed", s)
	}
	return nil
}

// ReadyFor is the producer's half of the stream semantics of the Python protocol: it makes the
// work queued so far on producer (where t was written) visible to work the consumer will queue
// on the stream it named in __dlpack__(stream=consumer). For -1 (NoSync) it does nothing; when
// the two streams are the same it does nothing; otherwise it records an event on producer and
// makes the consumer's stream wait for it, without blocking the host. Host tensors (CPU,
// pinned) accept only 1 (None) and -1, and need nothing. A closed producer stream is refused
// for device tensors (ErrStream).
func ReadyFor(t *core.Tensor, producer Stream, consumer int64) error {
	if t == nil {
		return errs.Errorf(core.ErrNil, "gpu: a nil tensor to make ready for stream %d", consumer)
	}
	cs, err := StreamFromProtocol(consumer)
	if err != nil {
		return err
	}
	switch t.Device().DeviceType {
	case core.CPU, core.CUDAHost:
		if consumer != 1 && consumer != -1 {
			return errs.Errorf(ErrStream, "gpu: stream %d for a tensor on %s, whose memory takes only None", consumer, t.Device())
		}
		return nil
	case core.CUDA, core.CUDAManaged:
	default:
		return errs.Errorf(ErrUnsupportedDevice, "gpu: %s memory is not CUDA memory", t.Device())
	}
	if err := producer.usable(); err != nil {
		return inOp(fmt.Sprintf("ready for stream %d: producer", consumer), err)
	}
	if cs.noSync || producer.noSync || cs.Handle() == producer.Handle() {
		return nil
	}
	dev := producer.device(int(t.Device().DeviceID))
	ev, err := cuda.NewEvent(dev, cuda.EventDisableTiming)
	if err != nil {
		return inOp(fmt.Sprintf("ready for stream %d", consumer), err)
	}
	defer ev.Destroy(dev) //nolint:errcheck // a destroyed event still completes its waits
	if err := ev.Record(dev, cuda.Stream(producer.Handle())); err != nil {
		return inOp(fmt.Sprintf("ready for stream %d", consumer), err)
	}
	if err := cuda.StreamWaitEvent(dev, cuda.Stream(cs.Handle()), ev); err != nil {
		return inOp(fmt.Sprintf("ready for stream %d", consumer), err)
	}
	return nil
}
