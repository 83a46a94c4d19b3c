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
 */
#include <stdlib.h>
#include <string.h>

#include "pyexchange.h"

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
} py;
static volatile int py_attached; /* the Python module called pxg_set_pyapi */
static volatile int py_exiting;  /* atexit ran: the interpreter is going away */

static const char *const names[] = {
	"dltensor_versioned", "dltensor", "used_dltensor_versioned", "used_dltensor",
};

int pxg_attach(uintptr_t capsule_is_valid, uintptr_t capsule_get_pointer, uintptr_t err_fetch,
	uintptr_t err_restore, uintptr_t gil_ensure, uintptr_t gil_release, uintptr_t is_initialized,
	uintptr_t is_finalizing) {
	if (!capsule_is_valid || !capsule_get_pointer || !err_fetch || !err_restore || !gil_ensure ||
	    !gil_release || !is_initialized)
		return -1;
	if (__atomic_load_n(&py_attached, __ATOMIC_SEQ_CST)) return 0; /* one interpreter per process */
	py.capsule_is_valid = (int (*)(void *, const char *))capsule_is_valid;
	py.capsule_get_pointer = (void *(*)(void *, const char *))capsule_get_pointer;
	py.err_fetch = (void (*)(void **, void **, void **))err_fetch;
	py.err_restore = (void (*)(void *, void *, void *))err_restore;
	py.gil_ensure = (int (*)(void))gil_ensure;
	py.gil_release = (void (*)(int))gil_release;
	py.is_initialized = (int (*)(void))is_initialized;
	py.is_finalizing = (int (*)(void))is_finalizing;
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
 * arrays, which live until m's deleter runs) whose deleter runs m's deleter with the GIL held.
 * It returns m itself when m has no deleter, and NULL when out of memory.
 */
pxg_managed_versioned *pxg_guard_versioned(pxg_managed_versioned *m) {
	if (m->deleter == NULL) return m;
	pxg_managed_versioned *w = malloc(sizeof *w);
	if (w == NULL) return NULL;
	memcpy(w, m, sizeof *w);
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

void pxg_delete_guarded_legacy(pxg_managed *m) { call_legacy_with_gil(m); }
