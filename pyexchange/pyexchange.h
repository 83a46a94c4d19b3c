/*
 * pyexchange.h: the C half of package pyexchange. It reaches the Python C API only through
 * function pointers that the Python module hands over at load time (dlpackgo_init), so the
 * library links against no libpython and loads into any CPython 3 process.
 */
#ifndef DLPACKGO_PYEXCHANGE_H
#define DLPACKGO_PYEXCHANGE_H

#include <stdint.h>

/* The DLPack managed tensors: the module's one C declaration of the ABI (core/cdlpack), under
 * this file's names. Found by the include path of cexports.go's #cgo CFLAGS. */
#include "dlpack_abi.h"
typedef dlpg_tensor pxg_tensor;
typedef dlpg_managed pxg_managed;
typedef dlpg_managed_versioned pxg_managed_versioned;

/* PyMethodDef, whose layout is part of CPython's stable ABI, and the flags of the builtins and
 * methods the library makes (PyCFunction_NewEx, PyDescr_NewMethod). */
typedef struct {
	const char *name;
	void *meth;
	int flags;
	const char *doc;
} method_def;
#define METH_KEYWORDS 0x0002
#define METH_NOARGS 0x0004
#define METH_O 0x0008
#define METH_FASTCALL 0x0080

/* Capsule names, static for the life of the process (Python keeps only the pointer). */
enum { PXG_NAME_VERSIONED, PXG_NAME_LEGACY, PXG_NAME_USED_VERSIONED, PXG_NAME_USED_LEGACY };

/*
 * The Python C API entries pxg_attach takes, by index: function addresses and, from
 * PXG_API_TRUE on, object addresses (id(True), id(None), id(TypeError), ...). The Python module
 * passes them in this order.
 */
enum {
	PXG_API_CAPSULE_IS_VALID,
	PXG_API_CAPSULE_GET_POINTER,
	PXG_API_ERR_FETCH,
	PXG_API_ERR_RESTORE,
	PXG_API_GIL_ENSURE,
	PXG_API_GIL_RELEASE,
	PXG_API_IS_INITIALIZED,
	PXG_API_IS_FINALIZING, /* 0 where the interpreter has no Py_IsFinalizing */
	PXG_API_CAPSULE_NEW,
	PXG_API_CFUNCTION_NEW_EX,
	PXG_API_INCREF,
	PXG_API_DECREF,
	PXG_API_ERR_NO_MEMORY,
	PXG_API_CAPSULE_SET_NAME,
	PXG_API_LONG_FROM_VOID_PTR,
	PXG_API_ERR_SET_STRING,
	PXG_API_TRUE,
	PXG_API_NONE,
	PXG_API_EXC_TYPE_ERROR,
	PXG_API_EXC_VALUE_ERROR,
	PXG_API_EXC_BUFFER_ERROR,
	PXG_API_COUNT
};

/* The version of the protocol between the library and the dlpackgo package (pyexchange/python/dlpackgo/_exchange.py) (dlpackgo_abi). */
#define PXG_ABI 7 /* 4: registered functions (call.h); 5: the NumPy reader, __dlpack__ in C;
                   6: registered functions called from C (dlpackgo_function); 7: read-only
                   and memory-mapped arrays, readonly() */

/* pxg_attach takes n API addresses in the order above. It returns 0, or -1 if n is not
 * PXG_API_COUNT or a required address is 0. */
int pxg_attach(const uintptr_t *api, int n);
void pxg_python_exiting(void);
int pxg_python_attached(void);
const char *pxg_name(int which);
uintptr_t pxg_capsule_destructor_addr(void);
void *pxg_empty_data(void);
pxg_managed_versioned *pxg_guard_versioned(pxg_managed_versioned *m);
pxg_managed *pxg_guard_legacy(pxg_managed *m);
void pxg_delete_guarded_versioned(pxg_managed_versioned *m);
void pxg_delete_guarded_legacy(pxg_managed *m);
/* pxg_delete runs the deleter, if any, of m: a DLManagedTensor if legacy, else versioned. */
void pxg_delete(void *m, int legacy);
/* pxg_with_gil runs fn(arg) holding the GIL (taken and given back: the caller may hold it
 * already), or not at all once the interpreter is going away. */
void pxg_with_gil(void (*fn)(void *), void *arg);

void *pxg_none(void);
void *pxg_sharer_new(pxg_managed_versioned *tmpl);
void *pxg_taker_new(void);
int64_t pxg_live_anchors(void);
int64_t pxg_live_shares(void);
pxg_managed_versioned *pxg_share_of(void *anchor_capsule);
/* pxg_share_capsule is share(versioned) of the anchor's builtin, from C: a new unused capsule. */
void *pxg_share_capsule(void *anchor_capsule, int versioned);
int pxg_share_view(void *anchor_capsule, pxg_tensor *out);

#endif
