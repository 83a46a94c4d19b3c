/*
 * dlpack_validate.h: core.ValidateDLTensor's checks, in C, for C code of this module that must
 * refuse a producer's tensor before Go sees it (pyexchange's pending imports, which enter Go only
 * on first use). It is a port of core.ValidateDesc and its helpers, rule for rule and in the same
 * order; FuzzValidateInC (core/cdlpack) holds the two to the same answers on random descriptors.
 * It reads the descriptor, never the data.
 */
#ifndef DLPACKGO_DLPACK_VALIDATE_H
#define DLPACKGO_DLPACK_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "dlpack_abi.h"

#define DLPG_MAX_NDIM 64 /* core.MaxNdim */

/* dlpg_mul_ is core's mul: a*b and whether it fits an int64 (|MinInt64| never fits). */
static inline int dlpg_mul_(int64_t a, int64_t b, int64_t *p) {
	uint64_t ua = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
	uint64_t ub = b < 0 ? (uint64_t)0 - (uint64_t)b : (uint64_t)b;
	unsigned __int128 r = (unsigned __int128)ua * ub;
	if ((uint64_t)(r >> 64) != 0 || (uint64_t)r > (uint64_t)INT64_MAX) return 0;
	int64_t v = (int64_t)(uint64_t)r;
	*p = (a < 0) != (b < 0) ? -v : v;
	return 1;
}

/* dlpg_add_ is core's add: a+b and whether it fits an int64. */
static inline int dlpg_add_(int64_t a, int64_t b, int64_t *s) {
	int64_t v = (int64_t)((uint64_t)a + (uint64_t)b);
	if ((a > 0 && b > 0 && v < 0) || (a < 0 && b < 0 && v >= 0)) return 0;
	*s = v;
	return 1;
}

static inline int dlpg_device_known_(int32_t t) {
	switch (t) {
	case 1: case 2: case 3: case 4: case 7: case 8: case 9: case 10: case 11: case 12: case 13:
	case 14: case 15: case 16: case 17: case 18: case 19: case 20: case 21:
		return 1;
	}
	return 0;
}

static inline int dlpg_addressable_(int32_t t) {
	return t == 1 || t == 2 || t == 3 || t == 13 || t == 10 || t == 11 || t == 14 || t == 20;
}

/* dlpg_dtype_error_ is core's DLDataType.Validate: NULL, or what is wrong. */
static inline const char *dlpg_dtype_error_(dlpg_dtype d) {
	if (d.code > 18) return "dtype.code is not a DLPack type code";
	if (d.lanes == 0) return "dtype.lanes = 0";
	int ok;
	switch (d.code) {
	case 0: case 1: ok = d.bits == 1 || d.bits == 4 || d.bits == 8 || d.bits == 16 || d.bits == 32 || d.bits == 64; break;
	case 2: ok = d.bits == 16 || d.bits == 32 || d.bits == 64; break;
	case 3: ok = d.bits == 64 || d.bits == 32; break;
	case 4: ok = d.bits == 16; break;
	case 5: ok = d.bits == 32 || d.bits == 64 || d.bits == 128; break;
	case 18: ok = d.bits == 32; break;
	case 6: ok = d.bits == 8; break;
	case 15: case 16: ok = d.bits == 6; break;
	case 17: ok = d.bits == 4; break;
	default: ok = d.bits == 8; /* the float8 family */
	}
	return ok ? NULL : "dtype.bits is not valid for its code";
}

/* dlpg_subbyte_ is core's DLDataType.SubByte: an element (all lanes) of less than a byte or of
   a number of bits that is no multiple of 8. */
static inline int dlpg_subbyte_(dlpg_dtype d) {
	int64_t bits = (int64_t)d.bits * d.lanes;
	return bits < 8 || bits % 8 != 0;
}

/*
 * dlpg_validate returns NULL if core.ValidateDLTensor accepts t, else a static message naming the
 * first rule t breaks (core's error says more). NULL strides mean C order.
 */
static inline const char *dlpg_validate(const dlpg_tensor *t) {
	if (t == NULL) return "DLTensor is NULL";
	if (t->ndim < 0 || t->ndim > DLPG_MAX_NDIM) return "ndim is outside [0, 64]";
	int nd = t->ndim;
	if (nd > 0 && t->shape == NULL) return "shape is NULL";
	const char *e = dlpg_dtype_error_(t->dtype);
	if (e != NULL) return e;
	if (!dlpg_device_known_(t->device.device_type)) return "device_type is not a DLPack device";
	if (t->device.device_id < 0) return "device_id is negative";
	int64_t n = 1, all = 1;
	for (int i = 0; i < nd; i++) {
		int64_t d = t->shape[i];
		if (d < 0) return "a dimension is negative";
		if (!dlpg_mul_(all, d > 1 ? d : 1, &all)) return "the product of the shape overflows";
		n *= d;
	}
	if (n == 0) return NULL;
	if (t->data == NULL) return "data is NULL";
	int64_t c[DLPG_MAX_NDIM]; /* the strides, C order when NULL */
	int64_t acc = 1;
	for (int i = nd - 1; i >= 0; i--) {
		c[i] = t->strides != NULL ? t->strides[i] : acc;
		if (t->shape[i] > 1) acc *= t->shape[i];
	}
	int64_t bits = (int64_t)t->dtype.bits * t->dtype.lanes;
	int64_t blo = 0, bhi; /* the bytes the elements span, relative to the first element */
	if (dlpg_subbyte_(t->dtype)) {
		acc = 1;
		for (int i = nd - 1; i >= 0; i--) {
			if (t->shape[i] == 1) continue;
			if (c[i] != acc) return "a sub-byte dtype needs compact C-order strides";
			acc *= t->shape[i];
		}
		int64_t nbits;
		if (!dlpg_mul_(n, bits, &nbits)) return "the bits of the elements overflow";
		bhi = nbits / 8 + (nbits % 8 != 0);
	} else {
		int64_t lo = 0, hi = 0;
		for (int i = 0; i < nd; i++) {
			int64_t d = t->shape[i], span;
			if (d <= 1) continue;
			if (!dlpg_mul_(d - 1, c[i], &span)) return "a dimension's span overflows";
			if (!(span < 0 ? dlpg_add_(lo, span, &lo) : dlpg_add_(hi, span, &hi)))
				return "the element offsets overflow";
		}
		int64_t size = bits / 8;
		if (!dlpg_mul_(lo, size, &blo) || !dlpg_mul_(hi, size, &bhi) || !dlpg_add_(bhi, size, &bhi))
			return "the byte extent overflows";
	}
	/* the first element, as an address (or, for an opaque handle, as an offset into its
	   buffer), plus the byte extent must stay within [0, 2^64) */
	uint64_t base = 0, first = t->byte_offset;
	if (dlpg_addressable_(t->device.device_type)) {
		base = (uint64_t)(uintptr_t)t->data;
		first = base + t->byte_offset;
	}
	if (first < base || (blo < 0 && (uint64_t)(-blo) > first) || first + (uint64_t)bhi < first)
		return "the byte extent wraps around the address space";
	return NULL;
}

/* dlpg_validate_versioned adds the version check of core.ImportVersioned. */
static inline const char *dlpg_validate_versioned(const dlpg_managed_versioned *m) {
	if (m == NULL) return "DLManagedTensorVersioned is NULL";
	if (m->version.major != 1) return "a DLPack version other than 1.x";
	const char *e = dlpg_validate(&m->dl_tensor);
	if (e != NULL) return e;
	if ((m->flags & DLPG_FLAG_IS_SUBBYTE_TYPE_PADDED) && dlpg_subbyte_(m->dl_tensor.dtype))
		return "padded sub-byte elements (only packed ones are read)";
	return NULL;
}

#endif
