/*
 * call.c: the builtin through which Python calls a registered Go function (register.go).
 *
 * dlpackgo_function(id, python_fn) makes the dlpackgo.GoFunction of a registered function (see
 * "the function object" below): CPython calls it through vectorcall, and it takes the common
 * calls in C, handing the rest to python_fn, the generated Python wrapper.
 *
 * dlpackgo_caller(id) makes one builtin per registered function, bound to a capsule of the
 * function's pxg_fn (its id, parameter and result kinds, names). Called as
 * builtin(handles, *args) from the generated Python wrapper (args: for each tensor parameter a
 * NumPy array, read by numpy.c or else asked for its capsule, an unused DLPack capsule, or the
 * handle of a dlpackgo.Tensor; the Python value for each other parameter), it
 *
 *   1. converts every argument, checking its type: a TypeError here means Go never ran and
 *      every capsule is still unused (its own destructor frees it); a NumPy array is read onto
 *      this function's stack (numpy.c's pxg_np_arg), taking a reference to the array;
 *   2. renames the capsules "used_...", wraps each managed tensor in a guard of ours (below);
 *   3. releases the GIL and calls dlpackgo_call, one crossing into Go that imports the
 *      tensors, calls the function, releases the imports and exports the results;
 *   4. takes the GIL back, runs the producer deleters that became due during the call, and
 *      builds the results or raises the error Go reported.
 *
 * The guard: the producers of the arguments (NumPy, PyTorch) must run their deleters with the
 * GIL held, while Go lets go of an argument at the end of the call, without it. A guard's
 * deleter that runs on the calling thread during the call (the common case: the function kept
 * no view) is put on this thread's list and run in step 4, with the GIL taken back anyway; on
 * any other thread, or later, it takes the GIL itself (pxg_delete_guarded_*).
 *
 * The releaser: Tensor.release's builtin, dlpackgo_release with the GIL held, instead of a ctypes
 * call that lets the GIL go and makes the producer's deleter take it back.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "pyexchange.h"
#include "_cgo_export.h" /* dlpackgo_call, dlpackgo_release */

static struct {
	void *(*save_thread)(void);
	void (*restore_thread)(void *tstate);
	long long (*long_as_ll)(void *o);
	unsigned long long (*long_as_ull)(void *o);
	double (*float_as_double)(void *o);
	const char *(*unicode_as_utf8_and_size)(void *o, intptr_t *size);
	void *(*err_occurred)(void);
	void *(*err_format)(void *exc, const char *fmt, ...);
	void (*err_set_string)(void *exc, const char *msg);
	int (*err_exception_matches)(void *exc);
	void *(*long_from_ll)(long long v);
	void *(*long_from_ull)(unsigned long long v);
	void *(*float_from_double)(double v);
	void *(*unicode_decode_utf8)(const char *s, intptr_t n, const char *errors);
	void *(*tuple_new)(intptr_t n);
	int (*tuple_set_item)(void *t, intptr_t i, void *o);
	void *(*capsule_new)(void *p, const char *name, void (*destructor)(void *));
	int (*capsule_is_valid)(void *c, const char *name);
	void *(*capsule_get_pointer)(void *c, const char *name);
	int (*capsule_set_name)(void *c, const char *name);
	void *(*cfunction_new_ex)(void *def, void *self, void *module);
	void (*incref)(void *o);
	void (*decref)(void *o);
	void *(*err_no_memory)(void);
	void *(*number_index)(void *o);
	void *(*object_type)(void *o);
	void *(*object_get_attr_string)(void *o, const char *name);
	void *(*call_function_obj_args)(void *callable, ...);
	void *(*type_from_spec)(void *spec);
	void *(*type_generic_alloc)(void *type, intptr_t n);
	void *(*type_get_slot)(void *type, int slot);
	void (*gc_untrack)(void *o);
	void *(*vectorcall_call)(void *callable, void *tuple, void *dict);
	void *(*object_vectorcall)(void *callable, void *const *args, size_t nargsf, void *kwnames);
	int (*object_is_true)(void *o);
	void *(*object_get_attr)(void *o, void *name);
	void *true_obj, *false_obj, *none_obj, *type_error, *overflow_error;
	void *go_error, *go_value_error, *go_type_error, *go_buffer_error, *go_memory_error, *go_panic;
	void *capsule_of;
	void *tensor_type; /* dlpackgo.Tensor */
	void *handle_name; /* "_handle", interned */
} cp;
static volatile int cp_attached;

int pxg_call_attach(const uintptr_t *api, int n) {
	if (api == NULL || n != PXG_CAPI_COUNT) return -1;
	for (int i = 0; i < n; i++) /* PyObject_Vectorcall is exported from Python 3.11 on */
		if (api[i] == 0 && i != PXG_CAPI_OBJECT_VECTORCALL) return -1;
	if (__atomic_load_n(&cp_attached, __ATOMIC_SEQ_CST)) return 0;
	void **dst = (void **)&cp;
	/* cp is PXG_CAPI_COUNT pointers in the order of the enum */
	_Static_assert(sizeof cp == PXG_CAPI_COUNT * sizeof(void *), "cp matches the API table");
	for (int i = 0; i < n; i++) memcpy(&dst[i], &api[i], sizeof(void *));
	__atomic_store_n(&cp_attached, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* -- the guard ------------------------------------------------------------------------------ */

#define PENDING_MAX 64

static __thread int in_call; /* this thread is in dlpackgo_call, its GIL released */
static __thread struct {
	void (*fn)(void *);
	void *arg;
} pending[PENDING_MAX];
static __thread int npending;

void pxg_release_with_gil(void (*fn)(void *), void *arg) {
	if (in_call && npending < PENDING_MAX) {
		pending[npending].fn = fn;
		pending[npending++].arg = arg;
		return;
	}
	pxg_with_gil(fn, arg);
}

/* run_pending runs the releases deferred on this thread; the caller holds the GIL. */
static void run_pending(void) {
	while (npending > 0) {
		int i = --npending;
		pending[i].fn(pending[i].arg);
	}
}

static void delete_versioned(void *p) { pxg_delete(p, 0); }

static void delete_legacy(void *p) { pxg_delete(p, 1); }

static void guard_deleter_v(pxg_managed_versioned *self) {
	void *orig = self->manager_ctx;
	free(self);
	pxg_release_with_gil(delete_versioned, orig);
}

static void guard_deleter_l(pxg_managed *self) {
	void *orig = self->manager_ctx;
	free(self);
	pxg_release_with_gil(delete_legacy, orig);
}

/* -- the call builtin ----------------------------------------------------------------------- */

static const char fn_name[] = "dlpackgo.function";

static const char *kind_name(int k) {
	switch (k) {
	case PXG_K_TENSOR: return "an object with __dlpack__";
	case PXG_K_INT: return "int";
	case PXG_K_UINT: return "int >= 0";
	case PXG_K_FLOAT: return "float";
	case PXG_K_BOOL: return "bool";
	case PXG_K_STRING: return "str";
	}
	return "?";
}

/* arg_type_error replaces any pending exception with a TypeError that names the parameter and
 * the type of what was passed. It returns NULL. */
static void *arg_type_error(const pxg_fn *fn, int i, void *obj) {
	const char *tname = "?";
	void *type = cp.object_type(obj), *name = NULL;
	if (type != NULL) name = cp.object_get_attr_string(type, "__name__");
	if (name != NULL) {
		intptr_t n;
		const char *s = cp.unicode_as_utf8_and_size(name, &n);
		if (s != NULL) tname = s;
	}
	cp.err_format(cp.type_error, "%s() argument %d (%s) must be %s, not %s", fn->name, i + 1,
		fn->pnames[i], kind_name(fn->params[i]), tname);
	if (name != NULL) cp.decref(name);
	if (type != NULL) cp.decref(type);
	return NULL;
}

/* exception_of returns the Python exception class for a report kind of call.go. */
static void *exception_of(char kind) {
	switch (kind) {
	case 'V': return cp.go_value_error;
	case 'T': return cp.go_type_error;
	case 'B': return cp.go_buffer_error;
	case 'M': return cp.go_memory_error;
	case 'P': return cp.go_panic;
	case 'O': return cp.overflow_error;
	case 'A': return cp.type_error;
	}
	return cp.go_error;
}

/* drop_result lets go of result r that no Python object took. */
static void drop_result(int kind, pxg_value *r) {
	if (kind == PXG_K_TENSOR) {
		if (r->n == 1) { /* a handle */
			dlpackgo_release((uintptr_t)r->u);
		} else if (r->p != NULL) {
			pxg_managed_versioned *m = r->p;
			if (m->deleter != NULL) m->deleter(m);
		}
	} else if (kind == PXG_K_STRING) {
		free(r->p);
	}
	r->p = NULL;
}

/* -- torch results ----------------------------------------------------------------------------
 *
 * A Library that returns torch tensors gets a function's host result as torch's own
 * torch._C._from_dlpack of a legacy "dltensor" capsule made here, over the export's memory (no
 * copy), instead of a NumPy array made in C and then torch.from_numpy: one tensor object built
 * instead of an ndarray and a tensor, and no Python-level from_dlpack in between. Legacy, because
 * every torch release takes that capsule; the export's versioned fields that a legacy capsule
 * cannot carry only matter for a read-only result, which keeps the NumPy path (torch has no
 * read-only tensor; from_numpy says so with its warning, as before). dtypes: those every torch
 * with a DLPack import reads; the rest keep the NumPy path too. */

static void *torch_from_dlpack; /* torch._C._from_dlpack, set once (pxg_torch_init), or NULL */

int pxg_torch_init(void *from_dlpack) {
	if (from_dlpack == NULL || from_dlpack == cp.none_obj || torch_from_dlpack != NULL) return 0;
	cp.incref(from_dlpack); /* process-wide, never let go (torch lives as long) */
	torch_from_dlpack = from_dlpack;
	return 0;
}

/* The legacy managed tensor over an export: its deleter lets the export go (any thread, once). */
static void torch_share_deleter(pxg_managed *self) {
	pxg_managed_versioned *m = self->manager_ctx;
	free(self);
	if (m->deleter != NULL) m->deleter(m);
}

static int torch_dtype(dlpg_dtype d) {
	if (d.lanes != 1) return 0;
	switch (d.code) {
	case dlpg_kDLInt: return d.bits == 8 || d.bits == 16 || d.bits == 32 || d.bits == 64;
	case dlpg_kDLUInt: return d.bits == 8;
	case dlpg_kDLFloat: return d.bits == 16 || d.bits == 32 || d.bits == 64;
	case dlpg_kDLBfloat: return d.bits == 16;
	case dlpg_kDLComplex: return d.bits == 64 || d.bits == 128;
	}
	return 0;
}

/* torch_result returns the torch tensor of export m (status 1: m is the tensor's now), NULL with
 * status 0 when it takes another path (m untouched), or NULL with status -1 and an exception (m
 * let go). The caller holds the GIL. */
static void *torch_result(pxg_managed_versioned *m, int *status) {
	*status = 0;
	const pxg_tensor *t = &m->dl_tensor;
	if (torch_from_dlpack == NULL || t->device.device_type != dlpg_kDLCPU || (m->flags & DLPG_FLAG_READ_ONLY) ||
		!torch_dtype(t->dtype))
		return NULL;
	*status = -1;
	pxg_managed *l = malloc(sizeof *l);
	if (l == NULL) {
		if (m->deleter != NULL) m->deleter(m);
		return cp.err_no_memory();
	}
	l->dl_tensor = *t;
	l->manager_ctx = m;
	l->deleter = torch_share_deleter;
	void *capsule = cp.capsule_new(l, pxg_name(PXG_NAME_LEGACY), (void (*)(void *))pxg_capsule_destructor_addr());
	if (capsule == NULL) {
		torch_share_deleter(l);
		return NULL;
	}
	/* torch renames a capsule it consumed; one it refused still owns l, its destructor lets go */
	void *o = cp.call_function_obj_args(torch_from_dlpack, capsule, NULL);
	cp.decref(capsule);
	if (o != NULL) *status = 1;
	return o;
}

/* result_object builds the Python object of result r (consuming r), or NULL with an exception: a
 * tensor result is an int (a handle: the caller asked for handles, or the tensor's exports
 * synchronize streams), a torch tensor made in C (numpy and torch: the caller wants torch
 * tensors, torch_result takes the result; *final is set), a NumPy array made in C (numpy: the
 * caller wants NumPy arrays, or torch tensors made from them, and the result is a host tensor
 * NumPy holds: pxg_numpy_result) or (share, device type, device id). */
static void *result_object(int kind, pxg_value *r, int numpy, int torch, int *final) {
	void *o = NULL;
	switch (kind) {
	case PXG_K_TENSOR:
		if (r->n == 1) {
			o = cp.long_from_ull(r->u);
			if (o == NULL) dlpackgo_release((uintptr_t)r->u);
			return o;
		} else {
			if (numpy && torch) {
				int st;
				void *o = torch_result(r->p, &st);
				if (st != 0) { /* made, or failed: r->p is the tensor's, or gone */
					r->p = NULL;
					*final = 1;
					return o;
				}
			}
			if (numpy) {
				int st;
				void *arr = pxg_numpy_result(r->p, &st);
				if (st != 0) { /* made, or failed: r->p is the array's, or gone */
					r->p = NULL;
					return arr;
				}
			}
			void *share = pxg_sharer_new(r->p); /* adopts r->p, even on failure */
			r->p = NULL;
			if (share == NULL) return NULL;
			void *t = cp.tuple_new(3), *dt = cp.long_from_ll(r->dev_type), *di = cp.long_from_ll(r->dev_id);
			if (t == NULL || dt == NULL || di == NULL) {
				if (t) cp.decref(t);
				if (dt) cp.decref(dt);
				if (di) cp.decref(di);
				cp.decref(share);
				return NULL;
			}
			cp.tuple_set_item(t, 0, share); /* steals */
			cp.tuple_set_item(t, 1, dt);
			cp.tuple_set_item(t, 2, di);
			return t;
		}
	case PXG_K_INT: return cp.long_from_ll(r->i);
	case PXG_K_UINT: return cp.long_from_ull(r->u);
	case PXG_K_FLOAT: return cp.float_from_double(r->f);
	case PXG_K_BOOL:
		o = r->i ? cp.true_obj : cp.false_obj;
		cp.incref(o);
		return o;
	case PXG_K_STRING:
		o = cp.unicode_decode_utf8(r->p ? r->p : "", r->n, "surrogateescape");
		free(r->p);
		r->p = NULL;
		return o;
	}
	return NULL;
}

#define ERRLEN 4096

/* drop_asked lets go of the capsules call asked for. */
static void drop_asked(void **asked, int n) {
	for (int i = 0; i < n; i++)
		if (asked[i] != NULL) cp.decref(asked[i]);
}

/* How call_fn returns tensor results (call's first argument). */
enum { RESULTS_EXPORT, RESULTS_HANDLES, RESULTS_NUMPY };

static void *call_fn(const pxg_fn *fn, int mode, void *const *args, void *convert, void *array_convert);

/* call(mode, *args): see the top of the file. mode True: tensor results as handles; None: as
 * NumPy arrays made in C where they can be, else as with False: (share, device type, device id). */
static void *call(void *self, void *const *args, intptr_t nargs) {
	pxg_fn *fn = cp.capsule_get_pointer(self, fn_name);
	if (fn == NULL) return NULL;
	if (nargs != 1 + fn->nparams)
		return cp.err_format(cp.type_error, "%s() takes %d arguments (%d given)", fn->name,
			(int)fn->nparams, (int)nargs - 1);
	int mode = args[0] == cp.true_obj ? RESULTS_HANDLES : args[0] == cp.none_obj ? RESULTS_NUMPY : RESULTS_EXPORT;
	return call_fn(fn, mode, args + 1, NULL, NULL);
}

/* call_fn is call with fn's nparams arguments args (after the mode). With convert (a Python
 * callable), every tensor result that did not become a NumPy array in C is passed through it, and
 * with array_convert every one that did (torch.from_numpy). */
static void *call_fn(const pxg_fn *fn, int mode, void *const *args, void *convert, void *array_convert) {
	int handles = mode == RESULTS_HANDLES;
	pxg_value in[PXG_MAX_PARAMS], out[PXG_MAX_RESULTS];
	void *guard[PXG_MAX_PARAMS];
	void *capsule[PXG_MAX_PARAMS]; /* a tensor argument's capsule: args[i], or one we asked for */
	void *asked[PXG_MAX_PARAMS];   /* the capsules we asked for (new references) */
	pxg_np_arg nps[PXG_MAX_PARAMS]; /* the NumPy arrays read in C (PXG_ARG_NUMPY) */
	size_t np = (size_t)fn->nparams, nr = (size_t)fn->nresults; /* what is used of the arrays */
	memset(in, 0, np * sizeof in[0]);
	memset(out, 0, nr * sizeof out[0]);
	memset(guard, 0, np * sizeof guard[0]);
	memset(asked, 0, np * sizeof asked[0]);

	/* 1. convert and check; nothing is consumed yet */
	void *err = NULL;
	for (int i = 0; i < fn->nparams && err == NULL; i++) {
		void *o = args[i], *idx;
		pxg_value *v = &in[i];
		switch (fn->params[i]) {
		case PXG_K_TENSOR:
			if (pxg_numpy_is(o)) {
				/* a NumPy array, read in C (numpy.c) onto this stack, or else its capsule */
				int st = pxg_numpy_arg(o, &nps[i]);
				if (st < 0) {
					err = (void *)fn; /* any non-NULL: failed */
					break;
				}
				if (st > 0) {
					v->p = &nps[i].m;
					v->n = PXG_ARG_NUMPY;
					break;
				}
				o = asked[i] = cp.call_function_obj_args(cp.capsule_of, o, NULL);
				if (o == NULL) {
					err = (void *)fn; /* any non-NULL: failed */
					break;
				}
			}
			capsule[i] = o;
			if (cp.capsule_is_valid(o, pxg_name(PXG_NAME_VERSIONED)))
				v->n = 1;
			else if (cp.capsule_is_valid(o, pxg_name(PXG_NAME_LEGACY)))
				v->n = 0;
			else if ((idx = cp.number_index(o)) != NULL) {
				/* the handle of a dlpackgo.Tensor: Go has the tensor already */
				v->u = cp.long_as_ull(idx);
				cp.decref(idx);
				if (v->u == (uint64_t)-1 && cp.err_occurred() != NULL) {
					err = (void *)fn; /* any non-NULL: failed */
					break;
				}
				v->n = PXG_ARG_HANDLE;
				break;
			} else {
				cp.err_format(cp.type_error, "%s() argument %d (%s): expected an unused DLPack capsule",
					fn->name, i + 1, fn->pnames[i]);
				err = (void *)fn; /* any non-NULL: failed */
				break;
			}
			v->p = cp.capsule_get_pointer(o, pxg_name(v->n ? PXG_NAME_VERSIONED : PXG_NAME_LEGACY));
			/* one managed tensor twice (a producer answering the same capsule again) would be
			 * imported twice, and its deleter run twice */
			int dup = 0;
			for (int j = 0; j < i && v->p != NULL && !dup; j++)
				if (fn->params[j] == PXG_K_TENSOR && (in[j].n == 0 || in[j].n == 1) && in[j].p == v->p)
					dup = j + 1;
			if (dup) {
				cp.err_format(cp.type_error,
					"%s() argument %d (%s): expected an unused DLPack capsule, got the tensor of argument %d again",
					fn->name, i + 1, fn->pnames[i], dup);
				err = (void *)fn; /* any non-NULL: failed */
				break;
			}
			guard[i] = malloc(v->n ? sizeof(pxg_managed_versioned) : sizeof(pxg_managed));
			if (v->p == NULL || guard[i] == NULL) {
				if (v->p != NULL) cp.err_no_memory();
				err = (void *)fn; /* any non-NULL: failed */
			}
			break;
		case PXG_K_INT:
		case PXG_K_UINT: {
			idx = cp.number_index(o);
			if (idx == NULL) {
				arg_type_error(fn, i, o);
				err = (void *)fn; /* any non-NULL: failed */
				break;
			}
			if (fn->params[i] == PXG_K_INT)
				v->i = cp.long_as_ll(idx);
			else
				v->u = cp.long_as_ull(idx);
			cp.decref(idx);
			if ((v->i == -1 || v->u == (uint64_t)-1) && cp.err_occurred() != NULL) {
				if (cp.err_exception_matches(cp.overflow_error))
					cp.err_format(cp.overflow_error, "%s() argument %d (%s) is out of range: %s",
						fn->name, i + 1, fn->pnames[i],
						fn->params[i] == PXG_K_INT ? "it does not fit in 64 bits"
									   : "it is negative or does not fit in 64 bits");
				err = (void *)fn; /* any non-NULL: failed */
			}
			break;
		}
		case PXG_K_FLOAT:
			v->f = cp.float_as_double(o);
			if (v->f == -1.0 && cp.err_occurred() != NULL) {
				if (cp.err_exception_matches(cp.type_error)) arg_type_error(fn, i, o);
				err = (void *)fn; /* any non-NULL: failed */
			}
			break;
		case PXG_K_BOOL:
			if (o == cp.true_obj)
				v->i = 1;
			else if (o == cp.false_obj)
				v->i = 0;
			else {
				arg_type_error(fn, i, o);
				err = (void *)fn; /* any non-NULL: failed */
			}
			break;
		case PXG_K_STRING: {
			intptr_t n = 0;
			const char *s = cp.unicode_as_utf8_and_size(o, &n);
			if (s == NULL) {
				if (cp.err_exception_matches(cp.type_error)) arg_type_error(fn, i, o);
				err = (void *)fn; /* any non-NULL: failed */
				break;
			}
			v->p = (void *)s; /* owned by o, which the caller holds for the whole call */
			v->n = n;
			break;
		}
		default:
			cp.err_set_string(cp.type_error, "dlpackgo: unknown parameter kind");
			err = (void *)fn; /* any non-NULL: failed */
		}
	}
	/* Python code may have run since a capsule was checked (the __float__ or __index__ of a later
	 * argument): if it gave the capsule to another consumer, importing its tensor too would run
	 * the deleter twice. No Python code runs from here to the renaming below. */
	for (int i = 0; i < fn->nparams && err == NULL; i++) {
		if (fn->params[i] != PXG_K_TENSOR || (in[i].n != 0 && in[i].n != 1)) continue;
		const char *name = pxg_name(in[i].n ? PXG_NAME_VERSIONED : PXG_NAME_LEGACY);
		if (!cp.capsule_is_valid(capsule[i], name) || cp.capsule_get_pointer(capsule[i], name) != in[i].p) {
			cp.err_format(cp.type_error,
				"%s() argument %d (%s): expected an unused DLPack capsule, but it was used while the "
				"arguments were converted", fn->name, i + 1, fn->pnames[i]);
			err = (void *)fn; /* any non-NULL: failed */
		}
	}
	if (err != NULL) {
		for (int i = 0; i < fn->nparams; i++) {
			free(guard[i]);
			/* a string argument's n is its length: only a tensor's says PXG_ARG_NUMPY */
			if (fn->params[i] == PXG_K_TENSOR && in[i].n == PXG_ARG_NUMPY && in[i].p != NULL)
				pxg_numpy_arg_done(&nps[i], 1);
		}
		drop_asked(asked, fn->nparams);
		return NULL;
	}

	/* 2. consume the capsules: Go owns the managed tensors from here on */
	for (int i = 0; i < fn->nparams; i++) {
		if (fn->params[i] != PXG_K_TENSOR || in[i].n == PXG_ARG_HANDLE || in[i].n == PXG_ARG_NUMPY)
			continue;
		void *o = capsule[i];
		cp.capsule_set_name(o, pxg_name(in[i].n ? PXG_NAME_USED_VERSIONED : PXG_NAME_USED_LEGACY));
		if (in[i].n) {
			pxg_managed_versioned *m = in[i].p, *g = guard[i];
			memcpy(g, m, sizeof *g);
			g->manager_ctx = m;
			g->deleter = guard_deleter_v;
			in[i].p = g;
		} else {
			pxg_managed *m = in[i].p, *g = guard[i];
			memcpy(g, m, sizeof *g);
			g->manager_ctx = m;
			g->deleter = guard_deleter_l;
			in[i].p = g;
		}
	}

	/* 3. Go, without the GIL */
	char errbuf[ERRLEN];
	errbuf[0] = 0;
	in_call = 1;
	void *ts = cp.save_thread();
	int rc = dlpackgo_call(fn->id, handles, in, fn->nparams, out, fn->nresults, errbuf, sizeof errbuf);
	cp.restore_thread(ts);
	/* the arguments Go released during the call (call.go's argRelease): their deleters, deferred
	 * to run_pending while in_call is still set */
	for (int i = 0; i < fn->nparams; i++) {
		if (fn->params[i] != PXG_K_TENSOR || in[i].n == PXG_ARG_HANDLE || in[i].n == PXG_ARG_NUMPY ||
			in[i].i == 0)
			continue;
		if (in[i].n == 0)
			delete_legacy(in[i].p);
		else
			delete_versioned(in[i].p);
	}
	in_call = 0;

	/* 4. deferred deleters, the NumPy arguments (their references dropped unless Go holds
	 * them on: pxg_numpy_drop then), then the results */
	run_pending();
	for (int i = 0; i < fn->nparams; i++)
		if (fn->params[i] == PXG_K_TENSOR && in[i].n == PXG_ARG_NUMPY) pxg_numpy_arg_done(&nps[i], in[i].i != 0);
	drop_asked(asked, fn->nparams); /* used capsules: their destructors do nothing */
	if (rc != 0) {
		cp.err_set_string(exception_of(errbuf[0]), errbuf[0] ? errbuf + 1 : "dlpackgo: the call failed");
		return NULL;
	}
	if (fn->nresults == 0) {
		cp.incref(cp.none_obj);
		return cp.none_obj;
	}
	void *objs[PXG_MAX_RESULTS] = {0};
	int k = 0;
	for (; k < fn->nresults; k++) {
		int final = 0; /* a torch tensor made in C: nothing to convert */
		objs[k] = result_object(fn->results[k], &out[k], mode == RESULTS_NUMPY, array_convert != NULL, &final);
		if (objs[k] == NULL) break;
		if (convert != NULL && fn->results[k] == PXG_K_TENSOR && !final) {
			void *f = pxg_numpy_is(objs[k]) ? array_convert : convert;
			if (f == NULL) continue;
			void *c = cp.call_function_obj_args(f, objs[k], NULL);
			cp.decref(objs[k]);
			if ((objs[k] = c) == NULL) break;
		}
	}
	if (k < fn->nresults) {
		for (int j = k + 1; j < fn->nresults; j++) drop_result(fn->results[j], &out[j]);
		for (int j = 0; j < k; j++) cp.decref(objs[j]);
		return NULL;
	}
	if (fn->nresults == 1) return objs[0];
	void *t = cp.tuple_new(fn->nresults);
	if (t == NULL) {
		for (int j = 0; j < fn->nresults; j++) cp.decref(objs[j]);
		return NULL;
	}
	for (int j = 0; j < fn->nresults; j++) cp.tuple_set_item(t, j, objs[j]);
	return t;
}


static method_def call_def = {
	"call", (void *)call, METH_FASTCALL,
	"call(handles, *args): calls a registered Go function (see dlpackgo.Library).",
};

static void fn_capsule_destructor(void *capsule) {
	free(cp.capsule_get_pointer(capsule, fn_name));
}

/* pxg_caller_new returns a new reference to the builtin that calls fn (copied), or NULL with a
 * Python exception set. The caller holds the GIL. */
void *pxg_caller_new(const pxg_fn *fn) {
	pxg_fn *c = malloc(sizeof *c);
	if (c == NULL) return cp.err_no_memory();
	memcpy(c, fn, sizeof *c);
	void *capsule = cp.capsule_new(c, fn_name, fn_capsule_destructor);
	if (capsule == NULL) {
		free(c);
		return NULL;
	}
	void *f = cp.cfunction_new_ex(&call_def, capsule, NULL);
	cp.decref(capsule);
	return f;
}

/* -- the function object -------------------------------------------------------------------
 *
 * What Library exposes as a registered function: a dlpackgo.GoFunction, a callable of a type
 * made here (PyType_FromSpec) whose calls CPython makes through vectorcall, straight into C.
 * The generated Python function of _functions.py stays behind it (python_fn, and __wrapped__,
 * which gives inspect and help() the signature): a call that C does not take as it is goes to
 * python_fn unchanged, so its behaviour and errors are python_fn's. C takes calls with exactly
 * the parameters by position, no keywords, no tensor result, and tensor arguments that are NumPy
 * arrays the reader takes or live dlpackgo.Tensors (by their handles); scalar arguments go to
 * call_fn as python_fn would pass them. */

/* The CPython structures PyType_FromSpec reads (stable ABI) and the slots and flags used. */
typedef struct {
	int slot;
	void *pfunc;
} type_slot;
typedef struct {
	const char *name;
	int basicsize, itemsize;
	unsigned int flags;
	type_slot *slots;
} type_spec;
typedef struct {
	const char *name;
	int type;
	intptr_t offset;
	int flags;
	const char *doc;
} member_def;
enum { TP_CALL = 50, TP_CLEAR = 51, TP_DEALLOC = 52, TP_DESCR_GET = 54, TP_DOC = 56, TP_TRAVERSE = 71,
	TP_MEMBERS = 72, TP_FREE = 74 };
enum { T_PYSSIZET = 19, MEMBER_READONLY = 1 };
#define TPFLAGS_DISALLOW_INSTANTIATION (1UL << 7)
#define TPFLAGS_HAVE_VECTORCALL (1UL << 11)
#define TPFLAGS_HAVE_GC (1UL << 14)
#define TPFLAGS_HAVE_VERSION_TAG (1UL << 18)
#define VECTORCALL_ARGUMENTS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))

/* A GoFunction. The object header is two words in the CPython builds this module supports (the
 * Python module checks object.__basicsize__ before it makes any). */
typedef struct {
	intptr_t ob_refcnt;
	void *ob_type;
	void *(*vectorcall)(void *self, void *const *args, size_t nargsf, void *kwnames);
	void *dict;      /* __dict__: __wrapped__, __name__, __doc__, ... */
	void *python_fn; /* the generated Python function */
	pxg_fn *fn;
	void *convert; /* the converter of tensor results C did not make NumPy arrays of, or NULL */
	int c_calls;   /* no tensor result, or a convert: C may take the call */
	int tensors;   /* it has tensor results */
	void *array_convert; /* what takes the NumPy arrays made in C (torch.from_numpy), or NULL */
} gofunc;

static void *gofunc_type;

static void *gofunc_vectorcall(void *self, void *const *args, size_t nargsf, void *kwnames) {
	gofunc *g = self;
	const pxg_fn *fn = g->fn;
	intptr_t n = (intptr_t)(nargsf & ~VECTORCALL_ARGUMENTS_OFFSET);
	void *argv[PXG_MAX_PARAMS], *handles[PXG_MAX_PARAMS];
	int nh = 0;
	if (!g->c_calls || kwnames != NULL || n != fn->nparams || (g->tensors && g->convert == NULL)) goto python;
	for (int i = 0; i < n; i++) {
		void *o = argv[i] = args[i];
		if (fn->params[i] != PXG_K_TENSOR || pxg_numpy_is(o)) continue;
		if (((void **)o)[1] != cp.tensor_type) goto python; /* ob_type */
		void *h = cp.object_get_attr(o, cp.handle_name);
		if (h == NULL) goto fail;
		handles[nh++] = h;
		int live = cp.object_is_true(h);
		if (live < 0) goto fail;
		if (!live) goto python; /* released, or a pending import: Tensor.handle decides */
		argv[i] = h;
	}
	void *r = call_fn(fn, g->convert != NULL ? RESULTS_NUMPY : RESULTS_EXPORT, argv, g->convert, g->array_convert);
	for (int i = 0; i < nh; i++) cp.decref(handles[i]);
	return r;
python:
	for (int i = 0; i < nh; i++) cp.decref(handles[i]);
	if (g->python_fn == NULL) {
		cp.err_set_string(cp.type_error, "dlpackgo: the function was cleared");
		return NULL;
	}
	return cp.object_vectorcall(g->python_fn, args, nargsf, kwnames);
fail:
	for (int i = 0; i < nh; i++) cp.decref(handles[i]);
	return NULL;
}

static int gofunc_traverse(void *self, int (*visit)(void *, void *), void *arg) {
	gofunc *g = self;
	int r;
	if (g->dict != NULL && (r = visit(g->dict, arg)) != 0) return r;
	if (g->python_fn != NULL && (r = visit(g->python_fn, arg)) != 0) return r;
	if (g->convert != NULL && (r = visit(g->convert, arg)) != 0) return r;
	if (g->array_convert != NULL && (r = visit(g->array_convert, arg)) != 0) return r;
	return visit(g->ob_type, arg); /* a heap type's instances visit it */
}

static int gofunc_clear(void *self) {
	gofunc *g = self;
	void *d = g->dict, *f = g->python_fn, *c = g->convert, *a = g->array_convert;
	g->dict = g->python_fn = NULL;
	g->convert = g->array_convert = NULL;
	if (d != NULL) cp.decref(d);
	if (f != NULL) cp.decref(f);
	if (c != NULL) cp.decref(c);
	if (a != NULL) cp.decref(a);
	return 0;
}

static void gofunc_dealloc(void *self) {
	gofunc *g = self;
	void *type = g->ob_type;
	cp.gc_untrack(self);
	gofunc_clear(self);
	free(g->fn);
	g->fn = NULL;
	void (*tp_free)(void *) = (void (*)(void *))cp.type_get_slot(type, TP_FREE);
	tp_free(self);
	cp.decref(type);
}

/* A GoFunction stored in a class is the same function, as a builtin would be (no binding); its
 * __get__ is also what makes inspect and pydoc document it as a routine. */
static void *gofunc_get(void *self, void *obj, void *type) {
	(void)obj;
	(void)type;
	cp.incref(self);
	return self;
}

static member_def gofunc_members[] = {
	{"__vectorcalloffset__", T_PYSSIZET, offsetof(gofunc, vectorcall), MEMBER_READONLY, NULL},
	{"__dictoffset__", T_PYSSIZET, offsetof(gofunc, dict), MEMBER_READONLY, NULL},
	{NULL, 0, 0, 0, NULL},
};

static type_slot gofunc_slots[] = {
	{TP_CALL, NULL}, /* PyVectorcall_Call, set when the type is made */
	{TP_DEALLOC, (void *)gofunc_dealloc},
	{TP_TRAVERSE, (void *)gofunc_traverse},
	{TP_CLEAR, (void *)gofunc_clear},
	{TP_DESCR_GET, (void *)gofunc_get},
	{TP_MEMBERS, gofunc_members},
	{TP_DOC, "A Go function a library registered (pyexchange.Register), called from C."},
	{0, NULL},
};

static type_spec gofunc_spec = {
	"dlpackgo.GoFunction", sizeof(gofunc), 0,
	TPFLAGS_HAVE_VERSION_TAG | TPFLAGS_HAVE_GC | TPFLAGS_HAVE_VECTORCALL | TPFLAGS_DISALLOW_INSTANTIATION,
	gofunc_slots,
};

void *pxg_function_new(const pxg_fn *fn, void *python_fn, void *convert, void *array_convert) {
	if (cp.object_vectorcall == NULL) { /* the Python module does not ask then */
		cp.err_set_string(cp.type_error, "dlpackgo: this Python exports no PyObject_Vectorcall");
		return NULL;
	}
	if (gofunc_type == NULL) {
		gofunc_slots[0].pfunc = (void *)cp.vectorcall_call;
		if ((gofunc_type = cp.type_from_spec(&gofunc_spec)) == NULL) return NULL;
	}
	pxg_fn *c = malloc(sizeof *c);
	if (c == NULL) return cp.err_no_memory();
	memcpy(c, fn, sizeof *c);
	gofunc *g = cp.type_generic_alloc(gofunc_type, 0);
	if (g == NULL) {
		free(c);
		return NULL;
	}
	g->vectorcall = gofunc_vectorcall;
	g->fn = c;
	g->c_calls = 1;
	g->convert = NULL;
	g->tensors = 0;
	g->array_convert = NULL;
	for (int i = 0; i < c->nresults; i++)
		if (c->results[i] == PXG_K_TENSOR) g->c_calls = 0, g->tensors = 1;
	if (convert != cp.none_obj && convert != NULL) { /* tensor results as NumPy arrays, made in C */
		cp.incref(convert);
		g->convert = convert;
		if (array_convert != cp.none_obj && array_convert != NULL) {
			cp.incref(array_convert);
			g->array_convert = array_convert;
		}
		g->c_calls = 1;
	}
	cp.incref(python_fn);
	g->python_fn = python_fn;
	return g;
}

/* -- the releaser --------------------------------------------------------------------------- */

static void *release(void *self, void *handle) {
	(void)self;
	void *idx = cp.number_index(handle);
	if (idx == NULL) return NULL;
	unsigned long long h = cp.long_as_ull(idx);
	cp.decref(idx);
	if (h == (unsigned long long)-1 && cp.err_occurred() != NULL) return NULL;
	void *r = dlpackgo_release((uintptr_t)h) == 0 ? cp.true_obj : cp.false_obj;
	cp.incref(r);
	return r;
}

static method_def release_def = {
	"release", (void *)release, METH_O,
	"release(handle) -> True, or False for an unknown handle: releases a Go tensor handle.",
};

/* pxg_releaser_new returns a new reference to the builtin release (NULL with an exception set).
 * The caller holds the GIL. */
void *pxg_releaser_new(void) { return cp.cfunction_new_ex(&release_def, NULL, NULL); }
