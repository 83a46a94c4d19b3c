package cuda

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// The driver entry points this package calls, resolved once by load.
const (
	symInit = iota
	symDriverGetVersion
	symDeviceGetCount
	symDeviceGet
	symDeviceGetName
	symDeviceTotalMem
	symDeviceGetAttribute
	symPrimaryCtxRetain
	symCtxGetCurrent
	symCtxSetCurrent
	symCtxSynchronize
	symMemAlloc
	symMemFree
	symMemHostAlloc
	symMemFreeHost
	symMemAllocManaged
	symMemsetD8
	symMemsetD8Async
	symMemcpyHtoD
	symMemcpyDtoH
	symMemcpyDtoD
	symMemcpyHtoDAsync
	symMemcpyDtoHAsync
	symMemcpyDtoDAsync
	symMemcpy
	symMemcpyAsync
	symMemcpy2D
	symMemcpy2DAsync
	symStreamCreate
	symStreamDestroy
	symStreamSynchronize
	symStreamWaitEvent
	symEventCreate
	symEventRecord
	symEventSynchronize
	symEventDestroy
	symEventElapsedTime
	symPointerGetAttribute
	symGetErrorName
	symGetErrorString
	numSyms
)

// symNames are the exported names, _v2 where the driver has a _v2 (what cuda.h maps to).
var symNames = [numSyms]string{
	"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName",
	"cuDeviceTotalMem_v2", "cuDeviceGetAttribute", "cuDevicePrimaryCtxRetain", "cuCtxGetCurrent",
	"cuCtxSetCurrent", "cuCtxSynchronize", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemHostAlloc",
	"cuMemFreeHost", "cuMemAllocManaged", "cuMemsetD8_v2", "cuMemsetD8Async", "cuMemcpyHtoD_v2",
	"cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
	"cuMemcpyDtoDAsync_v2", "cuMemcpy", "cuMemcpyAsync", "cuMemcpy2D_v2", "cuMemcpy2DAsync_v2", "cuStreamCreate",
	"cuStreamDestroy_v2", "cuStreamSynchronize", "cuStreamWaitEvent", "cuEventCreate",
	"cuEventRecord", "cuEventSynchronize", "cuEventDestroy_v2", "cuEventElapsedTime",
	"cuPointerGetAttribute", "cuGetErrorName", "cuGetErrorString",
}

var (
	loadOnce sync.Once
	loadErr  error
	syms     [numSyms]uintptr
	devCount int
)

// load opens the driver, resolves every entry point, calls cuInit and counts the devices, once.
// Its outcome is kept: a process without a driver gets the same ErrNoDevice error every time.
func load() error {
	loadOnce.Do(func() { loadErr = doLoad() })
	return loadErr
}

func doLoad() error {
	lib, err := openLibrary()
	if err != nil {
		return errs.Errorf(ErrNoDevice, "cuda: no CUDA driver: cannot load %s: %v", libraryName, err)
	}
	for i, name := range symNames {
		p, err := lookup(lib, name)
		if err != nil || p == 0 {
			return errs.Errorf(ErrNoDevice, "cuda: %s has no %s (driver too old?): %v", libraryName, name, err)
		}
		syms[i] = p
	}
	if r := invoke(syms[symInit], 0); r != Success {
		return errs.Errorf(ErrNoDevice, "%w", newError("cuInit", r))
	}
	var n int32
	if r := invoke(syms[symDeviceGetCount], uintptr(unsafe.Pointer(&n))); r != Success {
		return errs.Errorf(ErrNoDevice, "%w", newError("cuDeviceGetCount", r))
	}
	if n <= 0 {
		return errs.Errorf(ErrNoDevice, "cuda: the driver reports 0 devices")
	}
	devCount = int(n)
	return nil
}

// fake, when set by this package's tests, answers every driver call in place of the library
// (the tests fill syms with entry points it recognises).
var fake func(fn uintptr, args []uintptr) Result

// invoke calls the driver entry point fn with integer and pointer arguments and returns its
// CUresult. Pointers passed as uintptr(unsafe.Pointer(p)) in the call expression stay valid
// for the call (go:uintptrescapes, as for purego.SyscallN).
//
//go:uintptrescapes
func invoke(fn uintptr, args ...uintptr) Result {
	if fake != nil {
		return fake(fn, args)
	}
	return callLibrary(fn, args...)
}

// driverErrorText asks the driver for the name and description of r, if it is loaded.
func driverErrorText(r Result) (name, desc string, ok bool) {
	if syms[symGetErrorName] == 0 {
		return "", "", false
	}
	var pn, pd *byte
	if invoke(syms[symGetErrorName], uintptr(r), uintptr(unsafe.Pointer(&pn))) != Success || pn == nil {
		return "", "", false
	}
	if invoke(syms[symGetErrorString], uintptr(r), uintptr(unsafe.Pointer(&pd))) != Success {
		pd = nil
	}
	return cString(pn), cString(pd), true
}

// cString copies a NUL-terminated C string the driver owns (static storage).
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 && n < 4096 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// Available returns nil when the driver is loaded and at least one device exists, and otherwise
// an error matching ErrNoDevice that says why (no libcuda.so.1, cuInit failed, 0 devices).
func Available() error { return load() }

// DeviceCount returns the number of CUDA devices, or an ErrNoDevice error.
func DeviceCount() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	return devCount, nil
}

// DriverVersion returns the driver's CUDA version as 1000*major + 10*minor (12040 is 12.4).
func DriverVersion() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	var v int32
	if err := check("cuDriverGetVersion", invoke(syms[symDriverGetVersion], uintptr(unsafe.Pointer(&v)))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// contexts holds the retained primary context of each device, by ordinal.
var (
	ctxMu    sync.Mutex
	contexts = map[int]uintptr{}
)

// primary returns the primary context of device dev, retaining it on first use.
func primary(dev int) (uintptr, error) {
	if err := load(); err != nil {
		return 0, err
	}
	if dev < 0 || dev >= devCount {
		return 0, errs.Errorf(ErrNoDevice, "cuda: no device ordinal %d, the driver reports %d device(s)", dev, devCount)
	}
	ctxMu.Lock()
	defer ctxMu.Unlock()
	if c, ok := contexts[dev]; ok {
		return c, nil
	}
	var d int32
	if err := check("cuDeviceGet", invoke(syms[symDeviceGet], uintptr(unsafe.Pointer(&d)), uintptr(dev))); err != nil {
		return 0, err
	}
	var c uintptr
	if err := check("cuDevicePrimaryCtxRetain", invoke(syms[symPrimaryCtxRetain], uintptr(unsafe.Pointer(&c)), uintptr(d))); err != nil {
		return 0, err
	}
	contexts[dev] = c
	return c, nil
}

// onDevice runs f on a locked OS thread with dev's primary context current, then restores the
// thread's previous context.
func onDevice(dev int, f func() error) error {
	c, err := primary(dev)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prev uintptr
	if err := check("cuCtxGetCurrent", invoke(syms[symCtxGetCurrent], uintptr(unsafe.Pointer(&prev)))); err != nil {
		return err
	}
	if prev != c {
		if err := check("cuCtxSetCurrent", invoke(syms[symCtxSetCurrent], c)); err != nil {
			return err
		}
		if prev != 0 {
			defer invoke(syms[symCtxSetCurrent], prev)
		}
	}
	return f()
}

// call is onDevice for a single driver call. Like invoke, it keeps pointers passed as
// uintptr(unsafe.Pointer(p)) in the call expression on the heap and alive for the call.
//
//go:uintptrescapes
func call(dev int, op string, sym int, args ...uintptr) error {
	return onDevice(dev, func() error { return check(op, invoke(syms[sym], args...)) })
}

// DeviceName returns the name of device dev, such as "NVIDIA H200".
func DeviceName(dev int) (string, error) {
	var buf [256]byte
	err := onDevice(dev, func() error {
		return check("cuDeviceGetName", invoke(syms[symDeviceGetName], uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)-1), uintptr(dev)))
	})
	if err != nil {
		return "", err
	}
	return cString(&buf[0]), nil
}

// TotalMem returns the memory of device dev, in bytes.
func TotalMem(dev int) (int64, error) {
	var n uint64
	err := onDevice(dev, func() error {
		return check("cuDeviceTotalMem_v2", invoke(syms[symDeviceTotalMem], uintptr(unsafe.Pointer(&n)), uintptr(dev)))
	})
	return int64(n), err
}

// Synchronize waits until every stream of device dev's primary context is idle.
func Synchronize(dev int) error { return call(dev, "cuCtxSynchronize", symCtxSynchronize) }

func checkSize(op string, n int64) error {
	if n < 0 || uint64(n) > uint64(^uintptr(0)>>1) {
		return errs.Errorf(ErrArgument, "cuda: %s of %d bytes: the size is out of range", op, n)
	}
	return nil
}

// MemAlloc allocates n > 0 bytes of memory on device dev and returns its device address.
func MemAlloc(dev int, n int64) (uintptr, error) {
	if err := checkSize("cuMemAlloc_v2", n); err != nil || n == 0 {
		return 0, errs.Errorf(ErrArgument, "cuda: cuMemAlloc_v2 of %d bytes: the size must be positive and fit the address space", n)
	}
	var p uintptr
	err := call(dev, "cuMemAlloc_v2", symMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n))
	return p, err
}

// MemFree frees memory MemAlloc or MemAllocManaged returned for device dev.
func MemFree(dev int, p uintptr) error { return call(dev, "cuMemFree_v2", symMemFree, p) }

// Flags of cuMemHostAlloc and cuMemAllocManaged.
const (
	hostAllocPortable = 0x01 // CU_MEMHOSTALLOC_PORTABLE: pinned for every context
	memAttachGlobal   = 0x01 // CU_MEM_ATTACH_GLOBAL
)

// MemAllocHost allocates n > 0 bytes of page-locked (pinned) host memory, usable by every
// device for fast, asynchronous transfers (cuMemHostAlloc with CU_MEMHOSTALLOC_PORTABLE, made in
// device 0's primary context).
func MemAllocHost(n int64) (unsafe.Pointer, error) {
	if err := checkSize("cuMemHostAlloc", n); err != nil || n == 0 {
		return nil, errs.Errorf(ErrArgument, "cuda: cuMemHostAlloc of %d bytes: the size must be positive and fit the address space", n)
	}
	var p unsafe.Pointer
	err := call(0, "cuMemHostAlloc", symMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n), hostAllocPortable)
	return p, err
}

// MemFreeHost frees memory MemAllocHost returned.
func MemFreeHost(p unsafe.Pointer) error {
	return call(0, "cuMemFreeHost", symMemFreeHost, uintptr(p))
}

// MemAllocManaged allocates n > 0 bytes of managed (unified) memory, addressable from the host
// and every device (CU_MEM_ATTACH_GLOBAL), in device dev's context. Free it with MemFree.
func MemAllocManaged(dev int, n int64) (uintptr, error) {
	if err := checkSize("cuMemAllocManaged", n); err != nil || n == 0 {
		return 0, errs.Errorf(ErrArgument, "cuda: cuMemAllocManaged of %d bytes: the size must be positive and fit the address space", n)
	}
	var p uintptr
	err := call(dev, "cuMemAllocManaged", symMemAllocManaged, uintptr(unsafe.Pointer(&p)), uintptr(n), memAttachGlobal)
	return p, err
}

// Memset sets n bytes at device address p to b, on stream s when async (else synchronously).
func Memset(dev int, p uintptr, b byte, n int64, s Stream, async bool) error {
	if err := checkSize("cuMemsetD8", n); err != nil || n == 0 {
		return err
	}
	if async {
		return call(dev, "cuMemsetD8Async", symMemsetD8Async, p, uintptr(b), uintptr(n), uintptr(s))
	}
	return call(dev, "cuMemsetD8_v2", symMemsetD8, p, uintptr(b), uintptr(n))
}
