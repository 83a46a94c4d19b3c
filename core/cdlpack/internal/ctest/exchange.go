package ctest

/*
#cgo CFLAGS: -Werror=incompatible-pointer-types
#include <stddef.h>
#include "dlpack_abi.h"

// ---- the exchange API's layout, and its entry types checked by the compiler ----------------

static void ctest_exchange_layout(int64_t *out) {
	int i = 0;
	out[i++] = sizeof(dlpg_exchange_api_header);
	out[i++] = offsetof(dlpg_exchange_api_header, version);
	out[i++] = offsetof(dlpg_exchange_api_header, prev_api);
	out[i++] = sizeof(dlpg_exchange_api);
	out[i++] = offsetof(dlpg_exchange_api, header);
	out[i++] = offsetof(dlpg_exchange_api, managed_tensor_allocator);
	out[i++] = offsetof(dlpg_exchange_api, managed_tensor_from_py_object_no_sync);
	out[i++] = offsetof(dlpg_exchange_api, managed_tensor_to_py_object_no_sync);
	out[i++] = offsetof(dlpg_exchange_api, dltensor_from_py_object_no_sync);
	out[i++] = offsetof(dlpg_exchange_api, current_work_stream);
}

// Functions with the signatures of dlpack.h v1.3, spelled out again: the table below compiles
// only if the entry types of dlpack_abi.h take and return the same (incompatible function
// pointer types are an error in this package).
static int sig_alloc(dlpg_tensor *prototype, dlpg_managed_versioned **out, void *error_ctx,
		void (*set_error)(void *error_ctx, const char *kind, const char *message)) {
	(void)prototype; (void)error_ctx; (void)set_error;
	*out = NULL;
	return -1;
}
static int sig_from(void *py_object, dlpg_managed_versioned **out) { (void)py_object; *out = NULL; return -1; }
static int sig_to(dlpg_managed_versioned *tensor, void **out_py_object) { (void)tensor; *out_py_object = NULL; return -1; }
static int sig_view(void *py_object, dlpg_tensor *out) { (void)py_object; (void)out; return -1; }
static int sig_stream(int32_t device_type, int32_t device_id, void **out) {
	(void)device_type; (void)device_id;
	*out = NULL;
	return 0;
}

static dlpg_exchange_api ctest_table = {
	{{1, 3}, NULL}, sig_alloc, sig_from, sig_to, sig_view, sig_stream,
};

static int ctest_exchange_table_ok(void) {
	return ctest_table.header.version.major == 1 && ctest_table.header.version.minor == 3 &&
		ctest_table.current_work_stream != NULL;
}
*/
import "C"

// exchangeLayoutKeys names the values ctest_exchange_layout writes, in order.
var exchangeLayoutKeys = []string{
	"DLPackExchangeAPIHeader", "DLPackExchangeAPIHeader.version", "DLPackExchangeAPIHeader.prev_api",
	"DLPackExchangeAPI", "DLPackExchangeAPI.header", "DLPackExchangeAPI.managed_tensor_allocator",
	"DLPackExchangeAPI.managed_tensor_from_py_object_no_sync",
	"DLPackExchangeAPI.managed_tensor_to_py_object_no_sync",
	"DLPackExchangeAPI.dltensor_from_py_object_no_sync", "DLPackExchangeAPI.current_work_stream",
}

// CExchangeLayout returns sizeof and offsetof of the exchange API's structs and fields as C sees
// them.
func CExchangeLayout() Layout {
	out := make([]C.int64_t, len(exchangeLayoutKeys))
	C.ctest_exchange_layout(&out[0])
	l := Layout{}
	for i, k := range exchangeLayoutKeys {
		l[k] = uintptr(out[i])
	}
	return l
}

// CExchangeTableOK reports whether a table initialised in C with functions of dlpack.h's
// signatures holds what was put there (the table compiling at all is the signature check).
func CExchangeTableOK() bool { return C.ctest_exchange_table_ok() == 1 }

// CExchangeNames returns the capsule name and the type attribute as the C declaration spells them.
func CExchangeNames() (capsule, attr string) {
	return C.DLPG_EXCHANGE_API_CAPSULE_NAME, C.DLPG_EXCHANGE_API_ATTR
}
