package cuda

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// fakeDriver answers the driver calls of this package where no GPU exists (it installs itself
// in place of the library for one test): contexts, and copies, which it records without
// touching memory. Like the driver, it refuses cuMemcpy2D pitches above MaxPitch
// (CU_DEVICE_ATTRIBUTE_MAX_PITCH) with CUDA_ERROR_INVALID_VALUE. Entry points it does not
// model answer CUDA_ERROR_NOT_SUPPORTED.
type fakeDriver struct {
	mu     sync.Mutex
	copies []fakeCopy
}

// fakeCopy is one copy call: the entry point and what it was asked to copy.
type fakeCopy struct {
	Op                 string
	Dst, Src           uintptr
	DstKind, SrcKind   Kind // 0 for the 1-D calls, which name no kinds
	DstPitch, SrcPitch uintptr
	Width, Height      uintptr // the bytes of a 1-D copy in Width, Height 1
	Stream             Stream  // 0 for the synchronous calls
}

// installFakeDriver makes every driver call of this package go to a fake with one device until
// t ends; what the real driver was (loaded or not) is restored then.
func installFakeDriver(t *testing.T) *fakeDriver {
	t.Helper()
	load() //nolint:errcheck // run the real load once, so that it never overwrites the fake
	oldSyms, oldErr, oldCount := syms, loadErr, devCount
	ctxMu.Lock()
	oldContexts := maps.Clone(contexts)
	clear(contexts)
	ctxMu.Unlock()
	f := &fakeDriver{}
	for i := range syms {
		syms[i] = uintptr(i) + 1
	}
	loadErr, devCount, fake = nil, 1, f.call
	t.Cleanup(func() {
		syms, loadErr, devCount, fake = oldSyms, oldErr, oldCount, nil
		ctxMu.Lock()
		contexts = oldContexts
		ctxMu.Unlock()
	})
	return f
}

// out writes v to the driver-owned output argument p.
func out[T any](p uintptr, v T) { *(*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p))) = v }

const fakeContext = 0xc0

func (f *fakeDriver) call(fn uintptr, a []uintptr) Result {
	sym := int(fn) - 1
	switch sym {
	case symDeviceGet:
		out(a[0], int32(a[1]))
	case symPrimaryCtxRetain:
		out(a[0], uintptr(fakeContext))
	case symCtxGetCurrent:
		out(a[0], uintptr(fakeContext))
	case symCtxSetCurrent:
	case symMemcpyHtoD, symMemcpyDtoH, symMemcpyDtoD:
		f.record(fakeCopy{Op: symNames[sym], Dst: a[0], Src: a[1], Width: a[2], Height: 1})
	case symMemcpyHtoDAsync, symMemcpyDtoHAsync, symMemcpyDtoDAsync:
		f.record(fakeCopy{Op: symNames[sym], Dst: a[0], Src: a[1], Width: a[2], Height: 1, Stream: Stream(a[3])})
	case symMemcpy2D, symMemcpy2DAsync:
		p := *(*memcpy2D)(*(*unsafe.Pointer)(unsafe.Pointer(&a[0])))
		if p.srcPitch > MaxPitch || p.dstPitch > MaxPitch || p.widthInBytes > MaxPitch {
			return ErrorInvalidValue
		}
		c := fakeCopy{Op: symNames[sym], DstKind: Kind(p.dstMemoryType), SrcKind: Kind(p.srcMemoryType),
			Dst: p.dstDevice | p.dstHost, Src: p.srcDevice | p.srcHost,
			DstPitch: p.dstPitch, SrcPitch: p.srcPitch, Width: p.widthInBytes, Height: p.height}
		if sym == symMemcpy2DAsync {
			c.Stream = Stream(a[1])
		}
		f.record(c)
	default:
		switch name := symNames[sym]; name {
		case "cuMemcpy": // the unified-addressing copies, which infer the kinds from the addresses
			f.record(fakeCopy{Op: name, Dst: a[0], Src: a[1], Width: a[2], Height: 1})
		case "cuMemcpyAsync":
			f.record(fakeCopy{Op: name, Dst: a[0], Src: a[1], Width: a[2], Height: 1, Stream: Stream(a[3])})
		default:
			return ErrorNotSupported
		}
	}
	return Success
}

func (f *fakeDriver) record(c fakeCopy) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.copies = append(f.copies, c)
}

// calls returns the copies made so far, and forgets them.
func (f *fakeDriver) calls() []fakeCopy {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.copies
	f.copies = nil
	return slices.Clone(c)
}

func (c fakeCopy) String() string {
	return fmt.Sprintf("%s(%#x <- %#x, %d x %d, pitches %d %d, stream %#x)", c.Op, c.Dst, c.Src, c.Height, c.Width, c.DstPitch, c.SrcPitch, uintptr(c.Stream))
}
