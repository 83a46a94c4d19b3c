package gpu

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/dlpack-go/dlpack/gpu/cuda"
)

// fakeDriver stands in for the driver calls this package routes through its seams (streams,
// Wrap's queries; rectangle copies have their own fake, withHostCopies) where no GPU exists, and records them.
// Like the driver, it refuses stream handles it did not hand out or has destroyed, and it hands
// the handle of a destroyed stream out again to the next stream created, as the driver may: a
// second destroy of a stale handle then destroys someone else's stream.
type fakeDriver struct {
	mu        sync.Mutex
	devices   int
	next      cuda.Stream          // the next new handle value
	live      map[cuda.Stream]bool // streams created and not destroyed
	free      []cuda.Stream        // destroyed handles, reused first
	destroyed []cuda.Stream        // every successful destroy, in order
	synced    []cuda.Stream        // every successful synchronise, in order

	memory  map[uintptr]cuda.PointerInfo // the addresses the driver knows, by base address
	queried []uintptr                    // every pointer query, in order
}

// installFakeDriver routes this package's driver calls to a fake with devices devices until t
// ends.
func installFakeDriver(t *testing.T, devices int) *fakeDriver {
	t.Helper()
	f := &fakeDriver{devices: devices, next: 0x1000, live: map[cuda.Stream]bool{}, memory: map[uintptr]cuda.PointerInfo{}}
	oldNew, oldDestroy, oldSync := newStream, destroyStream, streamSynchronize
	newStream, destroyStream, streamSynchronize = f.newStream, f.destroyStream, f.streamSynchronize
	oldCount, oldPointer := deviceCount, pointerInfo
	deviceCount, pointerInfo = f.deviceCount, f.pointerInfo
	t.Cleanup(func() {
		newStream, destroyStream, streamSynchronize = oldNew, oldDestroy, oldSync
		deviceCount, pointerInfo = oldCount, oldPointer
	})
	return f
}

func driverError(op string, code cuda.Result, name string) error {
	return &cuda.Error{Op: op, Code: code, Name: name}
}

func (f *fakeDriver) device(dev int) error {
	if dev < 0 || dev >= f.devices {
		return fmt.Errorf("%w: device ordinal %d, the fake driver has %d", cuda.ErrNoDevice, dev, f.devices)
	}
	return nil
}

func (f *fakeDriver) newStream(dev int, _ uint32) (cuda.Stream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.device(dev); err != nil {
		return 0, err
	}
	var h cuda.Stream
	if len(f.free) > 0 {
		h, f.free = f.free[0], f.free[1:]
	} else {
		h, f.next = f.next, f.next+0x10
	}
	f.live[h] = true
	return h, nil
}

func (f *fakeDriver) destroyStream(dev int, s cuda.Stream) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.device(dev); err != nil {
		return err
	}
	if s == 0 || s == cuda.StreamLegacy || s == cuda.StreamPerThread {
		return fmt.Errorf("%w: cannot destroy default stream %#x", cuda.ErrArgument, uintptr(s))
	}
	if !f.live[s] {
		return driverError("cuStreamDestroy_v2", cuda.ErrorInvalidHandle, "CUDA_ERROR_INVALID_HANDLE")
	}
	delete(f.live, s)
	f.free = append(f.free, s)
	f.destroyed = append(f.destroyed, s)
	return nil
}

func (f *fakeDriver) streamSynchronize(dev int, s cuda.Stream) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.device(dev); err != nil {
		return err
	}
	if s != cuda.StreamLegacy && s != cuda.StreamPerThread && !f.live[s] {
		return driverError("cuStreamSynchronize", cuda.ErrorInvalidHandle, "CUDA_ERROR_INVALID_HANDLE")
	}
	f.synced = append(f.synced, s)
	return nil
}

// destroys returns the handles destroyed so far.
func (f *fakeDriver) destroys() []cuda.Stream {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.destroyed)
}

// syncs returns the handles synchronised so far.
func (f *fakeDriver) syncs() []cuda.Stream {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.synced)
}

func (f *fakeDriver) deviceCount() (int, error) {
	if f.devices <= 0 {
		return 0, fmt.Errorf("%w: the fake driver has no device", cuda.ErrNoDevice)
	}
	return f.devices, nil
}

// pointerInfo answers for the addresses registered with f.alloc, and with
// CUDA_ERROR_INVALID_VALUE for any other, as the driver does for memory it does not know.
func (f *fakeDriver) pointerInfo(p uintptr) (cuda.PointerInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queried = append(f.queried, p)
	if info, ok := f.memory[p]; ok {
		return info, nil
	}
	return cuda.PointerInfo{}, driverError("cuPointerGetAttribute", cuda.ErrorInvalidValue, "CUDA_ERROR_INVALID_VALUE")
}

// alloc makes the fake driver know address p as memory described by info.
func (f *fakeDriver) alloc(p uintptr, info cuda.PointerInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.memory[p] = info
}

// queries returns the addresses asked about so far.
func (f *fakeDriver) queries() []uintptr {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.queried)
}
