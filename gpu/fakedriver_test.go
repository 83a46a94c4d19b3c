package gpu

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/dlpack-go/dlpack/gpu/cuda"
)

// fakeDriver stands in for the driver calls this package routes through its seams (streams;
// rectangle copies have their own fake, withHostCopies) where no GPU exists, and records them.
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
}

// installFakeDriver routes this package's driver calls to a fake with devices devices until t
// ends.
func installFakeDriver(t *testing.T, devices int) *fakeDriver {
	t.Helper()
	f := &fakeDriver{devices: devices, next: 0x1000, live: map[cuda.Stream]bool{}}
	oldNew, oldDestroy, oldSync := newStream, destroyStream, streamSynchronize
	newStream, destroyStream, streamSynchronize = f.newStream, f.destroyStream, f.streamSynchronize
	t.Cleanup(func() { newStream, destroyStream, streamSynchronize = oldNew, oldDestroy, oldSync })
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
