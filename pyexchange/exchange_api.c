/*
 * exchange_api.c: DLPack 1.3's C exchange API, both sides, in C.
 *
 * Producer. dlpackgo.Tensor carries __dlpack_c_exchange_api__, a capsule named
 * "dlpack_exchange_api" over the static table below. Its entries give a consumer what
 * Tensor.__dlpack__(max_version=(1, 3)) gives, without a capsule and without Go on the way:
 *   - managed_tensor_from_py_object_no_sync: a share of the tensor's sharer (pyexchange.c, 3.):
 *     a malloc'd copy of the template export's descriptor that holds the anchor. The first call
 *     for a tensor enters Go once to make the sharer (dlpackgo_sharer, as __dlpack__ does); a
 *     tensor that cannot be shared (read-only, negative strides) is exported by Go as a copy
 *     (dlpackgo_export, IS_COPIED), exactly as __dlpack__ with copy=None.
 *   - dltensor_from_py_object_no_sync: the template's descriptor itself, non-owning; refused
 *     (BufferError) for a tensor that only a copy could describe, as a borrowed view cannot own it.
 *   - managed_tensor_to_py_object_no_sync: Go adopts the managed tensor (dlpackgo_import, with the
 *     GIL guard of every Python import) and the Tensor is made by dlpackgo/_exchange.py's maker.
 *   - managed_tensor_allocator: C memory of our own (one block: the managed tensor, shape,
 *     strides, then zeroed data aligned to 256 bytes), CPU only; its deleter frees the block.
 *   - current_work_stream: NULL (the legacy default stream) for every device. dlpack-go keeps no
 *     current stream, and this table's exports of device tensors do not synchronize (__dlpack__'s
 *     do, through the library's StreamSync): the Go code that fills a device tensor must finish
 *     before this table hands it out.
 *
 * Consumer. Library.from_dlpack(x) calls the builtin take_api(x): it finds the table on type(x),
 * checks the version (major 1, minor >= 3, walking prev_api past newer majors), asks the
 * producer for a managed tensor and hands it to Go, in one call. Host memory only in the
 * automatic mode: the API does not synchronize streams, so a tensor on a device falls back on
 * __dlpack__, whose stream argument makes the producer synchronize; the strict mode takes it all
 * the same and leaves the ordering to the caller (current_work_stream tells on which stream).
 *
 * Every entry called with the GIL held reports failures as Python exceptions and returns -1 (the
 * allocator reports through the consumer's set_error); no input makes them crash, leak, or run a
 * deleter twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyexchange.h"
#include "exchange_api.h"
#include "dlpack_abi.h"
#include "call.h" /* pxg_pending_take */
#include "_cgo_export.h" /* dlpackgo_sharer, dlpackgo_export, dlpackgo_import, dlpackgo_release */

typedef intptr_t ssize;

static struct {
	void *(*get_attr)(void *o, void *name);
	int (*set_attr)(void *o, void *name, void *v);
	int (*is_instance)(void *o, void *cls);
	void *(*type)(void *o);
	void *(*cfunction_get_self)(void *f);
	void *(*capsule_get_pointer)(void *capsule, const char *name);
	int (*capsule_is_valid)(void *capsule, const char *name);
	void *(*long_as_void_ptr)(void *o);
	void *(*long_from_void_ptr)(void *p);
	void *(*long_from_long_long)(long long v);
	long long (*long_as_long_long)(void *o);
	void *(*call_function_obj_args)(void *callable, ...);
	void *(*err_occurred)(void);
	void (*err_clear)(void);
	void (*err_set_string)(void *type, const char *message);
	void *(*err_no_memory)(void);
	void *(*cfunction_new_ex)(void *def, void *self, void *module);
	void (*incref)(void *o);
	void (*decref)(void *o);
	int (*gil_ensure)(void);
	void (*gil_release)(int state);
	void *(*type_lookup)(void *type, void *name); /* may be NULL */
	void *(*descr_new_method)(void *type, void *def);
	ssize (*tuple_size)(void *t);
	void *(*tuple_get_item)(void *t, ssize i);
	void *(*sequence_get_item)(void *o, ssize i);
	int (*unicode_compare_ascii)(void *u, const char *s);
	void *none, *false_obj;
	void *type_error, *value_error, *buffer_error, *memory_error, *runtime_error;
	void *tensor_type, *maker, *name_share, *name_handle, *name_attr;
	void *name_device, *name_slow, *name_device_slow;
	void *kw_names[4]; /* stream, max_version, dl_device, copy */
	void *true_obj;
} xpy;
static volatile int xpy_attached;

static int64_t counts[PXE_COUNT_N];

static void count(int which) { __atomic_add_fetch(&counts[which], 1, __ATOMIC_RELAXED); }

int64_t pxe_count(int which) {
	if (which < 0 || which >= PXE_COUNT_N) return -1;
	return __atomic_load_n(&counts[which], __ATOMIC_SEQ_CST);
}

int pxe_attach(const uintptr_t *api, int n) {
	if (api == NULL || n != PXE_API_COUNT) return -1;
	for (int i = 0; i < n; i++)
		if (api[i] == 0 && i != PXE_API_TYPE_LOOKUP) return -1;
	if (__atomic_load_n(&xpy_attached, __ATOMIC_SEQ_CST)) return 0; /* one interpreter per process */
	_Static_assert(sizeof xpy == PXE_API_COUNT * sizeof(uintptr_t), "one slot per API entry");
	memcpy(&xpy, api, sizeof xpy); /* pointers and uintptr_t share their representation */
	/* The objects must live as long as the process: the module keeps them, we keep a reference. */
	for (int i = PXE_API_NONE; i < n; i++) xpy.incref((void *)api[i]);
	__atomic_store_n(&xpy_attached, 1, __ATOMIC_SEQ_CST);
	return 0;
}

const char *pxe_capsule_name(void) { return DLPG_EXCHANGE_API_CAPSULE_NAME; }

/* raise_go raises the error dlpackgo_export or dlpackgo_import wrote into err (see report). */
static void raise_go(const char *err) {
	char msg[600];
	snprintf(msg, sizeof msg, "dlpackgo: %s", err[0] ? err + 1 : "failed");
	xpy.err_set_string(err[0] == 'V' ? xpy.value_error : xpy.buffer_error, msg);
}

/* -- the producer ------------------------------------------------------------------------- */

/* tensor_handle returns the live handle of a dlpackgo.Tensor, or 0 with an exception set. */
static uintptr_t tensor_handle(void *obj) {
	void *h = xpy.get_attr(obj, xpy.name_handle);
	if (h == NULL) return 0;
	uintptr_t v = (uintptr_t)xpy.long_as_void_ptr(h);
	xpy.decref(h);
	if (v == 0 && xpy.err_occurred() == NULL)
		xpy.err_set_string(xpy.value_error, "dlpackgo: tensor was released");
	return v;
}

/* check_tensor refuses (TypeError) an object that is not a dlpackgo.Tensor. */
static int check_tensor(void *obj) {
	if (obj == NULL) {
		xpy.err_set_string(xpy.type_error, "dlpackgo: NULL object");
		return -1;
	}
	int ok = xpy.is_instance(obj, xpy.tensor_type);
	if (ok < 0) return -1;
	if (ok == 0) {
		xpy.err_set_string(xpy.type_error,
			"dlpackgo: the exchange API of dlpackgo.Tensor was given an object of another type");
		return -1;
	}
	return 0;
}

/*
 * sharer_of returns a new reference to obj's share builtin (making it on first use, in Go), to
 * False when the tensor must be copied to be exported, or NULL with an exception set.
 */
static void *sharer_of(void *obj) {
	void *share = xpy.get_attr(obj, xpy.name_share);
	if (share == NULL || share != xpy.none) return share;
	xpy.decref(share);
	uintptr_t h = tensor_handle(obj);
	if (h == 0) return NULL;
	void *fn = dlpackgo_sharer(h); /* new reference: the builtin, None, or NULL (exception) */
	if (fn == NULL) return NULL;
	if (fn == xpy.none) {
		xpy.decref(fn);
		fn = xpy.false_obj;
		xpy.incref(fn);
	}
	if (xpy.set_attr(obj, xpy.name_share, fn) != 0) {
		xpy.decref(fn);
		return NULL;
	}
	return fn;
}

/* anchor_capsule returns the self of obj's share builtin (a borrowed reference), or NULL with an
 * exception set when share is not one of ours. */
static void *anchor_capsule(void *share) {
	void *self = xpy.cfunction_get_self(share);
	if (self == NULL && xpy.err_occurred() == NULL)
		xpy.err_set_string(xpy.type_error, "dlpackgo: the tensor's _share is not the library's share builtin");
	return self;
}

static int x_from_py_object(void *obj, dlpg_managed_versioned **out) {
	if (out == NULL) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: managed_tensor_from_py_object_no_sync: out is NULL");
		return -1;
	}
	*out = NULL;
	if (check_tensor(obj) != 0) return -1;
	void *share = sharer_of(obj);
	if (share == NULL) return -1;
	void *m = NULL;
	if (share != xpy.false_obj) {
		void *self = anchor_capsule(share);
		m = self != NULL ? pxg_share_of(self) : NULL;
	} else {
		/* Only a copy can be exported: Go makes it (IS_COPIED), as __dlpack__(copy=None) does. */
		uintptr_t h = tensor_handle(obj);
		if (h != 0) {
			char err[512];
			err[0] = 0;
			m = dlpackgo_export(h, 1, 0, 0, 0, 1, err, sizeof err); /* no_sync */
			if (m == NULL) raise_go(err);
		}
	}
	xpy.decref(share);
	if (m == NULL) return -1;
	count(PXE_COUNT_EXPORT_API);
	*out = m;
	return 0;
}

static int x_dltensor_from_py_object(void *obj, dlpg_tensor *out) {
	if (out == NULL) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: dltensor_from_py_object_no_sync: out is NULL");
		return -1;
	}
	if (check_tensor(obj) != 0) return -1;
	void *share = sharer_of(obj);
	if (share == NULL) return -1;
	int rc = -1;
	if (share == xpy.false_obj) {
		if (tensor_handle(obj) != 0) /* else: released, and tensor_handle said so */
			xpy.err_set_string(xpy.buffer_error,
			"dlpackgo: this tensor is exported only as a copy (it is read-only or has negative "
			"strides), which a borrowed DLTensor cannot own: use managed_tensor_from_py_object_no_sync");
	} else {
		void *self = anchor_capsule(share);
		if (self != NULL) rc = pxg_share_view(self, (pxg_tensor *)out);
	}
	xpy.decref(share);
	if (rc == 0) count(PXE_COUNT_VIEW_API);
	return rc;
}

/* handle_to_tensor makes the dlpackgo.Tensor that adopts handle h (released on failure). */
static void *handle_to_tensor(uintptr_t h) {
	void *ph = xpy.long_from_void_ptr((void *)h);
	if (ph == NULL) {
		dlpackgo_release(h);
		return NULL;
	}
	void *t = xpy.call_function_obj_args(xpy.maker, ph, NULL);
	xpy.decref(ph);
	if (t == NULL) dlpackgo_release(h); /* nobody adopted it; a second release is a no-op */
	return t;
}

static int x_to_py_object(dlpg_managed_versioned *m, void **out) {
	if (out != NULL) *out = NULL;
	if (m == NULL) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: managed_tensor_to_py_object_no_sync: tensor is NULL");
		return -1;
	}
	if (out == NULL) {
		if (m->deleter != NULL) m->deleter(m); /* ownership was handed to us: let it go */
		xpy.err_set_string(xpy.value_error, "dlpackgo: managed_tensor_to_py_object_no_sync: out is NULL");
		return -1;
	}
	char err[512];
	err[0] = 0;
	uintptr_t h = dlpackgo_import(m, 1, err, sizeof err); /* runs m's deleter on failure */
	if (h == 0) {
		raise_go(err);
		return -1;
	}
	void *t = handle_to_tensor(h);
	if (t == NULL) return -1;
	count(PXE_COUNT_TO_PY);
	*out = t;
	return 0;
}

/* The allocator's tensors: one block, data aligned to ALLOC_ALIGN. */
enum { ALLOC_ALIGN = 256 };
static const int64_t alloc_max_bytes = (int64_t)1 << 46; /* far beyond any host, far from overflow */

static void alloc_deleter(dlpg_managed_versioned *self) {
	if (self == NULL) return;
	void *block = self->manager_ctx;
	self->manager_ctx = NULL;
	self->deleter = NULL;
	free(block);
	__atomic_sub_fetch(&counts[PXE_COUNT_LIVE_ALLOCS], 1, __ATOMIC_SEQ_CST);
}

static int alloc_fail(void *ctx, dlpg_set_error set_error, const char *kind, const char *msg) {
	if (set_error != NULL) set_error(ctx, kind, msg);
	return -1;
}

static int x_allocator(dlpg_tensor *proto, dlpg_managed_versioned **out, void *ctx, dlpg_set_error set_error) {
	char msg[256];
	if (out == NULL) return alloc_fail(ctx, set_error, "ValueError", "dlpackgo: allocator: out is NULL");
	*out = NULL;
	if (proto == NULL) return alloc_fail(ctx, set_error, "ValueError", "dlpackgo: allocator: prototype is NULL");
	if (proto->device.device_type != dlpg_kDLCPU) {
		snprintf(msg, sizeof msg, "dlpackgo: allocator: device type %d is not supported (CPU only)",
			(int)proto->device.device_type);
		return alloc_fail(ctx, set_error, "BufferError", msg);
	}
	int nd = proto->ndim;
	if (nd < 0 || nd > 64 || (nd > 0 && proto->shape == NULL)) {
		snprintf(msg, sizeof msg, "dlpackgo: allocator: ndim %d (with shape %s) is invalid", nd,
			proto->shape == NULL ? "NULL" : "set");
		return alloc_fail(ctx, set_error, "ValueError", msg);
	}
	dlpg_dtype dt = proto->dtype;
	if (dt.code > dlpg_kDLBcomplex || dt.bits == 0 || dt.lanes == 0) {
		snprintf(msg, sizeof msg, "dlpackgo: allocator: dtype (code %u, bits %u, lanes %u) is invalid",
			dt.code, dt.bits, dt.lanes);
		return alloc_fail(ctx, set_error, "ValueError", msg);
	}
	int64_t n = 1;
	for (int i = 0; i < nd; i++) {
		int64_t d = proto->shape[i];
		if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > alloc_max_bytes) {
			snprintf(msg, sizeof msg, "dlpackgo: allocator: shape[%d] = %lld is negative or too large",
				i, (long long)d);
			return alloc_fail(ctx, set_error, "ValueError", msg);
		}
	}
	int64_t bits, bytes;
	if (__builtin_mul_overflow(n, (int64_t)dt.bits * dt.lanes, &bits) || (bytes = (bits + 7) / 8) > alloc_max_bytes) {
		snprintf(msg, sizeof msg, "dlpackgo: allocator: %lld elements of %u bits are too large",
			(long long)n, dt.bits * dt.lanes);
		return alloc_fail(ctx, set_error, "MemoryError", msg);
	}
	size_t head = sizeof(dlpg_managed_versioned) + 2 * (size_t)nd * sizeof(int64_t);
	size_t total = head + ALLOC_ALIGN + (size_t)bytes;
	char *block = calloc(1, total); /* zeroed: nobody reads stale heap memory through it */
	if (block == NULL) {
		snprintf(msg, sizeof msg, "dlpackgo: allocator: out of memory for %zu bytes", total);
		return alloc_fail(ctx, set_error, "MemoryError", msg);
	}
	dlpg_managed_versioned *m = (dlpg_managed_versioned *)block;
	int64_t *shape = (int64_t *)(block + sizeof *m), *strides = shape + nd;
	int64_t stride = 1;
	for (int i = nd - 1; i >= 0; i--) {
		shape[i] = proto->shape[i];
		strides[i] = stride;
		stride *= shape[i] > 0 ? shape[i] : 1;
	}
	uintptr_t data = ((uintptr_t)(block + head) + ALLOC_ALIGN - 1) & ~(uintptr_t)(ALLOC_ALIGN - 1);
	m->version.major = 1;
	m->version.minor = 3;
	m->manager_ctx = block;
	m->deleter = alloc_deleter;
	m->flags = 0;
	m->dl_tensor.data = (void *)data;
	m->dl_tensor.device = proto->device;
	m->dl_tensor.ndim = nd;
	m->dl_tensor.dtype = dt;
	m->dl_tensor.shape = nd > 0 ? shape : NULL;
	m->dl_tensor.strides = nd > 0 ? strides : NULL;
	m->dl_tensor.byte_offset = 0;
	__atomic_add_fetch(&counts[PXE_COUNT_LIVE_ALLOCS], 1, __ATOMIC_SEQ_CST);
	count(PXE_COUNT_ALLOCS);
	*out = m;
	return 0;
}

static int x_current_work_stream(int32_t device_type, int32_t device_id, void **out) {
	(void)device_type;
	(void)device_id;
	if (out == NULL) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: current_work_stream: out is NULL");
		return -1;
	}
	*out = NULL;
	return 0;
}

static dlpg_exchange_api table = {
	{{1, 3}, NULL},
	x_allocator,
	x_from_py_object,
	x_to_py_object,
	x_dltensor_from_py_object,
	x_current_work_stream,
};

const void *pxe_api(void) { return &table; }

/* -- the consumer ------------------------------------------------------------------------- */

/* api_of returns the exchange table type(x) (or x itself, when is_type) publishes, if its
 * version is one we understand; NULL otherwise, with an exception set only where strict says so
 * (a broken attribute never crashes, and falls back when not strict). */
static const dlpg_exchange_api *api_of(void *x, int is_type, int strict) {
	void *capsule;
	if (is_type) {
		capsule = xpy.get_attr(x, xpy.name_attr);
	} else {
		void *type = xpy.type(x);
		if (type == NULL) return NULL;
		if (xpy.type_lookup != NULL) {
			/* the type's MRO, through its attribute cache: no AttributeError to make and clear
			 * for the many types without a table */
			capsule = xpy.type_lookup(type, xpy.name_attr);
			if (capsule != NULL) xpy.incref(capsule);
			else if (!strict) {
				xpy.decref(type);
				return NULL;
			}
		} else {
			capsule = xpy.get_attr(type, xpy.name_attr);
		}
		xpy.decref(type);
	}
	if (capsule == NULL) {
		xpy.err_clear();
		if (strict)
			xpy.err_set_string(xpy.type_error, "dlpackgo: the type has no " DLPG_EXCHANGE_API_ATTR);
		return NULL;
	}
	const dlpg_exchange_api_header *h = NULL;
	if (xpy.capsule_is_valid(capsule, DLPG_EXCHANGE_API_CAPSULE_NAME))
		h = xpy.capsule_get_pointer(capsule, DLPG_EXCHANGE_API_CAPSULE_NAME);
	xpy.decref(capsule);
	if (h == NULL) {
		if (xpy.err_occurred() != NULL) xpy.err_clear();
		if (strict)
			xpy.err_set_string(xpy.type_error, "dlpackgo: " DLPG_EXCHANGE_API_ATTR
				" is not a PyCapsule named \"" DLPG_EXCHANGE_API_CAPSULE_NAME "\"");
		return NULL;
	}
	uint32_t major = h->version.major, minor = h->version.minor;
	for (int hops = 0; h != NULL && h->version.major != 1 && hops < 16; hops++) h = h->prev_api;
	if (h == NULL || h->version.major != 1 || h->version.minor < 3) {
		if (strict) {
			char msg[200];
			snprintf(msg, sizeof msg, "dlpackgo: the exchange API's version %u.%u is not 1.x with x >= 3, "
				"and no table it links to is", major, minor);
			xpy.err_set_string(xpy.buffer_error, msg);
		}
		return NULL;
	}
	const dlpg_exchange_api *api = (const dlpg_exchange_api *)h;
	if (api->managed_tensor_from_py_object_no_sync == NULL || api->managed_tensor_to_py_object_no_sync == NULL) {
		if (strict)
			xpy.err_set_string(xpy.buffer_error, "dlpackgo: the exchange API lacks a required function");
		return NULL;
	}
	return api;
}

/* device_fits reports whether a device type and id from Python are int32s, as DLDevice's are
 * (a wider one would be cut into another device). */
static int device_fits(long long type, long long id) {
	return type >= INT32_MIN && type <= INT32_MAX && id >= INT32_MIN && id <= INT32_MAX;
}

static int host_accessible(int32_t device_type) {
	return device_type == dlpg_kDLCPU || device_type == dlpg_kDLCUDAHost || device_type == dlpg_kDLROCMHost;
}

/* take(x, strict): a pending import (numpy.c) of x's memory through type(x)'s exchange API, which
 * Go adopts on first use; None (not strict) when the API is missing, not understood, or x is not
 * host memory. */
static void *take(void *x, int strict) {
	const dlpg_exchange_api *api = api_of(x, 0, strict);
	if (api == NULL) {
		if (strict) return NULL;
		count(PXE_COUNT_IMPORT_FALLBACK);
		xpy.incref(xpy.none);
		return xpy.none;
	}
	dlpg_managed_versioned *m = NULL;
	if (api->managed_tensor_from_py_object_no_sync(x, &m) != 0 || m == NULL) {
		if (xpy.err_occurred() == NULL)
			xpy.err_set_string(xpy.buffer_error, "dlpackgo: the producer's managed_tensor_from_py_object_no_sync "
				"failed without saying why");
		if (m != NULL && m->deleter != NULL) m->deleter(m);
		return NULL;
	}
	/* only version and deleter are known fields of another major version: read the device of
	   1.x tensors only (pxg_pending_take refuses the others) */
	if (!strict && m->version.major == 1 && !host_accessible(m->dl_tensor.device.device_type)) {
		/* No stream synchronization here: __dlpack__ makes the producer synchronize. */
		if (m->deleter != NULL) m->deleter(m);
		count(PXE_COUNT_IMPORT_FALLBACK);
		xpy.incref(xpy.none);
		return xpy.none;
	}
	/* validated here, as Go would, and handed to Go on first use (a pending import) */
	void *ph = pxg_pending_take(m, 0);
	if (ph == NULL) return NULL;
	count(PXE_COUNT_IMPORT_API);
	return ph;
}

static void *take_auto(void *self, void *x) {
	(void)self;
	return take(x, 0);
}

static void *take_strict(void *self, void *x) {
	(void)self;
	return take(x, 1);
}

/* give(cls, tensor): a cls over a dlpackgo.Tensor's memory, made by cls's exchange API
 * (managed_tensor_to_py_object_no_sync) from our own managed_tensor_from_py_object_no_sync. */
static void *give(void *self, void *const *args, ssize nargs) {
	(void)self;
	if (nargs != 2) {
		xpy.err_set_string(xpy.type_error, "dlpackgo: give(cls, tensor) takes 2 arguments");
		return NULL;
	}
	const dlpg_exchange_api *api = api_of(args[0], 1, 1);
	if (api == NULL) return NULL;
	dlpg_managed_versioned *m = NULL;
	if (x_from_py_object(args[1], &m) != 0) return NULL;
	void *out = NULL;
	if (api->managed_tensor_to_py_object_no_sync(m, &out) != 0 || out == NULL) {
		/* the producer owns m now, whatever happened */
		if (xpy.err_occurred() == NULL)
			xpy.err_set_string(xpy.buffer_error, "dlpackgo: managed_tensor_to_py_object_no_sync failed "
				"without saying why");
		return NULL;
	}
	return out;
}

/* stream(cls, device_type, device_id): cls's current work stream on the device, as an int. */
static void *stream(void *self, void *const *args, ssize nargs) {
	(void)self;
	if (nargs != 3) {
		xpy.err_set_string(xpy.type_error, "dlpackgo: stream(cls, device_type, device_id) takes 3 arguments");
		return NULL;
	}
	const dlpg_exchange_api *api = api_of(args[0], 1, 1);
	if (api == NULL) return NULL;
	long long dt = xpy.long_as_long_long(args[1]), id = xpy.long_as_long_long(args[2]);
	if ((dt == -1 || id == -1) && xpy.err_occurred() != NULL) return NULL;
	if (!device_fits(dt, id)) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: stream_api: the device type or id is out of 32 bits");
		return NULL;
	}
	if (api->current_work_stream == NULL) {
		xpy.err_set_string(xpy.buffer_error, "dlpackgo: the exchange API has no current_work_stream");
		return NULL;
	}
	void *s = NULL;
	if (api->current_work_stream((int32_t)dt, (int32_t)id, &s) != 0) {
		if (xpy.err_occurred() == NULL)
			xpy.err_set_string(xpy.buffer_error, "dlpackgo: current_work_stream failed without saying why");
		return NULL;
	}
	return xpy.long_from_void_ptr(s);
}

/* The consumer's set_error for a producer's allocator: the Python exception the kind names (the
 * usual ones; RuntimeError for others), counted in ctx. */
static void alloc_set_error(void *ctx, const char *kind, const char *message) {
	void *exc = xpy.runtime_error;
	if (kind != NULL) {
		if (!strcmp(kind, "ValueError")) exc = xpy.value_error;
		else if (!strcmp(kind, "TypeError")) exc = xpy.type_error;
		else if (!strcmp(kind, "BufferError")) exc = xpy.buffer_error;
		else if (!strcmp(kind, "MemoryError")) exc = xpy.memory_error;
	}
	char msg[600];
	snprintf(msg, sizeof msg, "%s%s%s", exc == xpy.runtime_error && kind ? kind : "",
		exc == xpy.runtime_error && kind ? ": " : "", message ? message : "allocation failed");
	xpy.err_set_string(exc, msg);
	(*(int *)ctx)++;
}

/* allocate(cls, shape_address, ndim, code, bits, lanes, device_type, device_id): the handle of a
 * Go tensor over a new tensor of cls's allocator (shape_address: ndim int64 values). */
static void *allocate(void *self, void *const *args, ssize nargs) {
	(void)self;
	if (nargs != 8) {
		xpy.err_set_string(xpy.type_error, "dlpackgo: allocate_api takes 8 arguments");
		return NULL;
	}
	const dlpg_exchange_api *api = api_of(args[0], 1, 1);
	if (api == NULL) return NULL;
	long long v[7];
	for (int i = 0; i < 7; i++) {
		v[i] = xpy.long_as_long_long(args[i + 1]);
		if (v[i] == -1 && xpy.err_occurred() != NULL) return NULL;
	}
	if (v[1] < 0 || v[1] > 64 || (v[1] > 0 && v[0] == 0) || v[2] < 0 || v[2] > 255 || v[3] < 0 ||
	    v[3] > 255 || v[4] < 0 || v[4] > 65535) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: allocate_api: bad ndim or dtype");
		return NULL;
	}
	if (!device_fits(v[5], v[6])) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: allocate_api: the device type or id is out of 32 bits");
		return NULL;
	}
	if (api->managed_tensor_allocator == NULL) {
		xpy.err_set_string(xpy.buffer_error, "dlpackgo: the exchange API has no allocator");
		return NULL;
	}
	dlpg_tensor proto;
	memset(&proto, 0, sizeof proto);
	proto.ndim = (int32_t)v[1];
	proto.shape = v[1] > 0 ? (int64_t *)(uintptr_t)v[0] : NULL;
	proto.dtype.code = (uint8_t)v[2], proto.dtype.bits = (uint8_t)v[3], proto.dtype.lanes = (uint16_t)v[4];
	proto.device.device_type = (int32_t)v[5], proto.device.device_id = (int32_t)v[6];
	dlpg_managed_versioned *m = NULL;
	int errors = 0;
	if (api->managed_tensor_allocator(&proto, &m, &errors, alloc_set_error) != 0 || m == NULL) {
		if (errors == 0 && xpy.err_occurred() == NULL)
			xpy.err_set_string(xpy.buffer_error, "dlpackgo: the allocator failed without calling set_error");
		if (m != NULL && m->deleter != NULL) m->deleter(m);
		return NULL;
	}
	if (errors != 0) xpy.err_clear(); /* success after all: the tensor counts, not the message */
	char err[512];
	err[0] = 0;
	uintptr_t h = dlpackgo_import(m, 1, err, sizeof err); /* runs m's deleter on failure */
	if (h == 0) {
		raise_go(err);
		return NULL;
	}
	void *ph = xpy.long_from_void_ptr((void *)h);
	if (ph == NULL) dlpackgo_release(h);
	return ph;
}


static method_def defs[] = {
	{"take_api", (void *)take_auto, METH_O,
		"take_api(x) -> a pending import of x's memory (numpy.c), through type(x)'s DLPack exchange "
		"API; None when type(x) has none, one of another version, or x is not in host memory."},
	{"take_api_strict", (void *)take_strict, METH_O,
		"take_api_strict(x) -> take_api(x), raising instead of returning None."},
	{"give_api", (void *)give, METH_FASTCALL,
		"give_api(cls, tensor) -> a cls over the dlpackgo.Tensor's memory, made by cls's DLPack "
		"exchange API."},
	{"stream_api", (void *)stream, METH_FASTCALL,
		"stream_api(cls, device_type, device_id) -> cls's current work stream on the device (int)."},
	{"allocate_api", (void *)allocate, METH_FASTCALL,
		"allocate_api(cls, shape_address, ndim, code, bits, lanes, device_type, device_id) -> the "
		"handle of a Go tensor over a new tensor of cls's allocator."},
};

/* -- Tensor.__dlpack__ and __dlpack_device__ in C ---------------------------------------------
 *
 * NumPy's from_dlpack calls __dlpack_device__ and then __dlpack__ on the object: as Python methods
 * of dlpackgo.Tensor they cost more than the capsule itself. These are method descriptors of the
 * Tensor type (PyDescr_NewMethod) that do the common case in C: a tensor whose device is known,
 * and __dlpack__ with no stream, copy None or False and no dl_device, which makes a capsule of the
 * share builtin's anchor (pyexchange.c). Everything else calls the Python halves,
 * Tensor._dlpack_slow(stream, max_version, dl_device, copy) and Tensor._dlpack_device_slow(). */

#define PY_VECTORCALL_ARGUMENTS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))

/* keyword_index returns the index of keyword name in xpy.kw_names, or -1. */
static int keyword_index(void *name) {
	static const char *const ascii[4] = {"stream", "max_version", "dl_device", "copy"};
	for (int i = 0; i < 4; i++)
		if (name == xpy.kw_names[i]) return i; /* interned, the usual case */
	for (int i = 0; i < 4; i++)
		if (xpy.unicode_compare_ascii(name, ascii[i]) == 0) return i;
	return -1;
}

/* versioned_of returns 1 if max_version asks for a versioned capsule (major >= 1), 0 if not, -1
 * (no exception) if it is not a sequence of ints: the Python half then says what is wrong. */
static int versioned_of(void *max_version) {
	if (max_version == xpy.none) return 0;
	void *major = xpy.sequence_get_item(max_version, 0);
	if (major == NULL) {
		xpy.err_clear();
		return -1;
	}
	long long v = xpy.long_as_long_long(major);
	xpy.decref(major);
	if (v == -1 && xpy.err_occurred() != NULL) {
		xpy.err_clear();
		return -1;
	}
	return v >= 1;
}

static void *dunder_dlpack(void *self, void *const *args, size_t nargsf, void *kwnames) {
	size_t nargs = nargsf & ~PY_VECTORCALL_ARGUMENTS_OFFSET;
	if (nargs != 0) {
		xpy.err_set_string(xpy.type_error, "__dlpack__() takes no positional arguments");
		return NULL;
	}
	void *kw[4] = {xpy.none, xpy.none, xpy.none, xpy.none};
	ssize nk = kwnames != NULL ? xpy.tuple_size(kwnames) : 0;
	for (ssize i = 0; i < nk; i++) {
		int k = keyword_index(xpy.tuple_get_item(kwnames, i));
		if (k < 0) {
			xpy.err_set_string(xpy.type_error, "__dlpack__() got an unexpected keyword argument");
			return NULL;
		}
		kw[k] = args[i];
	}
	int versioned = versioned_of(kw[1]);
	if (kw[0] == xpy.none && (kw[3] == xpy.none || kw[3] == xpy.false_obj) && kw[2] == xpy.none &&
		versioned >= 0) {
		void *share = sharer_of(self);
		if (share == NULL) return NULL;
		if (share != xpy.false_obj) {
			void *anchor = anchor_capsule(share);
			void *capsule = anchor != NULL ? pxg_share_capsule(anchor, versioned) : NULL;
			xpy.decref(share);
			return capsule;
		}
		xpy.decref(share);
	}
	void *slow = xpy.get_attr(self, xpy.name_slow);
	if (slow == NULL) return NULL;
	void *r = xpy.call_function_obj_args(slow, kw[0], kw[1], kw[2], kw[3], NULL);
	xpy.decref(slow);
	return r;
}

static void *dunder_dlpack_device(void *self, void *unused) {
	(void)unused;
	void *dev = xpy.get_attr(self, xpy.name_device);
	if (dev == NULL || dev != xpy.none) return dev;
	xpy.decref(dev);
	void *slow = xpy.get_attr(self, xpy.name_device_slow);
	if (slow == NULL) return NULL;
	void *r = xpy.call_function_obj_args(slow, NULL);
	xpy.decref(slow);
	return r;
}

static method_def protocol_defs[] = {
	{"__dlpack__", (void *)dunder_dlpack, METH_FASTCALL | METH_KEYWORDS,
		"__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
		"An unused DLPack capsule of the tensor: shared, or copied as copy and the tensor require "
		"(see the module documentation)."},
	{"__dlpack_device__", (void *)dunder_dlpack_device, METH_NOARGS,
		"__dlpack_device__($self, /)\n--\n\nThe DLPack device (type, id) of the tensor."},
};

void *pxe_protocol_method(int which) {
	if (which < 0 || which >= (int)(sizeof protocol_defs / sizeof protocol_defs[0])) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: no such method");
		return NULL;
	}
	return xpy.descr_new_method(xpy.tensor_type, &protocol_defs[which]);
}

/* pxe_builtin returns a new reference to builtin which (0 take_api, 1 take_api_strict,
 * 2 give_api, 3 stream_api, 4 allocate_api), or NULL with an exception set. The caller holds the GIL. */
void *pxe_builtin(int which) {
	if (which < 0 || which >= (int)(sizeof defs / sizeof defs[0])) {
		xpy.err_set_string(xpy.value_error, "dlpackgo: no such builtin");
		return NULL;
	}
	return xpy.cfunction_new_ex(&defs[which], NULL, NULL);
}
