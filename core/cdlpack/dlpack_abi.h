/*
 * dlpack_abi.h: the DLPack v1.3 structures and enumerations, declared for this project from the
 * DLPack specification (dlpack.h v1.3, and the enumeration values DLPack added after the v1.3 tag
 * without changing the ABI: kDLTPU, kDLTPUHost, kDLAscend, kDLBcomplex). Only what the Go bridge
 * and its tests need is declared.
 */
#ifndef DLPACKGO_DLPACK_ABI_H
#define DLPACKGO_DLPACK_ABI_H

#include <stdint.h>

typedef struct {
	uint32_t major;
	uint32_t minor;
} dlpg_version;

typedef enum {
	dlpg_kDLCPU = 1,
	dlpg_kDLCUDA = 2,
	dlpg_kDLCUDAHost = 3,
	dlpg_kDLOpenCL = 4,
	dlpg_kDLVulkan = 7,
	dlpg_kDLMetal = 8,
	dlpg_kDLVPI = 9,
	dlpg_kDLROCM = 10,
	dlpg_kDLROCMHost = 11,
	dlpg_kDLExtDev = 12,
	dlpg_kDLCUDAManaged = 13,
	dlpg_kDLOneAPI = 14,
	dlpg_kDLWebGPU = 15,
	dlpg_kDLHexagon = 16,
	dlpg_kDLMAIA = 17,
	dlpg_kDLTrn = 18,
	dlpg_kDLTPU = 19,
	dlpg_kDLTPUHost = 20,
	dlpg_kDLAscend = 21
} dlpg_device_type;

typedef struct {
	int32_t device_type; /* a dlpg_device_type; the enum's storage is int32 in dlpack.h */
	int32_t device_id;
} dlpg_device;

typedef enum {
	dlpg_kDLInt = 0,
	dlpg_kDLUInt = 1,
	dlpg_kDLFloat = 2,
	dlpg_kDLOpaqueHandle = 3,
	dlpg_kDLBfloat = 4,
	dlpg_kDLComplex = 5,
	dlpg_kDLBool = 6,
	dlpg_kDLFloat8_e3m4 = 7,
	dlpg_kDLFloat8_e4m3 = 8,
	dlpg_kDLFloat8_e4m3b11fnuz = 9,
	dlpg_kDLFloat8_e4m3fn = 10,
	dlpg_kDLFloat8_e4m3fnuz = 11,
	dlpg_kDLFloat8_e5m2 = 12,
	dlpg_kDLFloat8_e5m2fnuz = 13,
	dlpg_kDLFloat8_e8m0fnu = 14,
	dlpg_kDLFloat6_e2m3fn = 15,
	dlpg_kDLFloat6_e3m2fn = 16,
	dlpg_kDLFloat4_e2m1fn = 17,
	dlpg_kDLBcomplex = 18
} dlpg_dtype_code;

typedef struct {
	uint8_t code;
	uint8_t bits;
	uint16_t lanes;
} dlpg_dtype;

typedef struct {
	void *data;
	dlpg_device device;
	int32_t ndim;
	dlpg_dtype dtype;
	int64_t *shape;
	int64_t *strides;
	uint64_t byte_offset;
} dlpg_tensor;

typedef struct dlpg_managed {
	dlpg_tensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct dlpg_managed *self);
} dlpg_managed;

#define DLPG_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define DLPG_FLAG_IS_COPIED (UINT64_C(1) << 1)
#define DLPG_FLAG_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2)

typedef struct dlpg_managed_versioned {
	dlpg_version version;
	void *manager_ctx;
	void (*deleter)(struct dlpg_managed_versioned *self);
	uint64_t flags;
	dlpg_tensor dl_tensor;
} dlpg_managed_versioned;

/*
 * The C exchange API of DLPack 1.3 (dlpack.h: DLPackExchangeAPIHeader, DLPackExchangeAPI and the
 * function pointer types of its entries). A framework publishes one static table per tensor type,
 * as the type attribute __dlpack_c_exchange_api__: a PyCapsule named "dlpack_exchange_api" whose
 * pointer is the table. PyObject* is void* here. The entries that return int return 0 on success
 * and -1 on failure with a Python exception set (the allocator reports through set_error
 * instead, and needs no Python API).
 */
#define DLPG_EXCHANGE_API_CAPSULE_NAME "dlpack_exchange_api"
#define DLPG_EXCHANGE_API_ATTR "__dlpack_c_exchange_api__"

/* set_error(error_ctx, kind, message): kind names a Python exception type ("MemoryError"). */
typedef void (*dlpg_set_error)(void *error_ctx, const char *kind, const char *message);

/* A new managed tensor of prototype's dtype, ndim, shape and device (other fields unused). */
typedef int (*dlpg_managed_tensor_allocator)(dlpg_tensor *prototype, dlpg_managed_versioned **out,
	void *error_ctx, dlpg_set_error set_error);

/* An owning managed tensor over py_object's data, without stream synchronization. */
typedef int (*dlpg_managed_tensor_from_py_object_no_sync)(void *py_object, dlpg_managed_versioned **out);

/* A Python tensor of the producer's type over tensor, whose ownership is stolen. */
typedef int (*dlpg_managed_tensor_to_py_object_no_sync)(dlpg_managed_versioned *tensor, void **out_py_object);

/* A non-owning DLTensor of py_object, valid until control returns to the producer (optional). */
typedef int (*dlpg_dltensor_from_py_object_no_sync)(void *py_object, dlpg_tensor *out);

/* The producer's current work stream on a device (NULL on CPU). device_type is a DLDeviceType. */
typedef int (*dlpg_current_work_stream)(int32_t device_type, int32_t device_id, void **out_current_stream);

typedef struct dlpg_exchange_api_header {
	dlpg_version version;
	struct dlpg_exchange_api_header *prev_api; /* an older table, or NULL */
} dlpg_exchange_api_header;

typedef struct {
	dlpg_exchange_api_header header;
	dlpg_managed_tensor_allocator managed_tensor_allocator;                         /* required */
	dlpg_managed_tensor_from_py_object_no_sync managed_tensor_from_py_object_no_sync; /* required */
	dlpg_managed_tensor_to_py_object_no_sync managed_tensor_to_py_object_no_sync;     /* required */
	dlpg_dltensor_from_py_object_no_sync dltensor_from_py_object_no_sync;             /* may be NULL */
	dlpg_current_work_stream current_work_stream;                                     /* required */
} dlpg_exchange_api;

#endif
