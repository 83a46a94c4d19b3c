/*
 * call.h: the C half of registered-function calls (register.go, call.go, call.c). Like
 * pyexchange.h, it reaches the Python C API only through addresses the Python module hands over
 * (dlpackgo_call_init), in a table of its own.
 */
#ifndef DLPACKGO_CALL_H
#define DLPACKGO_CALL_H

#include <stdint.h>

#include "pyexchange.h"

/* How a parameter or result crosses (register.go's kind). */
enum { PXG_K_TENSOR = 1, PXG_K_INT, PXG_K_UINT, PXG_K_FLOAT, PXG_K_BOOL, PXG_K_STRING };

#define PXG_MAX_PARAMS 32
#define PXG_MAX_RESULTS 8
#define PXG_NAME_LEN 64

/* A registered function as the builtin that calls it knows it. */
typedef struct {
	int32_t id, nparams, nresults;
	uint8_t params[PXG_MAX_PARAMS], results[PXG_MAX_RESULTS];
	char name[PXG_NAME_LEN];
	char pnames[PXG_MAX_PARAMS][PXG_NAME_LEN];
} pxg_fn;

/*
 * One argument or result. Arguments: i (int), u (uint), f (float), i != 0 (bool), p and n
 * (string bytes, not NUL-terminated; tensor: the managed tensor, n = 1 versioned, 0 legacy,
 * or n = PXG_ARG_HANDLE and u = the handle of a tensor Go has).
 * Results: the same, except that a tensor result is p = an exported DLManagedTensorVersioned
 * (n = 0) or u = a handle (n = 1: the caller asked for handles, or the tensor is on a device whose
 * exports synchronize streams, see call.go's store), with its device in dev_type and dev_id, and a
 * string result's p is malloc'ed memory the caller frees.
 */
typedef struct {
	int64_t i;
	uint64_t u;
	double f;
	void *p;
	int64_t n;
	int32_t dev_type, dev_id;
} pxg_value;

/* pxg_value.n of a tensor argument passed as the handle of a dlpackgo.Tensor (u). */
#define PXG_ARG_HANDLE 2
/* pxg_value.n of a tensor argument passed as a NumPy array: p is a pxg_np_arg of numpy.c (its
 * managed tensor, on call.c's stack: see pxg_np_arg). */
#define PXG_ARG_NUMPY 3

/* The Python C API entries dlpackgo_call_init takes, by index (functions, then objects). */
enum {
	PXG_CAPI_EVAL_SAVE_THREAD,
	PXG_CAPI_EVAL_RESTORE_THREAD,
	PXG_CAPI_LONG_AS_LONG_LONG,
	PXG_CAPI_LONG_AS_UNSIGNED_LONG_LONG,
	PXG_CAPI_FLOAT_AS_DOUBLE,
	PXG_CAPI_UNICODE_AS_UTF8_AND_SIZE,
	PXG_CAPI_ERR_OCCURRED,
	PXG_CAPI_ERR_FORMAT,
	PXG_CAPI_ERR_SET_STRING,
	PXG_CAPI_ERR_EXCEPTION_MATCHES,
	PXG_CAPI_LONG_FROM_LONG_LONG,
	PXG_CAPI_LONG_FROM_UNSIGNED_LONG_LONG,
	PXG_CAPI_FLOAT_FROM_DOUBLE,
	PXG_CAPI_UNICODE_DECODE_UTF8,
	PXG_CAPI_TUPLE_NEW,
	PXG_CAPI_TUPLE_SET_ITEM,
	PXG_CAPI_CAPSULE_NEW,
	PXG_CAPI_CAPSULE_IS_VALID,
	PXG_CAPI_CAPSULE_GET_POINTER,
	PXG_CAPI_CAPSULE_SET_NAME,
	PXG_CAPI_CFUNCTION_NEW_EX,
	PXG_CAPI_INCREF,
	PXG_CAPI_DECREF,
	PXG_CAPI_ERR_NO_MEMORY,
	PXG_CAPI_NUMBER_INDEX,
	PXG_CAPI_OBJECT_TYPE,
	PXG_CAPI_OBJECT_GET_ATTR_STRING,
	PXG_CAPI_CALL_FUNCTION_OBJ_ARGS,
	PXG_CAPI_TYPE_FROM_SPEC,
	PXG_CAPI_TYPE_GENERIC_ALLOC,
	PXG_CAPI_TYPE_GET_SLOT,
	PXG_CAPI_GC_UNTRACK,
	PXG_CAPI_VECTORCALL_CALL,
	PXG_CAPI_OBJECT_VECTORCALL,
	PXG_CAPI_OBJECT_IS_TRUE,
	PXG_CAPI_OBJECT_GET_ATTR,
	PXG_CAPI_TRUE,
	PXG_CAPI_FALSE,
	PXG_CAPI_NONE,
	PXG_CAPI_EXC_TYPE_ERROR,
	PXG_CAPI_EXC_OVERFLOW_ERROR,
	PXG_CAPI_EXC_GO_ERROR,        /* dlpackgo.GoError */
	PXG_CAPI_EXC_GO_VALUE_ERROR,  /* dlpackgo.GoValueError */
	PXG_CAPI_EXC_GO_TYPE_ERROR,   /* dlpackgo.GoTypeError */
	PXG_CAPI_EXC_GO_BUFFER_ERROR, /* dlpackgo.GoBufferError */
	PXG_CAPI_EXC_GO_MEMORY_ERROR, /* dlpackgo.GoMemoryError */
	PXG_CAPI_EXC_GO_PANIC,        /* dlpackgo.GoPanic */
	PXG_CAPI_CAPSULE_OF,          /* capsule_of(x): x's unused DLPack capsule (_functions.py) */
	PXG_CAPI_TENSOR_TYPE,         /* dlpackgo.Tensor */
	PXG_CAPI_HANDLE_NAME,         /* "_handle" (interned) */
	PXG_CAPI_COUNT
};

/* pxg_release_with_gil runs fn(arg) with the GIL held: at once, taking the GIL, or, on a thread
 * inside a call whose GIL the call released, when the call returns and has taken it back. It is
 * how the deleters of memory Python objects own let go of it from wherever Go releases them. */
void pxg_release_with_gil(void (*fn)(void *), void *arg);

/* numpy.c: NumPy arrays read in C. pxg_numpy_attach takes PXG_NP_COUNT entries: the Python C API
 * functions and objects below, then numpy.ndarray (0: the reader stays off), sizeof(PyObject),
 * numpy.memmap, four entries of NumPy's own C API, PXG_NP_DTYPES DLPack dtypes by NumPy type
 * number (code | bits << 8 | lanes << 16, 0 for none), and PXG_NP_RESULTS pairs (DLPack dtype,
 * NumPy type number) of the dtypes results may have (0, 0 for none). */
enum {
	PXG_NP_INCREF,
	PXG_NP_DECREF,
	PXG_NP_CAPSULE_NEW,
	PXG_NP_CAPSULE_IS_VALID,
	PXG_NP_CAPSULE_GET_POINTER,
	PXG_NP_CAPSULE_SET_NAME,
	PXG_NP_LONG_FROM_VOID_PTR,
	PXG_NP_ERR_NO_MEMORY,
	PXG_NP_ERR_SET_STRING,
	PXG_NP_TUPLE_NEW,
	PXG_NP_TUPLE_SET_ITEM,
	PXG_NP_LONG_FROM_LONG_LONG,
	PXG_NP_CFUNCTION_NEW_EX,
	PXG_NP_CAPSULE_SET_CONTEXT,
	PXG_NP_CAPSULE_GET_CONTEXT,
	PXG_NP_NONE,
	PXG_NP_VALUE_ERROR,
	PXG_NP_BUFFER_ERROR,
	PXG_NP_NDARRAY,
	PXG_NP_HEADER,
	PXG_NP_MEMMAP,
	PXG_NP_ARRAY_TYPE,       /* NumPy's C API (its _ARRAY_API table): &PyArray_Type, [2] */
	PXG_NP_DESCR_FROM_TYPE,  /* PyArray_DescrFromType, [45] */
	PXG_NP_NEW_FROM_DESCR,   /* PyArray_NewFromDescr, [94] */
	PXG_NP_SET_BASE_OBJECT,  /* PyArray_SetBaseObject, [282]; all four 0: results stay off */
	PXG_NP_DTYPE_TABLE,
	PXG_NP_DTYPES = 32,
	PXG_NP_RESULTS = 16, /* (DLPack dtype, NumPy type number) pairs of the result table */
	PXG_NP_COUNT = PXG_NP_DTYPE_TABLE + PXG_NP_DTYPES + 2 * PXG_NP_RESULTS
};
#define PXG_NP_MAX_NDIM 64 /* core.MaxNdim */

int pxg_numpy_attach(const uintptr_t *cfg, int n);
void pxg_numpy_off(void);
/* pxg_numpy_reads returns how many managed tensors the reader has made. */
int64_t pxg_numpy_reads(void);
/* pxg_numpy_is reports whether obj is exactly a numpy.ndarray (and the reader is on). */
int pxg_numpy_is(void *obj);
/* pxg_numpy_managed returns a new managed tensor over ndarray obj's memory that holds a
 * reference to obj (*status 1); NULL with *status 0 when the reader declines obj (ask __dlpack__
 * instead), or with *status -1 and a Python exception set when out of memory. The GIL is held. */
pxg_managed_versioned *pxg_numpy_managed(void *obj, int *status);
/* pxg_numpy_delete lets go of a managed tensor pxg_numpy_managed made; the GIL is held. */
void pxg_numpy_delete(pxg_managed_versioned *m);

/* A NumPy array argument of a call (PXG_ARG_NUMPY), read in C onto the caller's stack: Go reads
 * m only while the call runs, and lets go of the array (m.manager_ctx, a reference the reader
 * took) exactly once, through call.c after the call (pxg_value.i = 1) or pxg_numpy_drop later;
 * m.deleter is NULL. */
#define PXG_NP_INLINE 8 /* dimensions kept in dims; more are malloc'ed (heap) */
typedef struct {
	pxg_managed_versioned m;
	int64_t *heap;
	int64_t dims[2 * PXG_NP_INLINE];
} pxg_np_arg;
/* pxg_numpy_arg reads ndarray obj into arg: 1 (a reference to obj taken), 0 when the reader
 * declines obj (ask __dlpack__ instead), -1 with a Python exception set when out of memory. The
 * GIL is held. */
int pxg_numpy_arg(void *obj, pxg_np_arg *arg);
/* pxg_numpy_arg_done frees what pxg_numpy_arg allocated once Go has imported arg, and drops the
 * reference to the array if drop; the GIL is held. */
void pxg_numpy_arg_done(pxg_np_arg *arg, int drop);
/* pxg_numpy_drop drops a reference to array obj, with the GIL (pxg_release_with_gil): a NumPy
 * argument Go released after the call returned. */
void pxg_numpy_drop(void *obj);
/* pxg_pending_take validates m, a producer's DLManagedTensor if legacy else
 * DLManagedTensorVersioned, as Go would (dlpack_validate.h), and returns a new pending import (a
 * capsule) owning it; a refused m, or one out of memory, has its deleter run and gets NULL with
 * an exception set (BufferError naming the rule). The GIL is held. */
void *pxg_pending_take(void *m, int legacy);
/* pxg_numpy_result makes a NumPy array over the memory of m, an export of a registered
 * function's host result, whose base is an unused capsule of m (its destructor runs m's deleter
 * when the array goes): *status 1. It declines (NULL, *status 0, m untouched) a tensor NumPy cannot
 * hold, or when NumPy's C API is off; out of memory it runs m's deleter and returns NULL with an
 * exception set (*status -1). The GIL is held. */
void *pxg_numpy_result(pxg_managed_versioned *m, int *status);
/* pxg_numpy_results_on reports whether pxg_numpy_result may build arrays. */
int pxg_numpy_results_on(void);
/* pxg_numpy_builtin returns a new reference to builtin 0 pend, 1 adopt, 2 describe or 3 readonly. */
void *pxg_numpy_builtin(int which);

int pxg_call_attach(const uintptr_t *api, int n);
void *pxg_caller_new(const pxg_fn *fn);
/* pxg_function_new returns a new dlpackgo.GoFunction calling fn (copied), whose calls it cannot
 * take in C go to python_fn, or NULL with a Python exception set. convert (or None) is the
 * Python callable that turns a tensor result C did not make a NumPy array of into what Python
 * returns: with it, C takes calls of functions with tensor results too, whose host results
 * become NumPy arrays in C (pxg_numpy_result), which array_convert (or None) turns into what
 * Python returns (torch.from_numpy). The caller holds the GIL. */
void *pxg_function_new(const pxg_fn *fn, void *python_fn, void *convert, void *array_convert);
/* pxg_torch_init gives call.c torch._C._from_dlpack (once per process; None is ignored): a
 * function whose host results go to torch (an array_convert) then has them made by it, from a
 * legacy capsule, rather than through a NumPy array. The caller holds the GIL. */
int pxg_torch_init(void *from_dlpack);
void *pxg_releaser_new(void);

#endif
