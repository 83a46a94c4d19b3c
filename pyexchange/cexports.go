package pyexchange

/*
// core's C declaration of the DLPack ABI (dlpack_abi.h, dlpack_validate.h) is found by this
// include path, for every C file of the package, rather than by a relative #include whose depth
// breaks silently when a folder moves.
#cgo CFLAGS: -I${SRCDIR}/../core/cdlpack
#include <stdint.h>
#include <stddef.h>
#include "pyexchange.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
)

// The C functions below are what the Python module (pyexchange/python/dlpackgo) calls through
// ctypes. Every c-shared library that imports this package exports them. They never panic on
// bad input: failures are reported through an error kind and a message buffer.

// report writes err into the C buffer buf of n bytes, NUL-terminated and truncated if need be:
// first the kind of Python exception to raise, 'V' (ValueError: a bad handle or argument) or
// 'B' (BufferError: the tensor cannot be exchanged as asked), then the message.
func report(err error, buf *C.char, n C.size_t) {
	if buf == nil || n < 2 {
		return
	}
	kind := byte('B')
	if errors.Is(err, ErrHandle) || errors.Is(err, core.ErrArgument) {
		kind = 'V'
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	b[0] = kind
	m := copy(b[1:len(b)-1], err.Error())
	b[1+m] = 0
}

// dlpackgo_abi returns the version of the protocol between the library and the dlpackgo package; the
// Python module refuses a library that speaks another.
//
//export dlpackgo_abi
func dlpackgo_abi() C.int { return C.PXG_ABI }

// dlpackgo_init attaches the Python interpreter: n addresses of the C API functions and objects
// the capsule destructors, the GIL guard and the sharer need, in the order of pyexchange.h. It
// returns 0, or -1 if n is wrong or a required address is missing.
//
//export dlpackgo_init
func dlpackgo_init(api *C.uintptr_t, n C.int) C.int { return C.pxg_attach(api, n) }

// dlpackgo_python_exiting tells the library that the interpreter is shutting down (the Python
// module calls it from atexit): deleters of Python producers are skipped from then on.
//
//export dlpackgo_python_exiting
func dlpackgo_python_exiting() { C.pxg_python_exiting() }

// dlpackgo_capsule_name returns a static C string: 0 "dltensor_versioned", 1 "dltensor",
// 2 "used_dltensor_versioned", 3 "used_dltensor"; NULL for other values.
//
//export dlpackgo_capsule_name
func dlpackgo_capsule_name(which C.int) *C.char { return C.pxg_name(which) }

// dlpackgo_capsule_destructor returns the address of the capsule destructor to pass to
// PyCapsule_New for the tensors dlpackgo_export returns.
//
//export dlpackgo_capsule_destructor
func dlpackgo_capsule_destructor() C.uintptr_t { return C.pxg_capsule_destructor_addr() }

// dlpackgo_export exports the tensor of handle h for a consumer: a DLManagedTensorVersioned* if
// versioned != 0, else a legacy DLManagedTensor*. copyMode is Python's copy argument: 0 None,
// 1 True, 2 False; stream is Python's stream argument if streamGiven != 0 (None otherwise),
// honoured through the device's StreamSync before the export; noSync != 0 skips that (the C
// exchange API's exports). On failure it returns NULL and writes the error into errbuf (see
// report).
//
//export dlpackgo_export
func dlpackgo_export(h C.uintptr_t, versioned, copyMode C.int, stream C.int64_t, streamGiven, noSync C.int,
	errbuf *C.char, errlen C.size_t) unsafe.Pointer {
	t, err := Lookup(Handle(h))
	if err == nil && noSync == 0 {
		err = syncForConsumer(t, int64(stream), streamGiven != 0)
	}
	if err != nil {
		report(err, errbuf, errlen)
		return nil
	}
	var opt adapters.Option
	switch copyMode {
	case 1:
		opt = adapters.AlwaysCopy()
	case 2:
		opt = adapters.ZeroCopyOnly()
	}
	var p unsafe.Pointer
	if versioned != 0 {
		var m *core.DLManagedTensorVersioned
		m, err = ExportVersioned(t, opt)
		p = unsafe.Pointer(m)
	} else {
		var m *core.DLManagedTensor
		m, err = ExportLegacy(t, opt)
		p = unsafe.Pointer(m)
	}
	if err != nil {
		report(err, errbuf, errlen)
		return nil
	}
	return p
}

// dlpackgo_sharer returns the fast path of __dlpack__ for the tensor of handle h: a new
// reference to a Python builtin, share(versioned), that makes capsules sharing the tensor's
// memory without entering Go (see pyexchange.c). It returns a new reference to None when the
// tensor cannot be shared (Shareable), or the handle is unknown, so that the caller uses
// dlpackgo_export, which says why; and NULL, with a Python exception set, when Python is out of
// memory. The caller must hold the GIL (ctypes.PYFUNCTYPE), and the tensor's memory stays valid
// until the builtin and every capsule and array made from it are gone.
//
//export dlpackgo_sharer
func dlpackgo_sharer(h C.uintptr_t) unsafe.Pointer {
	t, err := Lookup(Handle(h))
	if err != nil || streamSyncOf(t.Device().DeviceType) != nil {
		return C.pxg_none() // unknown, or every export synchronizes: through dlpackgo_export
	}
	m, err := ExportVersioned(t, adapters.ZeroCopyOnly())
	if err != nil {
		return C.pxg_none()
	}
	return C.pxg_sharer_new((*C.pxg_managed_versioned)(unsafe.Pointer(m)))
}

// dlpackgo_taker returns a new reference to a Python builtin, take(capsule), that does what
// Library.from_capsule does (check and rename the capsule, dlpackgo_import) in one call, with the
// GIL held, and returns the new handle or raises the error. The caller must hold the GIL
// (ctypes.PYFUNCTYPE).
//
//export dlpackgo_taker
func dlpackgo_taker() unsafe.Pointer { return C.pxg_taker_new() }

// dlpackgo_delete_export calls the deleter of a tensor dlpackgo_export returned that never
// reached a consumer (the capsule could not be made).
//
//export dlpackgo_delete_export
func dlpackgo_delete_export(p unsafe.Pointer, versioned C.int) {
	if versioned != 0 {
		cdlpack.DeleteVersioned((*core.DLManagedTensorVersioned)(p))
	} else {
		cdlpack.DeleteLegacy((*core.DLManagedTensor)(p))
	}
}

// dlpackgo_import takes ownership of a managed tensor from a consumed capsule (versioned != 0:
// DLManagedTensorVersioned*, else DLManagedTensor*) and returns a new handle for it, or 0 after
// reporting the error (the producer's deleter has run then).
//
//export dlpackgo_import
func dlpackgo_import(p unsafe.Pointer, versioned C.int, errbuf *C.char, errlen C.size_t) C.uintptr_t {
	legacy := versioned == 0
	g, err := guard(p, legacy)
	var t *core.Tensor
	if err == nil {
		// the registry releases it (Release of the handle): no collector cleanup
		t, err = importOwned(g, legacy, deleter(g, legacy))
	}
	if err != nil {
		report(err, errbuf, errlen)
		return 0
	}
	return C.uintptr_t(register(t))
}

// dlpackgo_release releases handle h; it returns 0, or -1 for an unknown handle.
//
//export dlpackgo_release
func dlpackgo_release(h C.uintptr_t) C.int {
	if Release(Handle(h)) != nil {
		return -1
	}
	return 0
}

// Indices of the header dlpackgo_describe writes.
const (
	descNdim = iota
	descCode
	descBits
	descLanes
	descDeviceType
	descDeviceID
	descFlags
	descData
	descLen
)

// dlpackgo_describe writes the header of handle h's tensor into out[0:8]: ndim, dtype code,
// bits, lanes, device type, device id, flags, data address; and, if shape and strides are not
// NULL, ndim sizes and strides (in elements) into them. It returns 0, or -1 for an unknown
// handle.
//
//export dlpackgo_describe
func dlpackgo_describe(h C.uintptr_t, out, shape, strides *C.int64_t) C.int {
	t, err := Lookup(Handle(h))
	if err != nil || out == nil {
		return -1
	}
	o := unsafe.Slice((*int64)(unsafe.Pointer(out)), descLen)
	dt, dev := t.DType(), t.Device()
	o[descNdim] = int64(t.Ndim())
	o[descCode], o[descBits], o[descLanes] = int64(dt.Code), int64(dt.Bits), int64(dt.Lanes)
	o[descDeviceType], o[descDeviceID] = int64(dev.DeviceType), int64(dev.DeviceID)
	o[descFlags] = int64(t.Flags())
	o[descData] = int64(uintptr(t.Data()))
	if nd := t.Ndim(); nd > 0 {
		if shape != nil {
			copy(unsafe.Slice((*int64)(unsafe.Pointer(shape)), nd), t.Shape())
		}
		if strides != nil {
			copy(unsafe.Slice((*int64)(unsafe.Pointer(strides)), nd), t.Strides())
		}
	}
	return 0
}

// dlpackgo_live returns a live count for leak checks: 0 handles (LiveHandles), 1 exports whose
// deleter has not run (LiveExports), 2 foreign memory blocks still held (core.LiveForeign); -1
// for other values.
//
//export dlpackgo_live
func dlpackgo_live(which C.int) C.int64_t {
	switch which {
	case 0:
		return C.int64_t(LiveHandles())
	case 1:
		return C.int64_t(LiveExports())
	case 2:
		return C.int64_t(core.LiveForeign())
	}
	return -1
}

// dlpackgo_collect runs the Go garbage collector, so that tensors nobody holds let go of their
// memory (their cleanups run shortly after, on another goroutine).
//
//export dlpackgo_collect
func dlpackgo_collect() {
	runtime.GC()
	runtime.GC()
}
