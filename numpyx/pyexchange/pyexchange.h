/*
 * pyexchange.h: the C half of package pyexchange. It reaches the Python C API only through
 * function pointers that the Python module hands over at load time (dlpackgo_init), so the
 * library links against no libpython and loads into any CPython 3 process.
 */
#ifndef DLPACKGO_PYEXCHANGE_H
#define DLPACKGO_PYEXCHANGE_H

#include <stdint.h>

/* The DLPack managed tensors, as far as this file needs them (layouts fixed by dlpack.h). */
typedef struct {
	void *data;
	int32_t device_type, device_id;
	int32_t ndim;
	uint8_t code, bits;
	uint16_t lanes;
	int64_t *shape, *strides;
	uint64_t byte_offset;
} pxg_tensor;

typedef struct pxg_managed {
	pxg_tensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct pxg_managed *self);
} pxg_managed;

typedef struct pxg_managed_versioned {
	uint32_t major, minor;
	void *manager_ctx;
	void (*deleter)(struct pxg_managed_versioned *self);
	uint64_t flags;
	pxg_tensor dl_tensor;
} pxg_managed_versioned;


/* Capsule names, static for the life of the process (Python keeps only the pointer). */
enum { PXG_NAME_VERSIONED, PXG_NAME_LEGACY, PXG_NAME_USED_VERSIONED, PXG_NAME_USED_LEGACY };

/*
 * pxg_attach takes the addresses of PyCapsule_IsValid, PyCapsule_GetPointer, PyErr_Fetch,
 * PyErr_Restore, PyGILState_Ensure, PyGILState_Release, Py_IsInitialized and (or 0)
 * Py_IsFinalizing. It returns 0, or -1 if a required address is 0.
 */
int pxg_attach(uintptr_t capsule_is_valid, uintptr_t capsule_get_pointer, uintptr_t err_fetch,
	uintptr_t err_restore, uintptr_t gil_ensure, uintptr_t gil_release, uintptr_t is_initialized,
	uintptr_t is_finalizing);
void pxg_python_exiting(void);
int pxg_python_attached(void);
const char *pxg_name(int which);
uintptr_t pxg_capsule_destructor_addr(void);
void *pxg_empty_data(void);
pxg_managed_versioned *pxg_guard_versioned(pxg_managed_versioned *m);
pxg_managed *pxg_guard_legacy(pxg_managed *m);
void pxg_delete_guarded_versioned(pxg_managed_versioned *m);
void pxg_delete_guarded_legacy(pxg_managed *m);

#endif
