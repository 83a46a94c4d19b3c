/*
 * xharness: a small Python extension that plays a tensor framework on both sides of DLPack 1.3's
 * C exchange API, so that dlpackgo's API is tested in CI without a framework that has one
 * (Debian 12's PyTorch 1.13 and NumPy 1.24 do not).
 *
 * Producer: HTensor (and its Python subclasses) carries __dlpack_c_exchange_api__, a capsule over
 * a table of this file, and __dlpack__ (versioned capsules only) for the fallback path. A
 * subclass may publish another table (api_capsule): of another major version, 1.2, a 2.0 table
 * linking to the 1.3 one, or a capsule of a wrong name. Every managed tensor this file makes
 * counts its deleter's calls; wrappers are not freed before purge(), so a second call is counted
 * (double_deletes) instead of touching freed memory.
 *
 * Consumer: consume(x), view(x), alloc(cls, ...), to_py(cls, h), stream(cls, ...) call the
 * table of type(x) or cls the way a framework's C extension would, refusing a major version
 * other than 1; bench_* time the API against __dlpack__ in C.
 *
 * Built at test time (pyexchange/exchange_python_test.go) with gcc and the python3-dev
 * headers:  gcc -shared -fPIC -O2 $(python3-config --includes) -I core/cdlpack xharness.c
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "dlpack_abi.h"

/* -- counters and the graveyard ------------------------------------------------------------ */

static int64_t made, deleted, double_deletes, live_allocs, from_calls, to_calls, view_calls, alloc_calls;

enum { MAGIC_LIVE = 0x11feu, MAGIC_DEAD = 0xdeadu };

/* Every managed tensor of this file: the DLPack struct first, then what the deleter needs. */
typedef struct {
	dlpg_managed_versioned m;
	unsigned magic;
	PyObject *owner;  /* a reference the tensor holds (the HTensor it shares), or NULL */
	void *buffer;     /* memory it owns (free), or NULL */
	int64_t shape[64], strides[64];
} hx;

/* The graveyard: the last GRAVE deleted wrappers, kept (magic MAGIC_DEAD) so that a second
 * deleter call finds them; older ones are freed. */
enum { GRAVE = 1 << 12 };
static hx *grave[GRAVE];
static size_t grave_next;

static void bury(hx *x) {
	size_t i = grave_next++ % GRAVE;
	free(grave[i]);
	grave[i] = x;
}

static void hx_deleter(dlpg_managed_versioned *self) {
	hx *x = (hx *)self;
	PyGILState_STATE st = PyGILState_Ensure();
	if (x->magic != MAGIC_LIVE) {
		double_deletes++;
		PyGILState_Release(st);
		return;
	}
	x->magic = MAGIC_DEAD;
	deleted++;
	if (x->buffer != NULL) {
		free(x->buffer);
		x->buffer = NULL;
		live_allocs--;
	}
	Py_CLEAR(x->owner);
	bury(x);
	PyGILState_Release(st);
}

static hx *hx_new(void) {
	hx *x = calloc(1, sizeof *x);
	if (x == NULL) return NULL;
	x->magic = MAGIC_LIVE;
	x->m.version.major = 1;
	x->m.version.minor = 3;
	x->m.manager_ctx = x;
	x->m.deleter = hx_deleter;
	made++;
	return x;
}

/* -- HTensor ------------------------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	dlpg_managed_versioned *m; /* owned: its deleter runs once, at release or dealloc */
	int fail;                  /* 1: the API raises BufferError; 2: it fails without an exception */
} HTensor;

static PyTypeObject HTensorType;

static void ht_release(HTensor *t) {
	dlpg_managed_versioned *m = t->m;
	t->m = NULL;
	if (m != NULL && m->deleter != NULL) m->deleter(m);
}

static void ht_dealloc(HTensor *t) {
	ht_release(t);
	Py_TYPE(t)->tp_free((PyObject *)t);
}

static PyObject *ht_wrap(PyTypeObject *type, dlpg_managed_versioned *m) {
	HTensor *t = (HTensor *)type->tp_alloc(type, 0);
	if (t == NULL) {
		if (m->deleter != NULL) m->deleter(m);
		return NULL;
	}
	t->m = m;
	return (PyObject *)t;
}

static dlpg_tensor *ht_dl(HTensor *t) {
	if (t->m == NULL) {
		PyErr_SetString(PyExc_ValueError, "xharness: tensor released");
		return NULL;
	}
	return &t->m->dl_tensor;
}

static PyObject *tuple64(const int64_t *v, int n) {
	PyObject *r = PyTuple_New(n);
	for (int i = 0; r != NULL && i < n; i++) PyTuple_SET_ITEM(r, i, PyLong_FromLongLong(v ? v[i] : 0));
	return r;
}

static PyObject *ht_get_data_ptr(HTensor *t, void *c) {
	dlpg_tensor *d = ht_dl(t);
	return d ? PyLong_FromVoidPtr((char *)d->data + d->byte_offset) : NULL;
}
static PyObject *ht_get_shape(HTensor *t, void *c) {
	dlpg_tensor *d = ht_dl(t);
	return d ? tuple64(d->shape, d->ndim) : NULL;
}
static PyObject *ht_get_strides(HTensor *t, void *c) {
	dlpg_tensor *d = ht_dl(t);
	if (d == NULL) return NULL;
	if (d->strides == NULL && d->ndim > 0) Py_RETURN_NONE;
	return tuple64(d->strides, d->ndim);
}
static PyObject *ht_get_dtype(HTensor *t, void *c) {
	dlpg_tensor *d = ht_dl(t);
	return d ? Py_BuildValue("(iii)", d->dtype.code, d->dtype.bits, d->dtype.lanes) : NULL;
}
static PyObject *ht_get_device(HTensor *t, void *c) {
	dlpg_tensor *d = ht_dl(t);
	return d ? Py_BuildValue("(ii)", d->device.device_type, d->device.device_id) : NULL;
}
static PyObject *ht_get_flags(HTensor *t, void *c) {
	return ht_dl(t) ? PyLong_FromUnsignedLongLong(t->m->flags) : NULL;
}
static PyObject *ht_get_version(HTensor *t, void *c) {
	return ht_dl(t) ? Py_BuildValue("(II)", t->m->version.major, t->m->version.minor) : NULL;
}
static PyObject *ht_get_released(HTensor *t, void *c) { return PyBool_FromLong(t->m == NULL); }

/* element address of index idx (ndim values) honouring strides (NULL: C order) */
static char *ht_elem(HTensor *t, PyObject *args, int *kind, int *bits) {
	dlpg_tensor *d = ht_dl(t);
	if (d == NULL) return NULL;
	if (PyTuple_GET_SIZE(args) != d->ndim) {
		PyErr_Format(PyExc_IndexError, "xharness: %d indices for a %d-d tensor", (int)PyTuple_GET_SIZE(args), d->ndim);
		return NULL;
	}
	if (d->device.device_type != dlpg_kDLCPU || d->dtype.lanes != 1 || d->dtype.bits % 8 ||
	    !(d->dtype.code <= dlpg_kDLFloat || d->dtype.code == dlpg_kDLBool)) {
		PyErr_SetString(PyExc_TypeError, "xharness: get/set only on CPU int, uint, float and bool tensors");
		return NULL;
	}
	int64_t off = 0, c = 1;
	for (int i = d->ndim - 1; i >= 0; i--) {
		int64_t k = PyLong_AsLongLong(PyTuple_GET_ITEM(args, i));
		if (k == -1 && PyErr_Occurred()) return NULL;
		if (k < 0 || k >= d->shape[i]) {
			PyErr_SetString(PyExc_IndexError, "xharness: index out of range");
			return NULL;
		}
		off += k * (d->strides ? d->strides[i] : c);
		c *= d->shape[i];
	}
	*kind = d->dtype.code, *bits = d->dtype.bits;
	return (char *)d->data + d->byte_offset + off * (d->dtype.bits / 8);
}

static double load(const char *p, int kind, int bits) {
	if (kind == dlpg_kDLFloat) return bits == 32 ? *(const float *)p : bits == 64 ? *(const double *)p : 0;
	if (kind == dlpg_kDLInt)
		switch (bits) { case 8: return *(const int8_t *)p; case 16: return *(const int16_t *)p;
		case 32: return *(const int32_t *)p; default: return (double)*(const int64_t *)p; }
	switch (bits) { case 8: return *(const uint8_t *)p; case 16: return *(const uint16_t *)p;
	case 32: return *(const uint32_t *)p; default: return (double)*(const uint64_t *)p; }
}

static void store(char *p, int kind, int bits, double v) {
	if (kind == dlpg_kDLFloat) {
		if (bits == 32) *(float *)p = (float)v; else if (bits == 64) *(double *)p = v;
		return;
	}
	if (kind == dlpg_kDLInt)
		switch (bits) { case 8: *(int8_t *)p = (int8_t)v; return; case 16: *(int16_t *)p = (int16_t)v; return;
		case 32: *(int32_t *)p = (int32_t)v; return; default: *(int64_t *)p = (int64_t)v; return; }
	switch (bits) { case 8: *(uint8_t *)p = (uint8_t)v; return; case 16: *(uint16_t *)p = (uint16_t)v; return;
	case 32: *(uint32_t *)p = (uint32_t)v; return; default: *(uint64_t *)p = (uint64_t)v; return; }
}

static PyObject *ht_get(HTensor *t, PyObject *args) {
	int kind, bits;
	char *p = ht_elem(t, args, &kind, &bits);
	return p ? PyFloat_FromDouble(load(p, kind, bits)) : NULL;
}

/* set(value, *idx): refuses (BufferError) a tensor flagged read-only, as a careful framework does */
static PyObject *ht_set(HTensor *t, PyObject *args) {
	if (PyTuple_GET_SIZE(args) < 1) return PyErr_Format(PyExc_TypeError, "xharness: set(value, *idx)");
	double v = PyFloat_AsDouble(PyTuple_GET_ITEM(args, 0));
	if (v == -1 && PyErr_Occurred()) return NULL;
	PyObject *idx = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args));
	if (idx == NULL) return NULL;
	int kind, bits;
	char *p = ht_elem(t, idx, &kind, &bits);
	Py_DECREF(idx);
	if (p == NULL) return NULL;
	if (t->m->flags & DLPG_FLAG_READ_ONLY) return PyErr_Format(PyExc_BufferError, "xharness: read-only tensor");
	store(p, kind, bits, v);
	Py_RETURN_NONE;
}

static PyObject *ht_release_m(HTensor *t, PyObject *unused) {
	ht_release(t);
	Py_RETURN_NONE;
}

static void capsule_destructor(PyObject *capsule) {
	if (!PyCapsule_IsValid(capsule, "dltensor_versioned")) return; /* consumed */
	dlpg_managed_versioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
	if (m != NULL && m->deleter != NULL) m->deleter(m);
}

static int share_of(HTensor *t, dlpg_managed_versioned **out);

/* __dlpack__: versioned capsules only (what dlpackgo asks first), a share like the API's */
static PyObject *ht_dlpack(HTensor *t, PyObject *args, PyObject *kw) {
	static char *kws[] = {"stream", "max_version", "dl_device", "copy", NULL};
	PyObject *stream = Py_None, *maxv = Py_None, *dev = Py_None, *copy = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO", kws, &stream, &maxv, &dev, &copy)) return NULL;
	if (maxv == Py_None) return PyErr_Format(PyExc_BufferError, "xharness: versioned capsules only");
	dlpg_managed_versioned *m;
	if (share_of(t, &m) != 0) return NULL;
	PyObject *c = PyCapsule_New(m, "dltensor_versioned", capsule_destructor);
	if (c == NULL) m->deleter(m);
	return c;
}

static PyObject *ht_dlpack_device(HTensor *t, PyObject *unused) { return ht_get_device(t, NULL); }

static PyGetSetDef ht_getset[] = {
	{"data_ptr", (getter)ht_get_data_ptr}, {"shape", (getter)ht_get_shape},
	{"strides", (getter)ht_get_strides}, {"dtype", (getter)ht_get_dtype},
	{"device", (getter)ht_get_device}, {"flags", (getter)ht_get_flags},
	{"version", (getter)ht_get_version}, {"released", (getter)ht_get_released}, {NULL},
};

static PyMemberDef ht_members[] = {{"fail", T_INT, offsetof(HTensor, fail), 0, NULL}, {NULL}};

static PyMethodDef ht_methods[] = {
	{"get", (PyCFunction)ht_get, METH_VARARGS, NULL},
	{"set", (PyCFunction)ht_set, METH_VARARGS, NULL},
	{"release", (PyCFunction)ht_release_m, METH_NOARGS, NULL},
	{"__dlpack__", (PyCFunction)(void (*)(void))ht_dlpack, METH_VARARGS | METH_KEYWORDS, NULL},
	{"__dlpack_device__", (PyCFunction)ht_dlpack_device, METH_NOARGS, NULL},
	{NULL},
};

static PyTypeObject HTensorType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "xharness.HTensor",
	.tp_basicsize = sizeof(HTensor),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_dealloc = (destructor)ht_dealloc,
	.tp_methods = ht_methods,
	.tp_getset = ht_getset,
	.tp_members = ht_members,
};

/* -- the harness's own exchange API (producer) ----------------------------------------------- */

static int check_fail(HTensor *t) {
	if (t->fail == 1) {
		PyErr_SetString(PyExc_BufferError, "xharness: this tensor refuses to be exported");
		return -1;
	}
	return t->fail == 2 ? -1 : 0; /* 2: a broken producer that fails without an exception */
}

static int share_of(HTensor *t, dlpg_managed_versioned **out) {
	dlpg_tensor *d = ht_dl(t);
	if (d == NULL) return -1;
	hx *x = hx_new();
	if (x == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	x->m.flags = t->m->flags & (DLPG_FLAG_READ_ONLY | DLPG_FLAG_IS_SUBBYTE_TYPE_PADDED);
	x->m.dl_tensor = *d; /* shape and strides stay the owner's: it lives as long as x */
	Py_INCREF(t);
	x->owner = (PyObject *)t;
	*out = &x->m;
	return 0;
}

static int h_from_py_object(void *obj, dlpg_managed_versioned **out) {
	from_calls++;
	*out = NULL;
	if (!PyObject_TypeCheck((PyObject *)obj, &HTensorType)) {
		PyErr_SetString(PyExc_TypeError, "xharness: not an HTensor");
		return -1;
	}
	if (check_fail(obj) != 0) return -1;
	return share_of(obj, out);
}

static int h_dltensor_from_py_object(void *obj, dlpg_tensor *out) {
	view_calls++;
	if (!PyObject_TypeCheck((PyObject *)obj, &HTensorType)) {
		PyErr_SetString(PyExc_TypeError, "xharness: not an HTensor");
		return -1;
	}
	if (check_fail(obj) != 0) return -1;
	dlpg_tensor *d = ht_dl(obj);
	if (d == NULL) return -1;
	*out = *d;
	return 0;
}

static int h_to_py_object(dlpg_managed_versioned *m, void **out) {
	to_calls++;
	*out = NULL;
	if (m == NULL) {
		PyErr_SetString(PyExc_ValueError, "xharness: NULL tensor");
		return -1;
	}
	if (m->version.major != 1) {
		if (m->deleter != NULL) m->deleter(m);
		PyErr_SetString(PyExc_BufferError, "xharness: managed tensor of another major version");
		return -1;
	}
	PyObject *t = ht_wrap(&HTensorType, m);
	if (t == NULL) return -1;
	*out = t;
	return 0;
}

static int64_t elem_count(const dlpg_tensor *d) {
	int64_t n = 1;
	for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
	return n;
}

static int h_allocator(dlpg_tensor *proto, dlpg_managed_versioned **out, void *ctx,
		void (*set_error)(void *ctx, const char *kind, const char *message)) {
	alloc_calls++;
	*out = NULL;
	if (proto->device.device_type != dlpg_kDLCPU || proto->ndim < 0 || proto->ndim > 64) {
		set_error(ctx, "ValueError", "xharness: CPU tensors of at most 64 dimensions only");
		return -1;
	}
	for (int i = 0; i < proto->ndim; i++)
		if (proto->shape[i] < 0 || proto->shape[i] > (1 << 24)) {
			set_error(ctx, "ValueError", "xharness: bad shape");
			return -1;
		}
	hx *x = hx_new();
	int64_t n = elem_count(proto), size = (n * proto->dtype.bits * proto->dtype.lanes + 7) / 8;
	if (x == NULL || (x->buffer = calloc(1, size > 0 ? size : 1)) == NULL) {
		if (x != NULL) x->m.deleter(&x->m);
		set_error(ctx, "MemoryError", "xharness: out of memory");
		return -1;
	}
	live_allocs++;
	x->m.dl_tensor = *proto;
	x->m.dl_tensor.data = x->buffer;
	x->m.dl_tensor.byte_offset = 0;
	int64_t c = 1;
	for (int i = proto->ndim - 1; i >= 0; i--) {
		x->shape[i] = proto->shape[i];
		x->strides[i] = c;
		c *= proto->shape[i];
	}
	x->m.dl_tensor.shape = x->shape;
	x->m.dl_tensor.strides = x->strides;
	*out = &x->m;
	return 0;
}

#define FAKE_STREAM ((void *)(uintptr_t)0x5eed)

static int h_current_work_stream(int32_t device_type, int32_t device_id, void **out) {
	*out = device_type == dlpg_kDLCPU ? NULL : FAKE_STREAM;
	return 0;
}

static dlpg_exchange_api api13 = {{{1, 3}, NULL}, h_allocator, h_from_py_object, h_to_py_object,
	h_dltensor_from_py_object, h_current_work_stream};
static dlpg_exchange_api api12 = {{{1, 2}, NULL}, h_allocator, h_from_py_object, h_to_py_object,
	h_dltensor_from_py_object, h_current_work_stream};
static dlpg_exchange_api api20 = {{{2, 0}, NULL}, h_allocator, h_from_py_object, h_to_py_object,
	h_dltensor_from_py_object, h_current_work_stream};
static dlpg_exchange_api api20chain = {{{2, 0}, &api13.header}, h_allocator, h_from_py_object,
	h_to_py_object, h_dltensor_from_py_object, h_current_work_stream};
static dlpg_exchange_api api14noview = {{{1, 4}, NULL}, h_allocator, h_from_py_object, h_to_py_object,
	NULL, h_current_work_stream};

/* api_capsule(kind): "1.3", "1.2", "2.0", "2.0-chain", "1.4-noview", or "bad-name" */
static PyObject *api_capsule(PyObject *self, PyObject *arg) {
	const char *k = PyUnicode_AsUTF8(arg);
	if (k == NULL) return NULL;
	if (!strcmp(k, "1.3")) return PyCapsule_New(&api13, DLPG_EXCHANGE_API_CAPSULE_NAME, NULL);
	if (!strcmp(k, "1.2")) return PyCapsule_New(&api12, DLPG_EXCHANGE_API_CAPSULE_NAME, NULL);
	if (!strcmp(k, "2.0")) return PyCapsule_New(&api20, DLPG_EXCHANGE_API_CAPSULE_NAME, NULL);
	if (!strcmp(k, "2.0-chain")) return PyCapsule_New(&api20chain, DLPG_EXCHANGE_API_CAPSULE_NAME, NULL);
	if (!strcmp(k, "1.4-noview")) return PyCapsule_New(&api14noview, DLPG_EXCHANGE_API_CAPSULE_NAME, NULL);
	if (!strcmp(k, "bad-name")) return PyCapsule_New(&api13, "not_the_exchange_api", NULL);
	return PyErr_Format(PyExc_ValueError, "xharness: no API %s", k);
}

/* make(code, bits, lanes, shape, strides=None, readonly=False): an HTensor over harness memory
 * holding 0, 1, 2, ... in C order of the index (int, uint, float 32/64, bool: k % 2). */
static PyObject *make(PyObject *self, PyObject *args, PyObject *kw) {
	static char *kws[] = {"code", "bits", "lanes", "shape", "strides", "readonly", "device_type", "cls", NULL};
	int code, bits, lanes, readonly = 0, devtype = dlpg_kDLCPU;
	PyObject *shape, *strides = Py_None;
	PyTypeObject *cls = &HTensorType;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "iiiO|OpiO!", kws, &code, &bits, &lanes, &shape, &strides,
			&readonly, &devtype, &PyType_Type, &cls))
		return NULL;
	if (!PyType_IsSubtype(cls, &HTensorType)) return PyErr_Format(PyExc_TypeError, "xharness: cls must be an HTensor type");
	PyObject *sh = PySequence_Tuple(shape);
	if (sh == NULL) return NULL;
	int nd = (int)PyTuple_GET_SIZE(sh);
	hx *x = nd <= 64 ? hx_new() : NULL;
	if (x == NULL) {
		Py_DECREF(sh);
		return PyErr_Format(PyExc_ValueError, "xharness: bad ndim or out of memory");
	}
	int64_t n = 1;
	for (int i = 0; i < nd; i++) {
		x->shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(sh, i));
		n *= x->shape[i];
	}
	Py_DECREF(sh);
	int64_t c = 1;
	for (int i = nd - 1; i >= 0; i--) {
		x->strides[i] = c;
		c *= x->shape[i];
	}
	if (strides != Py_None) {
		PyObject *st = PySequence_Tuple(strides);
		if (st == NULL || PyTuple_GET_SIZE(st) != nd) {
			Py_XDECREF(st);
			x->m.deleter(&x->m);
			return PyErr_Format(PyExc_ValueError, "xharness: strides must have ndim entries");
		}
		for (int i = 0; i < nd; i++) x->strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(st, i));
		Py_DECREF(st);
	}
	/* the extent the strides reach, in elements */
	int64_t lo = 0, hi = 0;
	for (int i = 0; n > 0 && i < nd; i++) {
		int64_t e = (x->shape[i] - 1) * x->strides[i];
		if (e < 0) lo += e; else hi += e;
	}
	int64_t esize = (int64_t)(bits * lanes + 7) / 8, span = n > 0 ? (hi - lo + 1) : 0;
	x->buffer = calloc(1, span * esize > 0 ? span * esize : 1);
	if (x->buffer == NULL) {
		x->m.deleter(&x->m);
		return PyErr_NoMemory();
	}
	live_allocs++;
	x->m.flags = readonly ? DLPG_FLAG_READ_ONLY : 0;
	dlpg_tensor *d = &x->m.dl_tensor;
	d->data = (char *)x->buffer + (-lo) * esize;
	d->device.device_type = devtype;
	d->ndim = nd;
	d->dtype.code = code, d->dtype.bits = bits, d->dtype.lanes = lanes;
	d->shape = nd > 0 ? x->shape : NULL;
	d->strides = nd > 0 ? x->strides : NULL;
	PyObject *t = ht_wrap(cls, &x->m);
	if (t == NULL) return NULL;
	if (lanes == 1 && bits % 8 == 0 && devtype == dlpg_kDLCPU &&
	    (code <= dlpg_kDLFloat || code == dlpg_kDLBool)) {
		int64_t idx[64] = {0};
		for (int64_t k = 0; k < n; k++) {
			int64_t off = 0;
			for (int i = 0; i < nd; i++) off += idx[i] * x->strides[i];
			store((char *)d->data + off * esize, code == dlpg_kDLBool ? dlpg_kDLUInt : code, bits,
				code == dlpg_kDLBool ? (double)(k % 2) : (double)k);
			for (int i = nd - 1; i >= 0; i--) {
				if (++idx[i] < x->shape[i]) break;
				idx[i] = 0;
			}
		}
	}
	return t;
}

/* -- the consumer ---------------------------------------------------------------------------- */

/* api_for returns cls's table if its major version (or one prev_api leads to) is 1, or NULL with
 * BufferError/TypeError set. */
static const dlpg_exchange_api *api_for(PyObject *cls) {
	PyObject *c = PyObject_GetAttrString(cls, DLPG_EXCHANGE_API_ATTR);
	if (c == NULL) return NULL;
	const dlpg_exchange_api_header *h = PyCapsule_GetPointer(c, DLPG_EXCHANGE_API_CAPSULE_NAME);
	Py_DECREF(c);
	if (h == NULL) return NULL;
	while (h != NULL && h->version.major != 1) h = h->prev_api;
	if (h == NULL) {
		PyErr_SetString(PyExc_BufferError, "xharness: no exchange API of major version 1");
		return NULL;
	}
	return (const dlpg_exchange_api *)h;
}

static int raise_if_silent(const char *what) {
	if (!PyErr_Occurred()) PyErr_Format(PyExc_SystemError, "xharness: %s failed without an exception", what);
	return -1;
}

static PyObject *consume_with(PyObject *cls, PyObject *x);

/* consume(x): an HTensor owning the managed tensor type(x)'s API makes of x */
static PyObject *consume(PyObject *self, PyObject *x) { return consume_with((PyObject *)Py_TYPE(x), x); }

/* consume_as(cls, x): consume with cls's API, whatever x is (the producer must refuse a stranger) */
static PyObject *consume_as(PyObject *self, PyObject *args) {
	PyObject *cls, *x;
	if (!PyArg_ParseTuple(args, "OO", &cls, &x)) return NULL;
	return consume_with(cls, x);
}

static PyObject *consume_with(PyObject *cls, PyObject *x) {
	const dlpg_exchange_api *api = api_for(cls);
	if (api == NULL) return NULL;
	dlpg_managed_versioned *m = NULL;
	if (api->managed_tensor_from_py_object_no_sync(x, &m) != 0) {
		raise_if_silent("managed_tensor_from_py_object_no_sync");
		return NULL;
	}
	if (m == NULL) return PyErr_Format(PyExc_SystemError, "xharness: success without a tensor");
	if (m->version.major != 1) {
		if (m->deleter != NULL) m->deleter(m);
		return PyErr_Format(PyExc_BufferError, "xharness: tensor of major version %u", m->version.major);
	}
	return ht_wrap(&HTensorType, m);
}

/* view(x): what type(x)'s dltensor_from_py_object_no_sync describes, read while borrowed:
 * (data, shape, strides, dtype, device, byte_offset, sum of the elements for float64) */
static PyObject *view(PyObject *self, PyObject *x) {
	const dlpg_exchange_api *api = api_for((PyObject *)Py_TYPE(x));
	if (api == NULL) return NULL;
	if (api->dltensor_from_py_object_no_sync == NULL)
		return PyErr_Format(PyExc_NotImplementedError, "xharness: no dltensor_from_py_object_no_sync");
	dlpg_tensor d;
	memset(&d, 0xab, sizeof d);
	if (api->dltensor_from_py_object_no_sync(x, &d) != 0) {
		raise_if_silent("dltensor_from_py_object_no_sync");
		return NULL;
	}
	double sum = 0;
	if (d.device.device_type == dlpg_kDLCPU && d.dtype.code == dlpg_kDLFloat && d.dtype.bits == 64) {
		int64_t n = elem_count(&d), idx[64] = {0};
		for (int64_t k = 0; k < n; k++) {
			int64_t off = 0, c = 1;
			for (int i = d.ndim - 1; i >= 0; i--) {
				off += idx[i] * (d.strides ? d.strides[i] : c);
				c *= d.shape[i];
			}
			sum += *(const double *)((const char *)d.data + d.byte_offset + off * 8);
			for (int i = d.ndim - 1; i >= 0; i--) {
				if (++idx[i] < d.shape[i]) break;
				idx[i] = 0;
			}
		}
	}
	PyObject *strides = d.strides ? tuple64(d.strides, d.ndim) : (Py_INCREF(Py_None), Py_None);
	return Py_BuildValue("(NNN(iii)(ii)Kd)", PyLong_FromVoidPtr(d.data), tuple64(d.shape, d.ndim), strides,
		d.dtype.code, d.dtype.bits, d.dtype.lanes, d.device.device_type, d.device.device_id,
		(unsigned long long)d.byte_offset, sum);
}

static void set_error(void *ctx, const char *kind, const char *message) {
	PyObject *builtins = PyEval_GetBuiltins(); /* borrowed */
	PyObject *exc = builtins ? PyDict_GetItemString(builtins, kind) : NULL;
	if (exc == NULL || !PyExceptionClass_Check(exc)) exc = PyExc_RuntimeError;
	PyErr_SetString(exc, message);
	(*(int *)ctx)++;
}

/* alloc(cls, shape, code, bits, lanes, device_type=1, null_shape=False): an HTensor owning a
 * tensor of cls's allocator */
static PyObject *alloc(PyObject *self, PyObject *args) {
	PyObject *cls, *shape;
	int code, bits, lanes, devtype = dlpg_kDLCPU, ndim_override = -1;
	if (!PyArg_ParseTuple(args, "OOiii|ii", &cls, &shape, &code, &bits, &lanes, &devtype, &ndim_override))
		return NULL;
	const dlpg_exchange_api *api = api_for(cls);
	if (api == NULL) return NULL;
	PyObject *sh = PySequence_Tuple(shape);
	if (sh == NULL) return NULL;
	int64_t dims[70] = {0};
	int nd = (int)PyTuple_GET_SIZE(sh);
	for (int i = 0; i < nd && i < 70; i++) dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(sh, i));
	Py_DECREF(sh);
	if (PyErr_Occurred()) return NULL;
	dlpg_tensor proto;
	memset(&proto, 0, sizeof proto);
	proto.device.device_type = devtype;
	proto.ndim = ndim_override >= 0 ? ndim_override : nd;
	proto.dtype.code = code, proto.dtype.bits = bits, proto.dtype.lanes = lanes;
	proto.shape = ndim_override >= 0 && nd == 0 ? NULL : dims;
	dlpg_managed_versioned *m = NULL;
	int errors = 0;
	int rc = api->managed_tensor_allocator(&proto, &m, &errors, set_error);
	if (rc != 0) {
		if (errors != 1) {
			PyErr_Clear();
			return PyErr_Format(PyExc_SystemError, "xharness: allocator failed with %d set_error calls", errors);
		}
		return NULL;
	}
	if (m == NULL || errors != 0) return PyErr_Format(PyExc_SystemError, "xharness: allocator success is inconsistent");
	return ht_wrap(&HTensorType, m);
}

/* to_py(cls, h): hands the HTensor h's managed tensor (h gives it up) to cls's
 * managed_tensor_to_py_object_no_sync and returns what that makes */
static PyObject *to_py(PyObject *self, PyObject *args) {
	PyObject *cls;
	HTensor *h;
	if (!PyArg_ParseTuple(args, "OO!", &cls, &HTensorType, &h)) return NULL;
	const dlpg_exchange_api *api = api_for(cls);
	if (api == NULL) return NULL;
	dlpg_managed_versioned *m = h->m;
	h->m = NULL;
	if (m == NULL) return PyErr_Format(PyExc_ValueError, "xharness: tensor released");
	void *out = NULL;
	if (api->managed_tensor_to_py_object_no_sync(m, &out) != 0) {
		raise_if_silent("managed_tensor_to_py_object_no_sync");
		return NULL;
	}
	return out;
}

/* to_py_raw(cls, major): a fresh 1-d float64 tensor of 3 elements with the given major version
 * handed to cls's to_py_object (a consumer must refuse, and delete, another major) */
static PyObject *to_py_raw(PyObject *self, PyObject *args) {
	PyObject *cls;
	unsigned major;
	if (!PyArg_ParseTuple(args, "OI", &cls, &major)) return NULL;
	const dlpg_exchange_api *api = api_for(cls);
	if (api == NULL) return NULL;
	hx *x = hx_new();
	if (x == NULL || (x->buffer = calloc(3, 8)) == NULL) return PyErr_NoMemory();
	live_allocs++;
	x->m.version.major = major;
	x->shape[0] = 3, x->strides[0] = 1;
	x->m.dl_tensor.data = x->buffer;
	x->m.dl_tensor.device.device_type = dlpg_kDLCPU;
	x->m.dl_tensor.ndim = 1;
	x->m.dl_tensor.dtype.code = dlpg_kDLFloat, x->m.dl_tensor.dtype.bits = 64, x->m.dl_tensor.dtype.lanes = 1;
	x->m.dl_tensor.shape = x->shape, x->m.dl_tensor.strides = x->strides;
	void *out = NULL;
	if (api->managed_tensor_to_py_object_no_sync(&x->m, &out) != 0) {
		raise_if_silent("managed_tensor_to_py_object_no_sync");
		return NULL;
	}
	return out;
}

static PyObject *stream(PyObject *self, PyObject *args) {
	PyObject *cls;
	int dt, id;
	if (!PyArg_ParseTuple(args, "Oii", &cls, &dt, &id)) return NULL;
	const dlpg_exchange_api *api = api_for(cls);
	if (api == NULL) return NULL;
	void *s = (void *)1;
	if (api->current_work_stream(dt, id, &s) != 0) {
		raise_if_silent("current_work_stream");
		return NULL;
	}
	return PyLong_FromVoidPtr(s);
}

static PyObject *counts(PyObject *self, PyObject *unused) {
	return Py_BuildValue("{sLsLsLsLsLsLsLsL}", "made", made, "deleted", deleted, "double_deletes",
		double_deletes, "live_allocs", live_allocs, "from_calls", from_calls, "to_calls", to_calls,
		"view_calls", view_calls, "alloc_calls", alloc_calls);
}

static PyObject *purge(PyObject *self, PyObject *unused) {
	for (size_t i = 0; i < GRAVE; i++) {
		free(grave[i]);
		grave[i] = NULL;
	}
	Py_RETURN_NONE;
}

/* -- benchmarks, in C: ns per tensor ----------------------------------------------------------- */

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* bench_api(x, n): type(x)'s managed_tensor_from_py_object_no_sync, then the deleter */
static PyObject *bench_api(PyObject *self, PyObject *args) {
	PyObject *x;
	long n;
	if (!PyArg_ParseTuple(args, "Ol", &x, &n)) return NULL;
	const dlpg_exchange_api *api = api_for((PyObject *)Py_TYPE(x));
	if (api == NULL) return NULL;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		dlpg_managed_versioned *m;
		if (api->managed_tensor_from_py_object_no_sync(x, &m) != 0) return NULL;
		if (m->deleter != NULL) m->deleter(m);
	}
	return PyFloat_FromDouble((now_ns() - t0) / n);
}

/* bench_view(x, n): type(x)'s dltensor_from_py_object_no_sync */
static PyObject *bench_view(PyObject *self, PyObject *args) {
	PyObject *x;
	long n;
	if (!PyArg_ParseTuple(args, "Ol", &x, &n)) return NULL;
	const dlpg_exchange_api *api = api_for((PyObject *)Py_TYPE(x));
	if (api == NULL || api->dltensor_from_py_object_no_sync == NULL) return NULL;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		dlpg_tensor d;
		if (api->dltensor_from_py_object_no_sync(x, &d) != 0) return NULL;
	}
	return PyFloat_FromDouble((now_ns() - t0) / n);
}

/* bench_capsule(x, n): x.__dlpack__(max_version=(1, 3)), take the capsule as a consumer does
 * (rename it used_...), then the deleter */
static PyObject *bench_capsule(PyObject *self, PyObject *args) {
	PyObject *x;
	long n;
	if (!PyArg_ParseTuple(args, "Ol", &x, &n)) return NULL;
	PyObject *meth = PyObject_GetAttrString(x, "__dlpack__");
	if (meth == NULL) return NULL;
	PyObject *empty = PyTuple_New(0), *kw = Py_BuildValue("{s(ii)}", "max_version", 1, 3);
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		PyObject *c = PyObject_Call(meth, empty, kw);
		if (c == NULL) goto fail;
		dlpg_managed_versioned *m = PyCapsule_GetPointer(c, "dltensor_versioned");
		if (m == NULL || PyCapsule_SetName(c, "used_dltensor_versioned") != 0) {
			Py_DECREF(c);
			goto fail;
		}
		Py_DECREF(c);
		if (m->deleter != NULL) m->deleter(m);
	}
	double dt = (now_ns() - t0) / n;
	Py_DECREF(meth), Py_DECREF(empty), Py_DECREF(kw);
	return PyFloat_FromDouble(dt);
fail:
	Py_DECREF(meth), Py_DECREF(empty), Py_DECREF(kw);
	return NULL;
}

/* bench_to_py(cls, h, n): cls's managed_tensor_to_py_object_no_sync of a share of the HTensor h
 * (what a framework pays to hand a tensor to cls), then the object is dropped */
static PyObject *bench_to_py(PyObject *self, PyObject *args) {
	PyObject *cls;
	HTensor *h;
	long n;
	if (!PyArg_ParseTuple(args, "OO!l", &cls, &HTensorType, &h, &n)) return NULL;
	const dlpg_exchange_api *api = api_for(cls);
	if (api == NULL) return NULL;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		dlpg_managed_versioned *m;
		if (share_of(h, &m) != 0) return NULL;
		void *out;
		if (api->managed_tensor_to_py_object_no_sync(m, &out) != 0) return NULL;
		Py_DECREF((PyObject *)out);
	}
	return PyFloat_FromDouble((now_ns() - t0) / n);
}

static PyMethodDef methods[] = {
	{"api_capsule", api_capsule, METH_O, NULL},
	{"make", (PyCFunction)(void (*)(void))make, METH_VARARGS | METH_KEYWORDS, NULL},
	{"consume", consume, METH_O, NULL},
	{"consume_as", consume_as, METH_VARARGS, NULL},
	{"view", view, METH_O, NULL},
	{"alloc", alloc, METH_VARARGS, NULL},
	{"to_py", to_py, METH_VARARGS, NULL},
	{"to_py_raw", to_py_raw, METH_VARARGS, NULL},
	{"stream", stream, METH_VARARGS, NULL},
	{"counts", counts, METH_NOARGS, NULL},
	{"purge", purge, METH_NOARGS, NULL},
	{"bench_api", bench_api, METH_VARARGS, NULL},
	{"bench_view", bench_view, METH_VARARGS, NULL},
	{"bench_capsule", bench_capsule, METH_VARARGS, NULL},
	{"bench_to_py", bench_to_py, METH_VARARGS, NULL},
	{NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "xharness", NULL, -1, methods};

PyMODINIT_FUNC PyInit_xharness(void) {
	if (PyType_Ready(&HTensorType) < 0) return NULL;
	PyObject *cap = PyCapsule_New(&api13, DLPG_EXCHANGE_API_CAPSULE_NAME, NULL);
	if (cap == NULL || PyDict_SetItemString(HTensorType.tp_dict, DLPG_EXCHANGE_API_ATTR, cap) != 0) return NULL;
	Py_DECREF(cap);
	PyType_Modified(&HTensorType);
	PyObject *m = PyModule_Create(&module);
	if (m == NULL) return NULL;
	Py_INCREF(&HTensorType);
	if (PyModule_AddObject(m, "HTensor", (PyObject *)&HTensorType) != 0) return NULL;
	PyModule_AddIntConstant(m, "FAKE_STREAM", (long)(uintptr_t)FAKE_STREAM);
	return m;
}
