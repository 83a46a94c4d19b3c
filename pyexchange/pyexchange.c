/*
 * pyexchange.c: what must be C in the Python exchange.
 *
 * 1. The capsule destructor. A capsule may die while the interpreter has an exception pending
 *    (NumPy 1.24 drops the capsule of a bool tensor right after raising BufferError); a
 *    destructor written in Python with ctypes would see that exception, fail, and swallow it. This
 *    one saves and restores the pending exception and calls the deleter only while the capsule
 *    still has its unused name, as the DLPack Python protocol requires.
 *
 * 2. The GIL guard. Deleters made by Python producers (NumPy 1.24 frees with PyMem_Free and
 *    drops a reference without taking the GIL) must run with the GIL held, but Go may release an
 *    imported tensor from any thread (a garbage-collector cleanup, a goroutine). Imports from
 *    Python are therefore wrapped in a managed tensor of our own whose deleter takes the GIL,
 *    calls the producer's deleter and frees the wrapper. Once the interpreter is finalizing,
 *    producer deleters are skipped (their memory belongs to a dying interpreter anyway).
 *
 * 3. The sharer: the fast path of Tensor.__dlpack__. Asking Go for every export costs two
 *    crossings into the Go runtime (export, then deleter) and a ctypes call, ten times what
 *    NumPy's own export costs. A tensor that can be shared is therefore exported once, to C: the
 *    anchor holds that template export and a count of references, and a Python builtin function
 *    (made here with PyCFunction_NewEx, bound to a capsule that owns one reference) makes each
 *    further capsule in C: a small managed tensor that copies the template's descriptor (shape
 *    and strides stay the template's) and holds a reference. Its deleter, also C, frees it and
 *    drops the reference; the last one runs the template's deleter, which lets Go release its
 *    view. Nothing on the way enters Go, so an export costs a builtin call, a malloc and a
 *    capsule.
 *
 * 4. The taker: Library.from_capsule's work in one builtin call. It checks the capsule's name,
 *    renames it "used_...", validates the managed tensor as Go would (dlpack_validate.h) and
 *    returns a pending import (numpy.c) that Go adopts on first use, instead of four ctypes calls
 *    into the C API and one into Go.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyexchange.h"
#include "call.h" /* pxg_pending_take */

/* Python C API entry points (PyObject* is void* here). */
static struct {
	int (*capsule_is_valid)(void *capsule, const char *name);
	void *(*capsule_get_pointer)(void *capsule, const char *name);
	void (*err_fetch)(void **type, void **value, void **traceback);
	void (*err_restore)(void *type, void *value, void *traceback);
	int (*gil_ensure)(void);
	void (*gil_release)(int state);
	int (*is_initialized)(void);
	int (*is_finalizing)(void); /* may be NULL */
	void *(*capsule_new)(void *pointer, const char *name, void (*destructor)(void *));
	void *(*cfunction_new_ex)(void *def, void *self, void *module);
	void (*incref)(void *o);
	void (*decref)(void *o);
	void *(*err_no_memory)(void);
	int (*capsule_set_name)(void *capsule, const char *name);
	void *(*long_from_void_ptr)(void *p);
	void (*err_set_string)(void *type, const char *message);
	void *true_obj, *none_obj, *type_error, *value_error, *buffer_error;
} py;
static volatile int py_attached; /* the Python module called pxg_attach */
static volatile int py_exiting;  /* atexit ran: the interpreter is going away */

static const char *const names[] = {
	"dltensor_versioned", "dltensor", "used_dltensor_versioned", "used_dltensor",
};

int pxg_attach(const uintptr_t *api, int n) {
	if (api == NULL || n != PXG_API_COUNT) return -1;
	for (int i = 0; i < n; i++)
		if (api[i] == 0 && i != PXG_API_IS_FINALIZING) return -1;
	if (__atomic_load_n(&py_attached, __ATOMIC_SEQ_CST)) return 0; /* one interpreter per process */
	py.capsule_is_valid = (int (*)(void *, const char *))api[PXG_API_CAPSULE_IS_VALID];
	py.capsule_get_pointer = (void *(*)(void *, const char *))api[PXG_API_CAPSULE_GET_POINTER];
	py.err_fetch = (void (*)(void **, void **, void **))api[PXG_API_ERR_FETCH];
	py.err_restore = (void (*)(void *, void *, void *))api[PXG_API_ERR_RESTORE];
	py.gil_ensure = (int (*)(void))api[PXG_API_GIL_ENSURE];
	py.gil_release = (void (*)(int))api[PXG_API_GIL_RELEASE];
	py.is_initialized = (int (*)(void))api[PXG_API_IS_INITIALIZED];
	py.is_finalizing = (int (*)(void))api[PXG_API_IS_FINALIZING];
	py.capsule_new = (void *(*)(void *, const char *, void (*)(void *)))api[PXG_API_CAPSULE_NEW];
	py.cfunction_new_ex = (void *(*)(void *, void *, void *))api[PXG_API_CFUNCTION_NEW_EX];
	py.incref = (void (*)(void *))api[PXG_API_INCREF];
	py.decref = (void (*)(void *))api[PXG_API_DECREF];
	py.err_no_memory = (void *(*)(void))api[PXG_API_ERR_NO_MEMORY];
	py.capsule_set_name = (int (*)(void *, const char *))api[PXG_API_CAPSULE_SET_NAME];
	py.long_from_void_ptr = (void *(*)(void *))api[PXG_API_LONG_FROM_VOID_PTR];
	py.err_set_string = (void (*)(void *, const char *))api[PXG_API_ERR_SET_STRING];
	py.true_obj = (void *)api[PXG_API_TRUE];
	py.none_obj = (void *)api[PXG_API_NONE];
	py.type_error = (void *)api[PXG_API_EXC_TYPE_ERROR];
	py.value_error = (void *)api[PXG_API_EXC_VALUE_ERROR];
	py.buffer_error = (void *)api[PXG_API_EXC_BUFFER_ERROR];
	__atomic_store_n(&py_attached, 1, __ATOMIC_SEQ_CST);
	return 0;
}

void pxg_python_exiting(void) { __atomic_store_n(&py_exiting, 1, __ATOMIC_SEQ_CST); }

int pxg_python_attached(void) { return __atomic_load_n(&py_attached, __ATOMIC_SEQ_CST); }

const char *pxg_name(int which) {
	if (which < 0 || which > PXG_NAME_USED_LEGACY) return NULL;
	return names[which];
}

static void capsule_destructor(void *capsule) {
	void *type = NULL, *value = NULL, *tb = NULL;
	py.err_fetch(&type, &value, &tb);
	if (py.capsule_is_valid(capsule, names[PXG_NAME_VERSIONED])) {
		pxg_managed_versioned *m = py.capsule_get_pointer(capsule, names[PXG_NAME_VERSIONED]);
		if (m != NULL && m->deleter != NULL) m->deleter(m);
	} else if (py.capsule_is_valid(capsule, names[PXG_NAME_LEGACY])) {
		pxg_managed *m = py.capsule_get_pointer(capsule, names[PXG_NAME_LEGACY]);
		if (m != NULL && m->deleter != NULL) m->deleter(m);
	}
	/* any other name: consumed ("used_..."), nothing is ours to free */
	py.err_restore(type, value, tb);
}

uintptr_t pxg_capsule_destructor_addr(void) { return (uintptr_t)capsule_destructor; }

/* The data address of every empty host tensor this package exports: PyTorch 1.13 never calls
 * the deleter of a tensor whose data is NULL. Nothing is ever read or written there. */
static _Alignas(64) unsigned char empty_data[64];

void *pxg_empty_data(void) { return empty_data; }

/* python_alive reports whether a producer deleter may still enter the interpreter. */
static int python_alive(void) {
	if (__atomic_load_n(&py_exiting, __ATOMIC_SEQ_CST)) return 0;
	if (!py.is_initialized()) return 0;
	if (py.is_finalizing != NULL && py.is_finalizing()) return 0;
	return 1;
}

static void call_versioned_with_gil(pxg_managed_versioned *m) {
	if (m->deleter == NULL || !python_alive()) return;
	int st = py.gil_ensure();
	m->deleter(m);
	py.gil_release(st);
}

static void call_legacy_with_gil(pxg_managed *m) {
	if (m->deleter == NULL || !python_alive()) return;
	int st = py.gil_ensure();
	m->deleter(m);
	py.gil_release(st);
}

static void guard_deleter_versioned(pxg_managed_versioned *self) {
	pxg_managed_versioned *orig = self->manager_ctx;
	free(self);
	call_versioned_with_gil(orig);
}

static void guard_deleter_legacy(pxg_managed *self) {
	pxg_managed *orig = self->manager_ctx;
	free(self);
	call_legacy_with_gil(orig);
}

/*
 * pxg_guard_versioned returns a managed tensor with m's descriptor (the same shape and stride
 * arrays, which live until m's deleter runs) whose deleter runs m's deleter with the GIL held; of
 * a tensor of another major version than 1 it copies the version only. It returns m itself when
 * m has no deleter, and NULL when out of memory.
 */
pxg_managed_versioned *pxg_guard_versioned(pxg_managed_versioned *m) {
	if (m->deleter == NULL) return m;
	pxg_managed_versioned *w = malloc(sizeof *w);
	if (w == NULL) return NULL;
	if (m->version.major == 1) {
		memcpy(w, m, sizeof *w);
	} else {
		/* another major version need have no field past the deleter: copy only the version,
		   which the import refuses (running the deleter, through this guard) */
		memset(w, 0, sizeof *w);
		w->version = m->version;
	}
	w->manager_ctx = m;
	w->deleter = guard_deleter_versioned;
	return w;
}

pxg_managed *pxg_guard_legacy(pxg_managed *m) {
	if (m->deleter == NULL) return m;
	pxg_managed *w = malloc(sizeof *w);
	if (w == NULL) return NULL;
	memcpy(w, m, sizeof *w);
	w->manager_ctx = m;
	w->deleter = guard_deleter_legacy;
	return w;
}

void pxg_delete_guarded_versioned(pxg_managed_versioned *m) { call_versioned_with_gil(m); }

void pxg_delete(void *m, int legacy) {
	if (legacy) {
		pxg_managed *l = m;
		if (l->deleter != NULL) l->deleter(l);
	} else {
		pxg_managed_versioned *v = m;
		if (v->deleter != NULL) v->deleter(v);
	}
}

void pxg_with_gil(void (*fn)(void *), void *arg) {
	if (!python_alive()) return;
	int st = py.gil_ensure();
	fn(arg);
	py.gil_release(st);
}

void pxg_delete_guarded_legacy(pxg_managed *m) { call_legacy_with_gil(m); }

/* -- the sharer (3.) ------------------------------------------------------------------------ */

typedef struct {
	int64_t refs;                /* the sharer's capsule, plus one per live share */
	pxg_managed_versioned *tmpl; /* the export Go made; its deleter lets Go go */
} anchor;

static int64_t live_anchors, live_shares;
static const char anchor_name[] = "dlpackgo.anchor";

int64_t pxg_live_anchors(void) { return __atomic_load_n(&live_anchors, __ATOMIC_SEQ_CST); }

int64_t pxg_live_shares(void) { return __atomic_load_n(&live_shares, __ATOMIC_SEQ_CST); }

void *pxg_none(void) {
	py.incref(py.none_obj);
	return py.none_obj;
}

static void anchor_unref(anchor *a) {
	if (__atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
	pxg_managed_versioned *t = a->tmpl;
	free(a);
	__atomic_sub_fetch(&live_anchors, 1, __ATOMIC_SEQ_CST);
	if (t->deleter != NULL) t->deleter(t);
}

/* The deleters of shares: any thread, any time, exactly once (the consumer's promise). */
static void share_done(void *self, anchor *a) {
	free(self);
	__atomic_sub_fetch(&live_shares, 1, __ATOMIC_SEQ_CST);
	anchor_unref(a);
}

static void share_deleter_versioned(pxg_managed_versioned *self) { share_done(self, self->manager_ctx); }

static void share_deleter_legacy(pxg_managed *self) { share_done(self, self->manager_ctx); }

static void anchor_capsule_destructor(void *capsule) {
	anchor *a = py.capsule_get_pointer(capsule, anchor_name);
	if (a != NULL) anchor_unref(a);
}

/* share_versioned_init makes v a versioned share of a's template (the counts included). */
static void share_versioned_init(pxg_managed_versioned *v, anchor *a) {
	memcpy(v, a->tmpl, sizeof *v);
	v->manager_ctx = a;
	v->deleter = share_deleter_versioned;
}

/* share(versioned): the builtin. self is the anchor's capsule; versioned is True for a
 * "dltensor_versioned" capsule, anything else for a legacy "dltensor" one. */
static void *share(void *self, void *versioned) {
	anchor *a = py.capsule_get_pointer(self, anchor_name);
	if (a == NULL) return NULL; /* GetPointer set the exception */
	void *m;
	const char *name;
	if (versioned == py.true_obj) {
		pxg_managed_versioned *v = malloc(sizeof *v);
		if (v == NULL) return py.err_no_memory();
		share_versioned_init(v, a);
		m = v, name = names[PXG_NAME_VERSIONED];
	} else {
		pxg_managed *l = malloc(sizeof *l);
		if (l == NULL) return py.err_no_memory();
		l->dl_tensor = a->tmpl->dl_tensor;
		l->manager_ctx = a;
		l->deleter = share_deleter_legacy;
		m = l, name = names[PXG_NAME_LEGACY];
	}
	__atomic_add_fetch(&a->refs, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&live_shares, 1, __ATOMIC_SEQ_CST);
	void *capsule = py.capsule_new(m, name, capsule_destructor);
	if (capsule == NULL) share_done(m, a); /* the exception is set; nobody else has m */
	return capsule;
}

void *pxg_share_capsule(void *anchor_capsule, int versioned) {
	return share(anchor_capsule, versioned ? py.true_obj : py.none_obj);
}

/*
 * For the C exchange API (exchange_api.c), which has no capsule to make: pxg_share_of returns a
 * new versioned share of the anchor held by the capsule anchor_capsule (the self of a share
 * builtin), and pxg_share_view copies the template's descriptor into out, without a reference
 * (it lives as long as the anchor). Both set a Python exception and fail (NULL, -1) on a capsule
 * that is not an anchor, or when out of memory.
 */
pxg_managed_versioned *pxg_share_of(void *anchor_capsule) {
	anchor *a = py.capsule_get_pointer(anchor_capsule, anchor_name);
	if (a == NULL) return NULL;
	pxg_managed_versioned *v = malloc(sizeof *v);
	if (v == NULL) return py.err_no_memory();
	share_versioned_init(v, a);
	__atomic_add_fetch(&a->refs, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&live_shares, 1, __ATOMIC_SEQ_CST);
	return v;
}

int pxg_share_view(void *anchor_capsule, pxg_tensor *out) {
	anchor *a = py.capsule_get_pointer(anchor_capsule, anchor_name);
	if (a == NULL) return -1;
	*out = a->tmpl->dl_tensor;
	return 0;
}


static method_def share_def = {
	"share", (void *)share, METH_O,
	"share(versioned) -> an unused DLPack capsule of this Go tensor, without entering Go.",
};

/*
 * pxg_sharer_new adopts tmpl, a versioned export of a tensor that may be shared, and returns a
 * new reference to the builtin share, bound to an anchor of tmpl. On failure it runs tmpl's
 * deleter and returns NULL with a Python exception set. The caller holds the GIL.
 *
 * tmpl may be a copy Go made for it (a function's read-only or negatively strided result,
 * call.c), flagged IS_COPIED. Every share of it aliases that one copy, so no share may promise
 * its consumer the memory alone: the flag is cleared here, once, and the shares copy the
 * template's flags as they are (READ_ONLY stays).
 */
void *pxg_sharer_new(pxg_managed_versioned *tmpl) {
	tmpl->flags &= ~DLPG_FLAG_IS_COPIED;
	anchor *a = malloc(sizeof *a);
	if (a == NULL) {
		if (tmpl->deleter != NULL) tmpl->deleter(tmpl);
		return py.err_no_memory();
	}
	a->refs = 1;
	a->tmpl = tmpl;
	__atomic_add_fetch(&live_anchors, 1, __ATOMIC_SEQ_CST);
	void *capsule = py.capsule_new(a, anchor_name, anchor_capsule_destructor);
	if (capsule == NULL) {
		anchor_unref(a);
		return NULL;
	}
	void *fn = py.cfunction_new_ex(&share_def, capsule, NULL);
	py.decref(capsule); /* fn holds it now, or nobody does and its destructor lets go */
	return fn;
}

/* -- the taker (4.) ------------------------------------------------------------------------- */

/* take(capsule) -> a pending import of the capsule's tensor: the builtin. It checks the capsule's
 * name, renames it used, and validates the managed tensor in C, as Go would (dlpack_validate.h);
 * Go adopts it on first use (numpy.c). On a refusal it runs the producer's deleter and raises. */
static void *take(void *self, void *capsule) {
	(void)self;
	int v; /* index of the unused name: PXG_NAME_VERSIONED or PXG_NAME_LEGACY */
	if (py.capsule_is_valid(capsule, names[PXG_NAME_VERSIONED]))
		v = PXG_NAME_VERSIONED;
	else if (py.capsule_is_valid(capsule, names[PXG_NAME_LEGACY]))
		v = PXG_NAME_LEGACY;
	else {
		py.err_set_string(py.type_error,
			"dlpackgo: expected an unused 'dltensor' or 'dltensor_versioned' capsule");
		return NULL;
	}
	void *p = py.capsule_get_pointer(capsule, names[v]); /* never NULL in a valid capsule */
	if (p == NULL) return NULL;
	int used = v == PXG_NAME_VERSIONED ? PXG_NAME_USED_VERSIONED : PXG_NAME_USED_LEGACY;
	if (py.capsule_set_name(capsule, names[used]) != 0) return NULL;
	return pxg_pending_take(p, v == PXG_NAME_LEGACY);
}

static method_def take_def = {
	"take", (void *)take, METH_O,
	"take(capsule) -> a pending import of the unused DLPack capsule's tensor (Go adopts it on first use).",
};

/* pxg_taker_new returns a new reference to the builtin take (NULL with an exception set when
 * out of memory). The caller holds the GIL. */
void *pxg_taker_new(void) { return py.cfunction_new_ex(&take_def, NULL, NULL); }
