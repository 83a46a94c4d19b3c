package pyexchange

/*
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "exchange_api.h"
#include "dlpack_abi.h"

// pxe_collect_error is the set_error of pxe_allocate: "kind: message" into the buffer ctx.
static void pxe_collect_error(void *ctx, const char *kind, const char *message) {
	snprintf((char *)ctx, 512, "%s: %s", kind, message);
}

// pxe_allocate calls the table's allocator as a consumer does; err gets 512 bytes.
static int pxe_allocate(void *proto, void **out, char *err) {
	const dlpg_exchange_api *api = pxe_api();
	return api->managed_tensor_allocator((dlpg_tensor *)proto, (dlpg_managed_versioned **)out, err,
		pxe_collect_error);
}
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// The C functions below give dlpackgo/_exchange.py the DLPack 1.3 C exchange API of exchange_api.c: the
// table dlpackgo.Tensor publishes as __dlpack_c_exchange_api__, and the builtins through which
// Library.from_dlpack consumes other types' tables. Go is on none of their hot paths.

// dlpackgo_exchange_init attaches the Python interpreter for the exchange API: n addresses of
// C API functions and objects, in the order of exchange_api.h (PXE_API_*), the last of them
// dlpackgo.Tensor, the maker of Tensors from handles and three attribute names. It returns 0,
// or -1 if n is wrong or an address is 0. dlpackgo_init must have been called before.
//
//export dlpackgo_exchange_init
func dlpackgo_exchange_init(api *C.uintptr_t, n C.int) C.int { return C.pxe_attach(api, n) }

// dlpackgo_exchange_api returns the address of the library's static DLPackExchangeAPI (version
// 1.3, prev_api NULL), which lives as long as the process.
//
//export dlpackgo_exchange_api
func dlpackgo_exchange_api() unsafe.Pointer { return unsafe.Pointer(C.pxe_api()) }

// dlpackgo_exchange_capsule_name returns the static C string "dlpack_exchange_api", the name of
// the capsule that holds the table.
//
//export dlpackgo_exchange_capsule_name
func dlpackgo_exchange_capsule_name() *C.char { return C.pxe_capsule_name() }

// dlpackgo_exchange_builtin returns a new reference to a Python builtin of exchange_api.c:
// 0 take_api(x), 1 take_api_strict(x), 2 give_api(cls, tensor), 3 stream_api(cls, device_type,
// device_id), 4 allocate_api(cls, shape_address, ndim, code, bits, lanes, device_type, device_id); NULL with a Python exception set for other values. The caller must hold the GIL
// (ctypes.PYFUNCTYPE).
//
//export dlpackgo_exchange_builtin
func dlpackgo_exchange_builtin(which C.int) unsafe.Pointer { return C.pxe_builtin(which) }

// dlpackgo_exchange_count returns a counter of the exchange API (PXE_COUNT_* of exchange_api.h):
// 0 imports through a type's API, 1 imports that fell back on __dlpack__, 2 managed tensors our
// API exported, 3 DLTensor views it filled, 4 Tensors it made from managed tensors, 5 tensors of
// its allocator not yet deleted, 6 tensors its allocator made; -1 for other values.
//
// dlpackgo_protocol_method returns a new method descriptor of dlpackgo.Tensor written in C:
// 0 __dlpack__, 1 __dlpack_device__ (the common cases in C, the rest through the Tensor's
// _dlpack_slow and _dlpack_device_slow); NULL with a Python exception set for other values. The
// caller must hold the GIL.
//
//export dlpackgo_protocol_method
func dlpackgo_protocol_method(which C.int) unsafe.Pointer { return C.pxe_protocol_method(which) }

//export dlpackgo_exchange_count
func dlpackgo_exchange_count(which C.int) C.int64_t { return C.pxe_count(which) }

// ExchangeAPILiveAllocations returns how many tensors the exchange API's allocator made whose
// deleter has not run yet.
func ExchangeAPILiveAllocations() int64 { return int64(C.pxe_count(C.PXE_COUNT_LIVE_ALLOCS)) }

// ExchangeAPI returns the DLPack 1.3 exchange table of this library (version 1.3, no prev_api), the
// one dlpackgo.Tensor publishes as __dlpack_c_exchange_api__. It is static: it lives as long as
// the process. Its Python entries work once dlpackgo/_exchange.py has attached the interpreter; the
// allocator and current_work_stream need no Python.
func ExchangeAPI() *core.DLPackExchangeAPI { return (*core.DLPackExchangeAPI)(C.pxe_api()) }

// ErrAllocate: the exchange API's allocator refused a prototype.
var ErrAllocate = errors.New("pyexchange: the exchange API's allocator refused")

// ExchangeAllocate calls the exchange API's managed_tensor_allocator as a consumer does, with a
// prototype of the given dtype, device and shape: a new C tensor, compact row-major, zeroed, data
// aligned to 256 bytes (CPU only), owned by the caller, who must run its deleter once
// (cdlpack.DeleteVersioned, or an import that takes it over). Every argument is checked as
// untrusted input; a refusal wraps ErrAllocate and names the Python exception the API reports
// ("ValueError: ...", "MemoryError: ...", "BufferError: ...").
func ExchangeAllocate(dtype core.DLDataType, device core.DLDevice, shape []int64) (*core.DLManagedTensorVersioned, error) {
	n := len(shape)
	if n > 1<<10 {
		return nil, errs.Errorf(ErrAllocate, "pyexchange: ValueError: ndim %d", n)
	}
	// The prototype and its shape live in C memory: C must not hold Go pointers to Go pointers.
	mem := C.calloc(1, C.size_t(unsafe.Sizeof(core.DLTensor{}))+C.size_t(8*(n+1)))
	if mem == nil {
		return nil, errs.Errorf(ErrAllocate, "%w", errs.Errorf(ErrOutOfMemory, "pyexchange: MemoryError: out of C memory for the prototype of a %d-dimensional tensor", n))
	}
	defer C.free(mem)
	proto := (*core.DLTensor)(mem)
	dims := unsafe.Slice((*int64)(unsafe.Add(mem, unsafe.Sizeof(core.DLTensor{}))), n+1)
	copy(dims, shape)
	proto.Device, proto.Dtype, proto.Ndim = device, dtype, int32(n)
	if n > 0 {
		proto.Shape = &dims[0]
	}
	var out unsafe.Pointer
	var buf [512]C.char
	if C.pxe_allocate(mem, &out, &buf[0]) != 0 {
		return nil, errs.Errorf(ErrAllocate, "pyexchange: %s", C.GoString(&buf[0]))
	}
	return (*core.DLManagedTensorVersioned)(out), nil
}
