package pyexchange

import (
	"errors"
	"fmt"
	"sync"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// StreamSync makes the work queued so far on a device tensor visible to work a consumer queues
// on the stream it names in __dlpack__(stream=...): the Python protocol's value (-1 asks for no
// synchronization; 1 is CUDA's legacy default stream, 2 its per-thread default; other values are
// the consumer's stream handle), with None already replaced by the device's default (0 for ROCm,
// 1 for the others). A CUDA library's StreamSync is gpu.ReadyFor with the stream the library
// wrote the tensor on:
//
//	pyexchange.SetStreamSync(core.CUDA, func(t *core.Tensor, stream int64) error {
//		return gpu.ReadyFor(t, producer, stream)
//	})
//
// Its error is raised in Python as BufferError.
type StreamSync func(t *core.Tensor, stream int64) error

// ErrStream: a stream argument the tensor's device cannot honour (a stream for a host tensor, or
// for a device without a StreamSync).
var ErrStream = errors.New("pyexchange: stream not supported")

var streamSyncs sync.Map // core.DeviceType → StreamSync

// SetStreamSync installs sync for exports of tensors on devices of type dev, replacing any
// installed before (nil removes it). Call it from the library's init function, next to Register.
//
// With a StreamSync, every export of such a tensor through __dlpack__ calls it before the
// consumer gets the capsule, so that the consumer's stream waits for the producer's work (these
// exports are made by Go each time, never by the C fast path). Without one, a device tensor is
// exported only for stream None or -1, without synchronization, as if the work were complete.
// Host tensors accept only stream None. The DLPack 1.3 C exchange API exports without
// synchronization, as its "no_sync" names say.
func SetStreamSync(dev core.DeviceType, sync StreamSync) {
	if sync == nil {
		streamSyncs.Delete(dev)
		return
	}
	streamSyncs.Store(dev, sync)
}

// streamSyncOf returns the StreamSync of device type dev, or nil.
func streamSyncOf(dev core.DeviceType) StreamSync {
	if s, ok := streamSyncs.Load(dev); ok {
		return s.(StreamSync)
	}
	return nil
}

// syncForConsumer applies the stream argument of an export of t: given is false for None.
func syncForConsumer(t *core.Tensor, stream int64, given bool) error {
	dev := t.Device().DeviceType
	if dev == core.CPU {
		if given {
			return errs.Errorf(ErrStream, "pyexchange: stream=%d for a tensor on %s (only None on the CPU)", stream, dev)
		}
		return nil
	}
	sync := streamSyncOf(dev)
	if sync == nil {
		if given && stream != -1 {
			return errs.Errorf(ErrStream, "pyexchange: stream=%d for a tensor on %s: this library installed no StreamSync "+
				"for %s (pyexchange.SetStreamSync); only None and -1 are accepted", stream, dev, dev)
		}
		return nil
	}
	if !given {
		stream = 1 // the legacy default stream, None's meaning on CUDA devices
		if dev == core.ROCM {
			stream = 0
		}
	}
	if err := sync(t, stream); err != nil {
		return fmt.Errorf("pyexchange: stream %d for a tensor on %s: %w", stream, t.Device(), err)
	}
	return nil
}
