package pyexchange

/*
#include <stdint.h>
#include "exchange_api.h"
*/
import "C"

import "unsafe"

// The C functions below give dlpackgo.py the DLPack 1.3 C exchange API of exchange_api.c: the
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
// device_id); NULL with a Python exception set for other values. The caller must hold the GIL
// (ctypes.PYFUNCTYPE).
//
//export dlpackgo_exchange_builtin
func dlpackgo_exchange_builtin(which C.int) unsafe.Pointer { return C.pxe_builtin(which) }

// dlpackgo_exchange_count returns a counter of the exchange API (PXE_COUNT_* of exchange_api.h):
// 0 imports through a type's API, 1 imports that fell back on __dlpack__, 2 managed tensors our
// API exported, 3 DLTensor views it filled, 4 Tensors it made from managed tensors, 5 tensors of
// its allocator not yet deleted, 6 tensors its allocator made; -1 for other values.
//
//export dlpackgo_exchange_count
func dlpackgo_exchange_count(which C.int) C.int64_t { return C.pxe_count(which) }

// ExchangeAPILiveAllocations returns how many tensors the exchange API's allocator made whose
// deleter has not run yet.
func ExchangeAPILiveAllocations() int64 { return int64(C.pxe_count(C.PXE_COUNT_LIVE_ALLOCS)) }
