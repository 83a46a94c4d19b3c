/*
 * numpy.c: NumPy arrays read in C, without __dlpack__.
 *
 * Handing a NumPy array to Go through the DLPack protocol costs a Python method call, NumPy's
 * capsule and the capsule's checks, which together cost more than everything else a call of a
 * registered Go function does. The fields that call needs (data address, dimensions, strides in
 * bytes, element type, flags) are public C fields of every ndarray: NumPy's C API reads them with
 * macros compiled into every extension, so their places are part of NumPy's ABI. This file reads
 * them for arrays of exactly the type numpy.ndarray and makes a DLManagedTensorVersioned of its
 * own over the memory, holding a reference to the array; its deleter drops that reference with
 * the GIL held (pxg_release_with_gil), from wherever Go lets go.
 *
 * It takes what NumPy's own __dlpack__ would give, and read-only arrays too: aligned,
 * native-byte-order arrays of exactly numpy.ndarray or numpy.memmap (np.load(..., mmap_mode=...)
 * and np.memmap: the same C layout; other subclasses, such as masked arrays, carry meaning the
 * fields do not say) with a dtype in the table the Python module built from numpy.dtype(...).num,
 * whose strides are whole elements. A read-only array (flags.writeable False, a memmap opened
 * "r") becomes a tensor flagged DLPack READ_ONLY, which Go refuses to write (core.ErrReadOnly),
 * where NumPy's __dlpack__ refuses to export it at all. Anything else is declined (no error), and
 * the caller asks __dlpack__, which exports it or says why not. The Python module checks at load time that this
 * reader and NumPy agree on a few probe arrays, and leaves the reader off if they do not (a
 * NumPy or CPython build with another layout).
 *
 * Two builtins use it: pend(x) for Library.from_dlpack, which returns a "dlpackgo.pending"
 * capsule owning the managed tensor without entering Go (Go imports it on first use: adopt),
 * and the call builtin of call.c, which passes it to Go as the argument.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "pyexchange.h"
#include "dlpack_validate.h"
#include "_cgo_export.h" /* dlpackgo_import */

/* The Python C API and NumPy facts the reader needs (pxg_numpy_attach). */
static struct {
	void (*incref)(void *o);
	void (*decref)(void *o);
	void *(*capsule_new)(void *p, const char *name, void (*destructor)(void *));
	int (*capsule_is_valid)(void *c, const char *name);
	void *(*capsule_get_pointer)(void *c, const char *name);
	int (*capsule_set_name)(void *c, const char *name);
	void *(*long_from_void_ptr)(void *p);
	void *(*err_no_memory)(void);
	void (*err_set_string)(void *exc, const char *msg);
	void *(*tuple_new)(intptr_t n);
	int (*tuple_set_item)(void *t, intptr_t i, void *o);
	void *(*long_from_ll)(long long v);
	void *(*cfunction_new_ex)(void *def, void *self, void *module);
	int (*capsule_set_context)(void *c, void *context);
	void *(*capsule_get_context)(void *c);
	void *none_obj, *value_error, *buffer_error;
	void *ndarray;    /* numpy.ndarray, or 0: the reader is off */
	uintptr_t header; /* sizeof(PyObject): where an ndarray's own fields start */
	void *memmap;     /* numpy.memmap, read as an ndarray */
	void *array_type; /* NumPy's C API: &PyArray_Type, ... (pxg_numpy_result) */
	void *(*descr_from_type)(int type_num);
	void *(*new_from_descr)(void *subtype, void *descr, int nd, const int64_t *dims, const int64_t *strides,
		void *data, int flags, void *obj);
	int (*set_base_object)(void *arr, void *obj);
	uint32_t dtypes[PXG_NP_DTYPES]; /* by type_num: code | bits << 8 | lanes << 16; 0 declined */
	uint32_t result_dtypes[PXG_NP_RESULTS]; /* results: DLPack dtypes, 0 for none */
	int result_nums[PXG_NP_RESULTS];        /* and their NumPy type numbers */
} np;
static volatile int np_results_on;
static volatile int np_on;
static int64_t np_reads; /* managed tensors the reader made */

int64_t pxg_numpy_reads(void) { return __atomic_load_n(&np_reads, __ATOMIC_RELAXED); }

int pxg_numpy_attach(const uintptr_t *cfg, int n) {
	if (cfg == NULL || n != PXG_NP_COUNT) return -1;
	for (int i = 0; i < PXG_NP_NDARRAY; i++)
		if (cfg[i] == 0) return -1;
	/* np is the table's first PXG_NP_DTYPE_TABLE entries, in order, then the dtypes */
	_Static_assert(offsetof(__typeof__(np), dtypes) == PXG_NP_DTYPE_TABLE * sizeof(uintptr_t),
		"np matches the table");
	memcpy(&np, cfg, PXG_NP_DTYPE_TABLE * sizeof(uintptr_t));
	for (int i = 0; i < PXG_NP_DTYPES; i++) np.dtypes[i] = (uint32_t)cfg[PXG_NP_DTYPE_TABLE + i];
	const uintptr_t *res = cfg + PXG_NP_DTYPE_TABLE + PXG_NP_DTYPES;
	for (int i = 0; i < PXG_NP_RESULTS; i++) {
		np.result_dtypes[i] = (uint32_t)res[2 * i];
		np.result_nums[i] = (int)res[2 * i + 1];
	}
	__atomic_store_n(&np_on, np.ndarray != NULL && np.header != 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&np_results_on,
		np.array_type != NULL && np.array_type == np.ndarray && np.descr_from_type != NULL &&
			np.new_from_descr != NULL && np.set_base_object != NULL,
		__ATOMIC_SEQ_CST);
	return 0;
}

void pxg_numpy_off(void) {
	__atomic_store_n(&np_on, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&np_results_on, 0, __ATOMIC_SEQ_CST);
}

int pxg_numpy_results_on(void) { return __atomic_load_n(&np_results_on, __ATOMIC_RELAXED); }

/* The leading fields of NumPy's PyArrayObject and PyArray_Descr, after the object header. */
typedef struct {
	char *data;
	int nd;
	int64_t *dimensions; /* npy_intp: 64 bits on the 64-bit platforms this module supports */
	int64_t *strides;
	void *base;
	void *descr;
	int flags;
} np_array;

typedef struct {
	void *typeobj;
	char kind, type, byteorder, flags;
	int type_num;
} np_descr;

enum { NPY_ALIGNED = 0x0100, NPY_WRITEABLE = 0x0400 };

_Static_assert(sizeof(void *) == 8 && sizeof(int64_t) == sizeof(intptr_t), "a 64-bit platform");

int pxg_numpy_is(void *obj) {
	if (!__atomic_load_n(&np_on, __ATOMIC_RELAXED) || obj == NULL) return 0;
	void *type;
	memcpy(&type, (char *)obj + np.header - sizeof(void *), sizeof type); /* ob_type */
	return type == np.ndarray || type == np.memmap;
}

/* One allocation: the managed tensor, then its shape and strides. */
typedef struct {
	pxg_managed_versioned m;
	int64_t dims[];
} np_managed;

static void np_release(void *p) {
	np_managed *nm = p;
	np.decref(nm->m.manager_ctx);
	free(nm);
}

static void np_deleter(pxg_managed_versioned *m) { pxg_release_with_gil(np_release, m); }

/* np_read checks ndarray obj for the reader (see the top of the file) and returns its number of
 * dimensions, its DLPack dtype in *dt, its element size in *size and its DLPack flags in *flags
 * (READ_ONLY for an array NumPy does not let anyone write); -1 when declined. */
static int np_read(void *obj, uint32_t *dt, int64_t *size, uint64_t *flags) {
	if (!pxg_numpy_is(obj)) return -1;
	const np_array *a = (const np_array *)((char *)obj + np.header);
	const np_descr *d = (const np_descr *)((char *)a->descr + np.header);
	if (a->nd < 0 || a->nd > PXG_NP_MAX_NDIM) return -1;
	if (!(a->flags & NPY_ALIGNED)) return -1;
	*flags = (a->flags & NPY_WRITEABLE) ? 0 : DLPG_FLAG_READ_ONLY;
	if (d->byteorder == '>' || d->type_num < 0 || d->type_num >= PXG_NP_DTYPES) return -1;
	*dt = np.dtypes[d->type_num];
	if (*dt == 0) return -1;
	*size = (int64_t)((*dt >> 8) & 0xff) * (int64_t)(*dt >> 16) / 8;
	for (int i = 0; i < a->nd; i++)
		if (*size == 0 || a->strides[i] % *size != 0) return -1;
	return a->nd;
}

/* np_fill makes m a managed tensor over ndarray obj's memory (np_read said yes: nd, dt, size,
 * flags), with shape and strides in dims (2 * nd entries), and takes a reference to obj. */
static void np_fill(void *obj, int nd, uint32_t dt, int64_t size, uint64_t flags, pxg_managed_versioned *m,
	int64_t *dims, void (*deleter)(pxg_managed_versioned *)) {
	const np_array *a = (const np_array *)((char *)obj + np.header);
	m->version.major = 1;
	m->version.minor = 3;
	m->manager_ctx = obj;
	m->deleter = deleter;
	m->flags = flags;
	pxg_tensor *t = &m->dl_tensor;
	t->data = a->data;
	t->device.device_type = dlpg_kDLCPU;
	t->device.device_id = 0;
	t->ndim = nd;
	t->dtype.code = (uint8_t)(dt & 0xff);
	t->dtype.bits = (uint8_t)((dt >> 8) & 0xff);
	t->dtype.lanes = (uint16_t)(dt >> 16);
	t->shape = dims;
	t->strides = dims + nd;
	t->byte_offset = 0;
	for (int i = 0; i < nd; i++) {
		dims[i] = a->dimensions[i];
		dims[nd + i] = a->strides[i] / size;
	}
	np.incref(obj);
	__atomic_add_fetch(&np_reads, 1, __ATOMIC_RELAXED);
}

pxg_managed_versioned *pxg_numpy_managed(void *obj, int *status) {
	*status = 0;
	uint32_t dt;
	int64_t size;
	uint64_t flags;
	int nd = np_read(obj, &dt, &size, &flags);
	if (nd < 0) return NULL;
	np_managed *nm = malloc(sizeof *nm + 2 * (size_t)nd * sizeof(int64_t));
	if (nm == NULL) {
		np.err_no_memory();
		*status = -1;
		return NULL;
	}
	np_fill(obj, nd, dt, size, flags, &nm->m, nm->dims, np_deleter);
	*status = 1;
	return &nm->m;
}

int pxg_numpy_arg(void *obj, pxg_np_arg *arg) {
	uint32_t dt;
	int64_t size;
	uint64_t flags;
	int nd = np_read(obj, &dt, &size, &flags);
	if (nd < 0) return 0;
	int64_t *dims = arg->dims;
	arg->heap = NULL;
	if (nd > PXG_NP_INLINE) {
		if ((dims = arg->heap = malloc(2 * (size_t)nd * sizeof(int64_t))) == NULL) {
			np.err_no_memory();
			return -1;
		}
	}
	np_fill(obj, nd, dt, size, flags, &arg->m, dims, NULL);
	return 1;
}

void pxg_numpy_arg_done(pxg_np_arg *arg, int drop) {
	free(arg->heap);
	arg->heap = NULL;
	if (drop) np.decref(arg->m.manager_ctx);
}

static void np_decref(void *obj) { np.decref(obj); }

void pxg_numpy_drop(void *obj) { pxg_release_with_gil(np_decref, obj); }

void pxg_numpy_delete(pxg_managed_versioned *m) { np_release(m); }

/* -- results -------------------------------------------------------------------------------------
 *
 * A registered function's host result goes to Python as a NumPy array made here, with NumPy's own
 * PyArray_NewFromDescr over the export's memory (no copy, whatever its size), instead of a sharer,
 * an __array_interface__ dict and numpy.asarray: the part of a call that costs the most when a
 * function returns a small new array. The array's base is an unused "dltensor_versioned" capsule
 * of the export, whose destructor (pyexchange.c) runs the export's deleter when the array, and
 * every view of it, is gone. A read-only export makes a read-only array. */

void *pxg_numpy_result(pxg_managed_versioned *m, int *status) {
	*status = 0;
	if (!pxg_numpy_results_on()) return NULL;
	const pxg_tensor *t = &m->dl_tensor;
	if (t->device.device_type != dlpg_kDLCPU || t->ndim < 0 || t->ndim > PXG_NP_MAX_NDIM || t->dtype.bits % 8 != 0)
		return NULL;
	uint32_t dt = (uint32_t)t->dtype.code | (uint32_t)t->dtype.bits << 8 | (uint32_t)t->dtype.lanes << 16;
	int num = -1;
	for (int i = 0; i < PXG_NP_RESULTS && num < 0; i++)
		if (np.result_dtypes[i] != 0 && np.result_dtypes[i] == dt) num = np.result_nums[i];
	if (num < 0) return NULL;
	int64_t size = t->dtype.bits / 8, strides[PXG_NP_MAX_NDIM], acc = size;
	for (int i = t->ndim - 1; i >= 0; i--) { /* exports always carry strides: C order otherwise */
		strides[i] = t->strides != NULL ? t->strides[i] * size : acc;
		acc *= t->shape[i];
	}
	void *descr = np.descr_from_type(num);
	if (descr == NULL) goto fail;
	void *base = np.capsule_new(m, pxg_name(PXG_NAME_VERSIONED), (void (*)(void *))pxg_capsule_destructor_addr());
	if (base == NULL) {
		np.decref(descr);
		goto fail;
	}
	/* from here on the capsule owns m: dropping it runs the deleter */
	void *arr = np.new_from_descr(np.array_type, descr, t->ndim, t->shape, strides, (char *)t->data + t->byte_offset,
		(m->flags & DLPG_FLAG_READ_ONLY) ? 0 : NPY_WRITEABLE, NULL); /* steals descr */
	if (arr == NULL) {
		np.decref(base);
		*status = -1;
		return NULL;
	}
	if (np.set_base_object(arr, base) != 0) { /* steals base, even when it fails */
		np.decref(arr);
		*status = -1;
		return NULL;
	}
	*status = 1;
	return arr;
fail:
	pxg_delete(m, 0);
	*status = -1;
	return NULL;
}

/* -- pending imports ---------------------------------------------------------------------------
 *
 * A pending import is a capsule that owns a managed tensor Go has not seen yet: the tensor of a
 * NumPy array read above, or one a producer handed over (its capsule, its exchange API), already
 * validated in C (dlpack_validate.h, the port of core.ValidateDLTensor). Library.from_dlpack
 * returns a Tensor holding it; Go adopts it (dlpackgo_import) the first time it needs the tensor.
 * If it never does, the capsule's destructor runs the deleter, with the GIL held. */

static const char pending_name[] = "dlpackgo.pending";        /* a DLManagedTensorVersioned */
static const char pending_legacy_name[] = "dlpackgo.pending_legacy"; /* a DLManagedTensor */
static const char adopted_name[] = "dlpackgo.adopted";

static void pending_destructor(void *capsule) {
	int legacy = np.capsule_is_valid(capsule, pending_legacy_name);
	if (!legacy && !np.capsule_is_valid(capsule, pending_name)) return; /* adopted: Go owns it */
	void *m = np.capsule_get_pointer(capsule, legacy ? pending_legacy_name : pending_name);
	if (m != NULL) pxg_delete(m, legacy);
}

/* pending_new returns a new pending import owning m (validated, or made by the reader); out of
 * memory it runs m's deleter and returns NULL with an exception set. */
static void *pending_new(void *m, int legacy) {
	void *c = np.capsule_new(m, legacy ? pending_legacy_name : pending_name, pending_destructor);
	if (c == NULL) pxg_delete(m, legacy);
	return c;
}

void *pxg_pending_take(void *m, int legacy) {
	const char *bad = legacy ? dlpg_validate(&((pxg_managed *)m)->dl_tensor) : dlpg_validate_versioned(m);
	if (bad != NULL) {
		char msg[200];
		snprintf(msg, sizeof msg, "dlpackgo: the producer's tensor is invalid: %s", bad);
		pxg_delete(m, legacy);
		np.err_set_string(np.buffer_error, msg);
		return NULL;
	}
	return pending_new(m, legacy);
}

/* pending_of returns the managed tensor of a pending capsule and whether it is legacy, or NULL
 * with a ValueError set. */
static void *pending_of(void *capsule, int *legacy) {
	*legacy = np.capsule_is_valid(capsule, pending_legacy_name);
	if (!*legacy && !np.capsule_is_valid(capsule, pending_name)) {
		np.err_set_string(np.value_error, "dlpackgo: not a pending import (adopted already?)");
		return NULL;
	}
	return np.capsule_get_pointer(capsule, *legacy ? pending_legacy_name : pending_name);
}

/* pend(x) -> a pending import of NumPy array x, or None when the reader declines x. */
static void *pend(void *self, void *obj) {
	(void)self;
	int st;
	pxg_managed_versioned *m = pxg_numpy_managed(obj, &st);
	if (st < 0) return NULL;
	if (m == NULL) {
		np.incref(np.none_obj);
		return np.none_obj;
	}
	return pending_new(m, 0);
}

/* adopt(pending) -> the handle of a Go tensor over a pending import's memory. The capsule is
 * renamed first, so that exactly one of Go and the capsule lets go, and keeps the handle as its
 * context: adopting it again (another thread of the same Tensor got there first) answers the same
 * handle. */
static void *adopt(void *self, void *capsule) {
	(void)self;
	if (np.capsule_is_valid(capsule, adopted_name)) {
		void *h = np.capsule_get_context(capsule);
		if (h != NULL) return np.long_from_void_ptr(h);
	}
	int legacy;
	void *m = pending_of(capsule, &legacy);
	if (m == NULL) return NULL;
	if (np.capsule_set_name(capsule, adopted_name) != 0) return NULL;
	char err[512];
	err[0] = 0;
	uintptr_t h = dlpackgo_import(m, !legacy, err, sizeof err);
	if (h == 0) { /* validated in C already: cannot happen; Go has run the deleter */
		np.err_set_string(err[0] == 'V' ? np.value_error : np.buffer_error, err[0] ? err + 1 : "import failed");
		return NULL;
	}
	void *handle = np.long_from_void_ptr((void *)h);
	if (handle == NULL) {
		dlpackgo_release(h);
		return NULL;
	}
	np.capsule_set_context(capsule, (void *)h); /* cannot fail on a valid capsule */
	return handle;
}

/* ints returns a new tuple of the n values v, or NULL with an exception set. */
static void *ints(const int64_t *v, int n) {
	void *t = np.tuple_new(n);
	for (int i = 0; t != NULL && i < n; i++) {
		void *x = np.long_from_ll(v[i]);
		if (x == NULL) {
			np.decref(t);
			return NULL;
		}
		np.tuple_set_item(t, i, x); /* steals x */
	}
	return t;
}

/* describe(pending) -> the header, shape and element strides of a pending import's tensor, as
 * dlpackgo_describe gives them for a handle: ((ndim, code, bits, lanes, device type, device id,
 * flags, data), shape, strides). Strides are filled in (C order) when the producer sent none. */
static void *describe(void *self, void *capsule) {
	(void)self;
	int legacy;
	void *m = pending_of(capsule, &legacy);
	if (m == NULL) return NULL;
	const pxg_tensor *t = legacy ? &((pxg_managed *)m)->dl_tensor : &((pxg_managed_versioned *)m)->dl_tensor;
	uint64_t flags = legacy ? 0 : ((pxg_managed_versioned *)m)->flags;
	uintptr_t data = (uintptr_t)t->data; /* as core keeps it: the offset folded in where addressable */
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
	if (n != 0 && dlpg_addressable_(t->device.device_type)) data += t->byte_offset;
	int64_t h[8] = {t->ndim, t->dtype.code, t->dtype.bits, t->dtype.lanes, t->device.device_type,
		t->device.device_id, (int64_t)flags, (int64_t)data};
	int64_t strides[PXG_NP_MAX_NDIM], acc = 1;
	for (int i = t->ndim - 1; i >= 0; i--) { /* validated: 0 <= ndim <= 64 */
		strides[i] = t->strides != NULL ? t->strides[i] : acc;
		if (t->shape[i] > 1) acc *= t->shape[i];
	}
	void *parts[3] = {ints(h, 8), ints(t->shape, t->ndim), ints(strides, t->ndim)};
	void *r = NULL;
	if (parts[0] != NULL && parts[1] != NULL && parts[2] != NULL) r = np.tuple_new(3);
	for (int i = 0; i < 3; i++) {
		if (r != NULL)
			np.tuple_set_item(r, i, parts[i]);
		else if (parts[i] != NULL)
			np.decref(parts[i]);
	}
	return r;
}

/* -- read-only capsules ------------------------------------------------------------------------
 *
 * readonly(capsule) uses up an unused DLPack capsule and returns a new "dltensor_versioned" one
 * over the same tensor, flagged READ_ONLY: what dlpackgo passes Go for a torch tensor that may not
 * be written (one that requires grad, detached first, or an inference tensor outside inference
 * mode), whose own capsule, legacy in PyTorch 1.13, cannot say so. The new managed tensor's
 * deleter frees it and runs the original's. */

typedef struct {
	pxg_managed_versioned m;
	void *orig;
	int legacy;
} ro_managed;

static void ro_deleter(pxg_managed_versioned *self) {
	ro_managed *r = (ro_managed *)self;
	void *orig = r->orig;
	int legacy = r->legacy;
	free(r);
	pxg_delete(orig, legacy);
}

static void *readonly(void *self, void *capsule) {
	(void)self;
	const char *vn = pxg_name(PXG_NAME_VERSIONED), *ln = pxg_name(PXG_NAME_LEGACY);
	int legacy;
	if (np.capsule_is_valid(capsule, vn))
		legacy = 0;
	else if (np.capsule_is_valid(capsule, ln))
		legacy = 1;
	else {
		np.err_set_string(np.value_error, "dlpackgo: readonly() wants an unused DLPack capsule");
		return NULL;
	}
	void *m = np.capsule_get_pointer(capsule, legacy ? ln : vn);
	if (m == NULL) return NULL;
	if (!legacy && ((pxg_managed_versioned *)m)->version.major != 1) {
		np.err_set_string(np.buffer_error, "dlpackgo: the producer's tensor has another DLPack major version than 1");
		return NULL; /* not consumed: the capsule's destructor lets go */
	}
	ro_managed *r = malloc(sizeof *r);
	if (r == NULL) return np.err_no_memory();
	if (legacy) {
		memset(&r->m, 0, sizeof r->m);
		r->m.dl_tensor = ((pxg_managed *)m)->dl_tensor;
	} else {
		r->m = *(pxg_managed_versioned *)m;
	}
	r->m.version.major = 1;
	r->m.version.minor = 3;
	r->m.flags |= DLPG_FLAG_READ_ONLY;
	r->m.manager_ctx = r;
	r->m.deleter = ro_deleter;
	r->orig = m;
	r->legacy = legacy;
	if (np.capsule_set_name(capsule, pxg_name(legacy ? PXG_NAME_USED_LEGACY : PXG_NAME_USED_VERSIONED)) != 0) {
		free(r);
		return NULL;
	}
	void *c = np.capsule_new(&r->m, vn, (void (*)(void *))pxg_capsule_destructor_addr());
	if (c == NULL) ro_deleter(&r->m);
	return c;
}

static method_def defs[] = {
	{"pend", (void *)pend, METH_O,
		"pend(x) -> a pending import of NumPy array x (a capsule), or None: see numpy.c."},
	{"adopt", (void *)adopt, METH_O, "adopt(pending) -> the handle of the Go tensor of a pending import."},
	{"describe", (void *)describe, METH_O,
		"describe(pending) -> ((ndim, code, bits, lanes, device type, device id, flags, data), "
		"shape, strides) of a pending import."},
	{"readonly", (void *)readonly, METH_O,
		"readonly(capsule) -> a new unused versioned capsule of the same tensor, flagged READ_ONLY (the "
		"capsule is used up)."},
};

void *pxg_numpy_builtin(int which) {
	if (which < 0 || which >= (int)(sizeof defs / sizeof defs[0]) || np.cfunction_new_ex == NULL)
		return NULL;
	return np.cfunction_new_ex(&defs[which], NULL, NULL);
}
