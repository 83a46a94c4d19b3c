/*
 * exchange_api.h: the DLPack 1.3 C exchange API of package pyexchange (exchange_api.c). Like
 * pyexchange.h, it reaches the Python C API only through addresses the Python module hands over
 * (dlpackgo_exchange_init), so the library links against no libpython.
 */
#ifndef DLPACKGO_EXCHANGE_API_H
#define DLPACKGO_EXCHANGE_API_H

#include <stdint.h>

/*
 * The Python C API entries pxe_attach takes, by index: function addresses, then (from
 * PXE_API_NONE on) object addresses. dlpackgo/_exchange.py passes them in this order (_XAPI).
 */
enum {
	PXE_API_GET_ATTR,          /* PyObject_GetAttr */
	PXE_API_SET_ATTR,          /* PyObject_SetAttr */
	PXE_API_IS_INSTANCE,       /* PyObject_IsInstance */
	PXE_API_TYPE,              /* PyObject_Type */
	PXE_API_CFUNCTION_GET_SELF, /* PyCFunction_GetSelf */
	PXE_API_CAPSULE_GET_POINTER,
	PXE_API_CAPSULE_IS_VALID,
	PXE_API_LONG_AS_VOID_PTR,
	PXE_API_LONG_FROM_VOID_PTR,
	PXE_API_LONG_FROM_LONG_LONG,
	PXE_API_LONG_AS_LONG_LONG,
	PXE_API_CALL_FUNCTION_OBJ_ARGS, /* PyObject_CallFunctionObjArgs */
	PXE_API_ERR_OCCURRED,
	PXE_API_ERR_CLEAR,
	PXE_API_ERR_SET_STRING,
	PXE_API_ERR_NO_MEMORY,
	PXE_API_CFUNCTION_NEW_EX,
	PXE_API_INCREF,
	PXE_API_DECREF,
	PXE_API_GIL_ENSURE,
	PXE_API_GIL_RELEASE,
	PXE_API_TYPE_LOOKUP,       /* _PyType_Lookup (borrowed, no exception), or 0 where missing */
	PXE_API_DESCR_NEW_METHOD,  /* PyDescr_NewMethod */
	PXE_API_TUPLE_SIZE,
	PXE_API_TUPLE_GET_ITEM,
	PXE_API_SEQUENCE_GET_ITEM,
	PXE_API_UNICODE_COMPARE_ASCII, /* PyUnicode_CompareWithASCIIString */
	PXE_API_NONE,
	PXE_API_FALSE,
	PXE_API_EXC_TYPE_ERROR,
	PXE_API_EXC_VALUE_ERROR,
	PXE_API_EXC_BUFFER_ERROR,
	PXE_API_EXC_MEMORY_ERROR,
	PXE_API_EXC_RUNTIME_ERROR,
	PXE_API_TENSOR_TYPE,  /* dlpackgo.Tensor */
	PXE_API_MAKER,        /* a callable: maker(handle) -> a new dlpackgo.Tensor adopting it */
	PXE_API_NAME_SHARE,   /* "_share": the Tensor's share builtin, None (not asked) or False */
	PXE_API_NAME_HANDLE,  /* "handle": the Tensor's handle (ValueError once released) */
	PXE_API_NAME_ATTR,    /* "__dlpack_c_exchange_api__" */
	PXE_API_NAME_DEVICE,  /* "_device": the Tensor's device tuple, None until asked */
	PXE_API_NAME_SLOW,    /* "_dlpack_slow": __dlpack__'s Python half */
	PXE_API_NAME_DEVICE_SLOW, /* "_dlpack_device_slow": __dlpack_device__'s */
	PXE_API_NAME_STREAM,  /* the keyword names of __dlpack__: "stream", "max_version", */
	PXE_API_NAME_MAX_VERSION,
	PXE_API_NAME_DL_DEVICE, /* "dl_device", "copy" */
	PXE_API_NAME_COPY,
	PXE_API_TRUE,
	PXE_API_COUNT
};

/* Counters of dlpackgo_exchange_count, by index. */
enum {
	PXE_COUNT_IMPORT_API,      /* Library.from_dlpack through a type's exchange API */
	PXE_COUNT_IMPORT_FALLBACK, /* ... that fell back on __dlpack__ */
	PXE_COUNT_EXPORT_API,      /* managed tensors made by our managed_tensor_from_py_object_no_sync */
	PXE_COUNT_VIEW_API,        /* DLTensors filled by our dltensor_from_py_object_no_sync */
	PXE_COUNT_TO_PY,           /* Tensors made by our managed_tensor_to_py_object_no_sync */
	PXE_COUNT_LIVE_ALLOCS,     /* tensors of our allocator whose deleter has not run */
	PXE_COUNT_ALLOCS,          /* tensors our allocator made */
	PXE_COUNT_N
};

int pxe_attach(const uintptr_t *api, int n);
const void *pxe_api(void);
const char *pxe_capsule_name(void);
void *pxe_builtin(int which);
/* pxe_protocol_method returns a new method descriptor of type tensor_type: 0 __dlpack__,
 * 1 __dlpack_device__ (see exchange_api.c), or NULL with an exception set. */
void *pxe_protocol_method(int which);
int64_t pxe_count(int which);

#endif
