// Package ctest holds the C code that the tests of package cdlpack drive: a C consumer of
// exported tensors, a C producer of tensors to import (with deleters that count their calls),
// and the C view of the DLPack layout, so that the tests (which cannot use cgo themselves)
// compare Go and C on real C code. It is for tests only.
package ctest

/*
#cgo CFLAGS: -I${SRCDIR}/../.. -Wall
#cgo LDFLAGS: -lpthread
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "dlpack_abi.h"

// ---- layout -------------------------------------------------------------------------------

static void ctest_layout(int64_t *out) {
	int i = 0;
	out[i++] = sizeof(dlpg_version);
	out[i++] = offsetof(dlpg_version, major);
	out[i++] = offsetof(dlpg_version, minor);
	out[i++] = sizeof(dlpg_device);
	out[i++] = offsetof(dlpg_device, device_type);
	out[i++] = offsetof(dlpg_device, device_id);
	out[i++] = sizeof(dlpg_dtype);
	out[i++] = offsetof(dlpg_dtype, code);
	out[i++] = offsetof(dlpg_dtype, bits);
	out[i++] = offsetof(dlpg_dtype, lanes);
	out[i++] = sizeof(dlpg_tensor);
	out[i++] = offsetof(dlpg_tensor, data);
	out[i++] = offsetof(dlpg_tensor, device);
	out[i++] = offsetof(dlpg_tensor, ndim);
	out[i++] = offsetof(dlpg_tensor, dtype);
	out[i++] = offsetof(dlpg_tensor, shape);
	out[i++] = offsetof(dlpg_tensor, strides);
	out[i++] = offsetof(dlpg_tensor, byte_offset);
	out[i++] = sizeof(dlpg_managed);
	out[i++] = offsetof(dlpg_managed, dl_tensor);
	out[i++] = offsetof(dlpg_managed, manager_ctx);
	out[i++] = offsetof(dlpg_managed, deleter);
	out[i++] = sizeof(dlpg_managed_versioned);
	out[i++] = offsetof(dlpg_managed_versioned, version);
	out[i++] = offsetof(dlpg_managed_versioned, manager_ctx);
	out[i++] = offsetof(dlpg_managed_versioned, deleter);
	out[i++] = offsetof(dlpg_managed_versioned, flags);
	out[i++] = offsetof(dlpg_managed_versioned, dl_tensor);
	out[i++] = sizeof(dlpg_device_type);
}

static const int64_t ctest_device_types[] = {
	dlpg_kDLCPU, dlpg_kDLCUDA, dlpg_kDLCUDAHost, dlpg_kDLOpenCL, dlpg_kDLVulkan, dlpg_kDLMetal,
	dlpg_kDLVPI, dlpg_kDLROCM, dlpg_kDLROCMHost, dlpg_kDLExtDev, dlpg_kDLCUDAManaged,
	dlpg_kDLOneAPI, dlpg_kDLWebGPU, dlpg_kDLHexagon, dlpg_kDLMAIA, dlpg_kDLTrn,
	dlpg_kDLTPU, dlpg_kDLTPUHost, dlpg_kDLAscend,
};

static const int64_t ctest_dtype_codes[] = {
	dlpg_kDLInt, dlpg_kDLUInt, dlpg_kDLFloat, dlpg_kDLOpaqueHandle, dlpg_kDLBfloat,
	dlpg_kDLComplex, dlpg_kDLBool, dlpg_kDLFloat8_e3m4, dlpg_kDLFloat8_e4m3,
	dlpg_kDLFloat8_e4m3b11fnuz, dlpg_kDLFloat8_e4m3fn, dlpg_kDLFloat8_e4m3fnuz,
	dlpg_kDLFloat8_e5m2, dlpg_kDLFloat8_e5m2fnuz, dlpg_kDLFloat8_e8m0fnu,
	dlpg_kDLFloat6_e2m3fn, dlpg_kDLFloat6_e3m2fn, dlpg_kDLFloat4_e2m1fn, dlpg_kDLBcomplex,
};

static const uint64_t ctest_flags[] = {
	DLPG_FLAG_READ_ONLY, DLPG_FLAG_IS_COPIED, DLPG_FLAG_IS_SUBBYTE_TYPE_PADDED,
};

static int64_t ctest_device_type(int i) { return ctest_device_types[i]; }
static int ctest_num_device_types(void) { return sizeof ctest_device_types / sizeof ctest_device_types[0]; }
static int64_t ctest_dtype_code(int i) { return ctest_dtype_codes[i]; }
static int ctest_num_dtype_codes(void) { return sizeof ctest_dtype_codes / sizeof ctest_dtype_codes[0]; }
static uint64_t ctest_flag(int i) { return ctest_flags[i]; }

// ---- consumer -----------------------------------------------------------------------------

// Result codes of the consumer.
enum {
	CT_OK = 0, CT_BAD_VERSION = 1, CT_BAD_DTYPE = 2, CT_BAD_DEVICE = 3, CT_NULL_STRIDES = 4,
	CT_BAD_OFFSET = 5, CT_NULL = 6,
};

static double ctest_elem(const dlpg_tensor *t, const char *p) {
	switch (t->dtype.code) {
	case dlpg_kDLFloat:
		return t->dtype.bits == 32 ? (double)*(const float *)p : *(const double *)p;
	case dlpg_kDLInt:
		switch (t->dtype.bits) {
		case 8: return *(const int8_t *)p;
		case 16: return *(const int16_t *)p;
		case 32: return *(const int32_t *)p;
		default: return (double)*(const int64_t *)p;
		}
	default: // uint8
		return *(const uint8_t *)p;
	}
}

// ctest_sum adds up the elements of a host tensor honoring its strides, the way a careful C
// consumer does: it refuses NULL strides for ndim > 0 (DLPack >= 1.2 requires them) and a
// non-zero byte_offset (we promise data at the first element).
static int ctest_sum(const dlpg_tensor *t, double *sum) {
	*sum = 0;
	if (t->device.device_type != dlpg_kDLCPU) return CT_BAD_DEVICE;
	if (t->dtype.lanes != 1) return CT_BAD_DTYPE;
	int64_t size;
	switch (t->dtype.code) {
	case dlpg_kDLFloat: if (t->dtype.bits != 32 && t->dtype.bits != 64) return CT_BAD_DTYPE; break;
	case dlpg_kDLInt: if (t->dtype.bits % 8 || t->dtype.bits > 64) return CT_BAD_DTYPE; break;
	case dlpg_kDLUInt: if (t->dtype.bits != 8) return CT_BAD_DTYPE; break;
	default: return CT_BAD_DTYPE;
	}
	size = t->dtype.bits / 8;
	if (t->byte_offset != 0) return CT_BAD_OFFSET;
	if (t->ndim > 0 && (t->strides == NULL || t->shape == NULL)) return CT_NULL_STRIDES;
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
	if (n == 0) return CT_OK;
	int64_t idx[64] = {0};
	for (int64_t k = 0; k < n; k++) {
		int64_t off = 0;
		for (int i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
		*sum += ctest_elem(t, (const char *)t->data + off * size);
		for (int i = t->ndim - 1; i >= 0; i--) {
			if (++idx[i] < t->shape[i]) break;
			idx[i] = 0;
		}
	}
	return CT_OK;
}

static int ctest_consume_versioned(void *p, double *sum, uint64_t *flags) {
	dlpg_managed_versioned *m = p;
	if (m == NULL) return CT_NULL;
	if (m->version.major != 1) return CT_BAD_VERSION;
	*flags = m->flags;
	return ctest_sum(&m->dl_tensor, sum);
}

static int ctest_consume_legacy(void *p, double *sum) {
	dlpg_managed *m = p;
	if (m == NULL) return CT_NULL;
	return ctest_sum(&m->dl_tensor, sum);
}

static void ctest_delete_versioned(void *p) {
	dlpg_managed_versioned *m = p;
	if (m->deleter) m->deleter(m);
}

static void ctest_delete_legacy(void *p) {
	dlpg_managed *m = p;
	if (m->deleter) m->deleter(m);
}

// ctest_delete_twice_versioned calls the deleter twice, the second time on a copy of the struct
// taken before the first call (so that the copy is still readable): a deleter that is not
// idempotent frees twice or crashes.
static void ctest_delete_twice_versioned(void *p) {
	dlpg_managed_versioned *m = p;
	dlpg_managed_versioned copy = *m;
	if (m->deleter) m->deleter(m);
	if (copy.deleter) copy.deleter(&copy);
}

static void *ctest_thread_delete_versioned(void *p) { ctest_delete_versioned(p); return NULL; }
static void *ctest_thread_delete_legacy(void *p) { ctest_delete_legacy(p); return NULL; }

// ctest_delete_on_thread calls the deleter from a thread that Go did not create, as a C consumer
// may; it waits for it.
static int ctest_delete_on_thread(void *p, int legacy) {
	pthread_t th;
	int rc = pthread_create(&th, NULL, legacy ? ctest_thread_delete_legacy : ctest_thread_delete_versioned, p);
	if (rc != 0) return rc;
	return pthread_join(th, NULL);
}

// ---- producer -----------------------------------------------------------------------------

#define CT_SLOTS (1 << 16)
static int64_t ctest_counters[CT_SLOTS];

typedef struct {
	int slot;
	void *data;
	int64_t *shape;
	int64_t *strides;
} ctest_ctx;

static void ctest_free_ctx(ctest_ctx *c) {
	__atomic_add_fetch(&ctest_counters[c->slot], 1, __ATOMIC_SEQ_CST);
	free(c->data);
	free(c->shape);
	free(c->strides);
	free(c);
}

static void ctest_producer_deleter_versioned(dlpg_managed_versioned *self) {
	ctest_free_ctx(self->manager_ctx);
	free(self);
}

static void ctest_producer_deleter_legacy(dlpg_managed *self) {
	ctest_free_ctx(self->manager_ctx);
	free(self);
}

// ctest_fill makes a C-order float64 tensor of the given shape holding 0, 1, 2, ..., with shape
// and strides arrays of cap entries (cap >= ndim) so that tests may then corrupt the descriptor.
static ctest_ctx *ctest_fill(dlpg_tensor *t, int slot, int ndim, const int64_t *shape, int cap) {
	ctest_ctx *c = calloc(1, sizeof *c);
	c->slot = slot;
	c->shape = calloc(cap > 0 ? cap : 1, sizeof(int64_t));
	c->strides = calloc(cap > 0 ? cap : 1, sizeof(int64_t));
	int64_t n = 1;
	for (int i = ndim - 1; i >= 0; i--) {
		c->shape[i] = shape[i];
		c->strides[i] = n;
		n *= shape[i];
	}
	c->data = malloc((n > 0 ? n : 1) * sizeof(double));
	for (int64_t k = 0; k < n; k++) ((double *)c->data)[k] = (double)k;
	t->data = c->data;
	t->device.device_type = dlpg_kDLCPU;
	t->device.device_id = 0;
	t->ndim = ndim;
	t->dtype.code = dlpg_kDLFloat;
	t->dtype.bits = 64;
	t->dtype.lanes = 1;
	t->shape = c->shape;
	t->strides = c->strides;
	t->byte_offset = 0;
	return c;
}

static void *ctest_produce_versioned(int slot, int ndim, const int64_t *shape, int cap) {
	dlpg_managed_versioned *m = calloc(1, sizeof *m);
	m->version.major = 1;
	m->version.minor = 3;
	m->manager_ctx = ctest_fill(&m->dl_tensor, slot, ndim, shape, cap);
	m->deleter = ctest_producer_deleter_versioned;
	return m;
}

static void *ctest_produce_legacy(int slot, int ndim, const int64_t *shape, int cap) {
	dlpg_managed *m = calloc(1, sizeof *m);
	m->manager_ctx = ctest_fill(&m->dl_tensor, slot, ndim, shape, cap);
	m->deleter = ctest_producer_deleter_legacy;
	return m;
}

static int64_t ctest_count(int slot) { return __atomic_load_n(&ctest_counters[slot], __ATOMIC_SEQ_CST); }
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

// Layout is the C view of the DLPack structures: sizeof and offsetof of each struct and field,
// keyed like "DLTensor" (size) and "DLTensor.ndim" (offset).
type Layout map[string]uintptr

// layoutKeys names the values ctest_layout writes, in order.
var layoutKeys = []string{
	"DLPackVersion", "DLPackVersion.major", "DLPackVersion.minor",
	"DLDevice", "DLDevice.device_type", "DLDevice.device_id",
	"DLDataType", "DLDataType.code", "DLDataType.bits", "DLDataType.lanes",
	"DLTensor", "DLTensor.data", "DLTensor.device", "DLTensor.ndim", "DLTensor.dtype",
	"DLTensor.shape", "DLTensor.strides", "DLTensor.byte_offset",
	"DLManagedTensor", "DLManagedTensor.dl_tensor", "DLManagedTensor.manager_ctx",
	"DLManagedTensor.deleter",
	"DLManagedTensorVersioned", "DLManagedTensorVersioned.version",
	"DLManagedTensorVersioned.manager_ctx", "DLManagedTensorVersioned.deleter",
	"DLManagedTensorVersioned.flags", "DLManagedTensorVersioned.dl_tensor",
	"DLDeviceType",
}

// CLayout returns sizeof and offsetof of every DLPack struct and field as C sees them.
func CLayout() Layout {
	out := make([]C.int64_t, len(layoutKeys))
	C.ctest_layout(&out[0])
	l := Layout{}
	for i, k := range layoutKeys {
		l[k] = uintptr(out[i])
	}
	return l
}

// CDeviceTypes returns the values of the C enum of device types, in declaration order (kDLCPU
// first, kDLAscend last).
func CDeviceTypes() []int64 {
	out := make([]int64, int(C.ctest_num_device_types()))
	for i := range out {
		out[i] = int64(C.ctest_device_type(C.int(i)))
	}
	return out
}

// CDataTypeCodes returns the values of the C enum of type codes, in declaration order (kDLInt
// first, kDLBcomplex last).
func CDataTypeCodes() []int64 {
	out := make([]int64, int(C.ctest_num_dtype_codes()))
	for i := range out {
		out[i] = int64(C.ctest_dtype_code(C.int(i)))
	}
	return out
}

// CFlags returns the C flag bits READ_ONLY, IS_COPIED and IS_SUBBYTE_TYPE_PADDED, in that order.
func CFlags() []uint64 {
	return []uint64{uint64(C.ctest_flag(0)), uint64(C.ctest_flag(1)), uint64(C.ctest_flag(2))}
}

// Consumer result codes (see Sum*).
const (
	OK            = 0
	BadVersion    = 1
	BadDType      = 2
	BadDevice     = 3
	NullStrides   = 4
	NonZeroOffset = 5
	NullPointer   = 6
)

func consumerErr(rc C.int) error {
	if rc == OK {
		return nil
	}
	return fmt.Errorf("ctest: C consumer refused the tensor (code %d)", int(rc))
}

// SumVersioned is a C consumer: it checks the version, reads every element of a host float32,
// float64, int or uint8 tensor honoring its strides, and returns their sum and the flags. It
// does not call the deleter.
func SumVersioned(m *core.DLManagedTensorVersioned) (sum float64, flags uint64, err error) {
	var s C.double
	var f C.uint64_t
	rc := C.ctest_consume_versioned(unsafe.Pointer(m), &s, &f)
	return float64(s), uint64(f), consumerErr(rc)
}

// SumLegacy is SumVersioned for a legacy DLManagedTensor.
func SumLegacy(m *core.DLManagedTensor) (float64, error) {
	var s C.double
	rc := C.ctest_consume_legacy(unsafe.Pointer(m), &s)
	return float64(s), consumerErr(rc)
}

// DeleteVersioned calls m's deleter from C, as a C consumer does when done.
func DeleteVersioned(m *core.DLManagedTensorVersioned) { C.ctest_delete_versioned(unsafe.Pointer(m)) }

// DeleteLegacy calls m's deleter from C.
func DeleteLegacy(m *core.DLManagedTensor) { C.ctest_delete_legacy(unsafe.Pointer(m)) }

// DeleteTwiceVersioned calls m's deleter, then the deleter again on a copy of m taken before the
// first call (a buggy consumer): the second call must do nothing.
func DeleteTwiceVersioned(m *core.DLManagedTensorVersioned) {
	C.ctest_delete_twice_versioned(unsafe.Pointer(m))
}

// DeleteOnThread calls the deleter from a new C thread (pthread) that Go did not create, and
// waits for it. p is a *core.DLManagedTensorVersioned, or a *core.DLManagedTensor if legacy.
func DeleteOnThread(p unsafe.Pointer, legacy bool) error {
	l := C.int(0)
	if legacy {
		l = 1
	}
	if rc := C.ctest_delete_on_thread(p, l); rc != 0 {
		return fmt.Errorf("ctest: pthread: error %d", int(rc))
	}
	return nil
}

// Counter identifies the deleter-call counter of produced tensors.
type Counter int

var nextSlot atomic.Int64

// NewCounter returns a fresh counter, at zero, for the deleters of produced tensors.
func NewCounter() Counter {
	s := nextSlot.Add(1)
	if s >= 1<<16 {
		panic("ctest: out of counters")
	}
	return Counter(s)
}

// Calls returns how many times deleters counting into c have run.
func (c Counter) Calls() int64 { return int64(C.ctest_count(C.int(c))) }

func cShape(shape []int64, capacity int) (*C.int64_t, int) {
	if capacity < len(shape) {
		capacity = len(shape)
	}
	if len(shape) == 0 {
		return nil, capacity
	}
	return (*C.int64_t)(unsafe.Pointer(&shape[0])), capacity
}

// ProduceVersioned is a C producer: it mallocs a C-order float64 tensor of the given shape
// holding 0, 1, 2, ..., its shape and strides arrays (with room for capacity entries, so a test
// may corrupt ndim and the arrays), and a managed struct whose deleter increments c and frees it
// all.
func ProduceVersioned(c Counter, capacity int, shape ...int64) *core.DLManagedTensorVersioned {
	p, cp := cShape(shape, capacity)
	return (*core.DLManagedTensorVersioned)(C.ctest_produce_versioned(C.int(c), C.int(len(shape)), p, C.int(cp)))
}

// ProduceLegacy is ProduceVersioned for a legacy DLManagedTensor.
func ProduceLegacy(c Counter, capacity int, shape ...int64) *core.DLManagedTensor {
	p, cp := cShape(shape, capacity)
	return (*core.DLManagedTensor)(C.ctest_produce_legacy(C.int(c), C.int(len(shape)), p, C.int(cp)))
}
