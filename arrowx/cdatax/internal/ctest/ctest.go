// Package ctest holds the C code that the tests of package cdatax drive: a C producer of Arrow
// arrays that carry tensors (with release callbacks that count their calls and poison the
// memory they free), and a C consumer of exported arrays, so that the tests, which cannot use
// cgo themselves, exchange data with real C code through the Arrow C Data Interface. It is for
// tests only.
package ctest

/*
#cgo CFLAGS: -Wall
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_NULLABLE 2
struct ArrowSchema {
	const char* format;
	const char* name;
	const char* metadata;
	int64_t flags;
	int64_t n_children;
	struct ArrowSchema** children;
	struct ArrowSchema* dictionary;
	void (*release)(struct ArrowSchema*);
	void* private_data;
};
struct ArrowArray {
	int64_t length;
	int64_t null_count;
	int64_t offset;
	int64_t n_buffers;
	int64_t n_children;
	const void** buffers;
	struct ArrowArray** children;
	struct ArrowArray* dictionary;
	void (*release)(struct ArrowArray*);
	void* private_data;
};
#endif

static int64_t ct_array_releases, ct_schema_releases;

// ---- producer ---------------------------------------------------------------------------

// Every ArrowArray the producer makes owns its buffers array, its children array, its
// children and, in private_data, the values memory of the leaf (NULL elsewhere).

static void ct_release_array(struct ArrowArray *a) {
	for (int64_t i = 0; i < a->n_children; i++) {
		struct ArrowArray *c = a->children[i];
		if (c->release) c->release(c);
		free(c);
	}
	free(a->children);
	free(a->private_data);
	free(a->buffers);
	a->release = NULL;
}

// the top-level structs' releases count their calls
static void ct_release_top_array(struct ArrowArray *a) {
	ct_release_array(a);
	ct_array_releases++;
}

static void ct_release_schema(struct ArrowSchema *s) {
	for (int64_t i = 0; i < s->n_children; i++) {
		struct ArrowSchema *c = s->children[i];
		if (c->release) c->release(c);
		free(c);
	}
	free(s->children);
	free((void *)s->format);
	s->release = NULL;
}

static void ct_release_top_schema(struct ArrowSchema *s) {
	ct_release_schema(s);
	ct_schema_releases++;
}

// ct_produce fills a and s with a float32 tensor of the given shape (ndim >= 1) as nested
// FixedSizeLists, values k*0.5 for k = 0, 1, ... in C order, starting at element `offset`
// of the leaf (the leaf's offset field), with `nulls` null slots in the leaf when nulls > 0
// (every third element). It returns the address of the first element.
static void *ct_produce(struct ArrowArray *a, struct ArrowSchema *s, const int64_t *shape, int ndim,
		int64_t offset, int nulls) {
	int64_t total = 1;
	for (int i = 0; i < ndim; i++) total *= shape[i];
	// the leaf: float32
	struct ArrowArray *leaf = calloc(1, sizeof *leaf);
	struct ArrowSchema *leafs = calloc(1, sizeof *leafs);
	// one block holds the validity bitmap (64 bytes aligned) and the values; the leaf's
	// release frees it
	size_t bm = ((size_t)(offset + total) / 8 + 1 + 63) & ~(size_t)63;
	char *block = calloc(1, bm + (size_t)(offset + total + 1) * sizeof(float));
	float *vals = (float *)(block + bm);
	for (int64_t k = 0; k < offset + total; k++) vals[k] = (float)(k - offset) * 0.5f;
	uint8_t *valid = NULL;
	leaf->null_count = 0;
	if (nulls) {
		valid = (uint8_t *)block;
		for (int64_t k = 0; k < offset + total; k++) {
			if ((k - offset) % 3 != 2) valid[k / 8] |= (uint8_t)(1u << (k % 8));
			else if (k >= offset) leaf->null_count++;
		}
	}
	leaf->length = total;
	leaf->offset = offset;
	leaf->n_buffers = 2;
	leaf->buffers = calloc(2, sizeof(void *));
	leaf->buffers[0] = valid;
	leaf->buffers[1] = vals;
	leaf->private_data = block;
	leaf->release = ct_release_array;
	leafs->format = strdup("f");
	leafs->name = "";
	leafs->flags = ARROW_FLAG_NULLABLE;
	leafs->release = ct_release_schema;
	struct ArrowArray *cur = leaf;
	struct ArrowSchema *curs = leafs;
	int64_t len = total;
	for (int i = ndim - 1; i >= 1; i--) {
		len /= shape[i] ? shape[i] : 1;
		struct ArrowArray *up = (i == 1) ? a : calloc(1, sizeof *up);
		struct ArrowSchema *ups = (i == 1) ? s : calloc(1, sizeof *ups);
		memset(up, 0, sizeof *up);
		memset(ups, 0, sizeof *ups);
		up->length = len;
		up->n_buffers = 1;
		up->buffers = calloc(1, sizeof(void *));
		up->n_children = 1;
		up->children = malloc(sizeof(void *));
		up->children[0] = cur;
		up->release = ct_release_array;
		char fmt[32];
		snprintf(fmt, sizeof fmt, "+w:%lld", (long long)shape[i]);
		ups->format = strdup(fmt);
		ups->name = "";
		ups->n_children = 1;
		ups->children = malloc(sizeof(void *));
		ups->children[0] = curs;
		ups->release = ct_release_schema;
		cur = up;
		curs = ups;
	}
	if (ndim == 1) {
		*a = *leaf;
		*s = *leafs;
		free(leaf);
		free(leafs);
	}
	a->release = ct_release_top_array;
	s->release = ct_release_top_schema;
	return vals + offset;
}

static int64_t ct_array_count(void) { return ct_array_releases; }
static int64_t ct_schema_count(void) { return ct_schema_releases; }

// ---- consumer -----------------------------------------------------------------------------

// ct_sum adds up the float32 leaf of an exported (possibly nested FixedSizeList) array,
// checks its format string, releases array and schema, and returns the sum; -1 on a format it
// does not expect.
static double ct_sum(struct ArrowArray *a, struct ArrowSchema *s, int64_t *count) {
	struct ArrowArray *cur = a;
	struct ArrowSchema *curs = s;
	int64_t start = a->offset, n = a->length;
	while (curs->format[0] == '+' && curs->format[1] == 'w') {
		int64_t size = atoll(curs->format + 3);
		start = cur->children[0]->offset + start * size;
		n *= size;
		cur = cur->children[0];
		curs = curs->children[0];
	}
	double sum = -1;
	if (strcmp(curs->format, "f") == 0) {
		const float *v = cur->buffers[1];
		sum = 0;
		for (int64_t k = 0; k < n; k++) sum += v[start + k];
		*count = n;
	}
	a->release(a);
	s->release(s);
	return sum;
}

static void *ct_alloc_array(void) { return calloc(1, sizeof(struct ArrowArray)); }
static void *ct_alloc_schema(void) { return calloc(1, sizeof(struct ArrowSchema)); }
static int ct_array_released(void *a) { return ((struct ArrowArray *)a)->release == NULL; }
*/
import "C"

import "unsafe"

// Produce makes a C ArrowArray and ArrowSchema (both malloc'ed, freed by Free) of a float32
// tensor of the given shape as nested FixedSizeLists, element k (C order) being k/2, with the
// leaf's offset field set to offset and, if nulls, every third element null. It returns the two
// structs and the address of the first element.
func Produce(offset int64, nulls bool, shape ...int64) (arr, schema, first unsafe.Pointer) {
	a, s := C.ct_alloc_array(), C.ct_alloc_schema()
	cs := C.malloc(C.size_t(8 * max(len(shape), 1)))
	defer C.free(cs)
	copy(unsafe.Slice((*int64)(cs), len(shape)), shape)
	n := C.int(0)
	if nulls {
		n = 1
	}
	p := C.ct_produce((*C.struct_ArrowArray)(a), (*C.struct_ArrowSchema)(s), (*C.int64_t)(cs), C.int(len(shape)),
		C.int64_t(offset), n)
	return a, s, p
}

// Alloc returns zeroed C memory for an ArrowArray and an ArrowSchema, for exports to fill.
func Alloc() (arr, schema unsafe.Pointer) { return C.ct_alloc_array(), C.ct_alloc_schema() }

// Free frees the memory of structs from Produce or Alloc (after their release has run or they
// were moved).
func Free(arr, schema unsafe.Pointer) {
	C.free(arr)
	C.free(schema)
}

// Released reports whether the ArrowArray's release callback is NULL (released or moved).
func Released(arr unsafe.Pointer) bool { return C.ct_array_released(arr) != 0 }

// ArrayReleases counts the calls of the producer's ArrowArray release callback.
func ArrayReleases() int64 { return int64(C.ct_array_count()) }

// SchemaReleases counts the calls of the producer's ArrowSchema release callback.
func SchemaReleases() int64 { return int64(C.ct_schema_count()) }

// Sum is the C consumer: it reads the float32 leaf of an exported array, releases the array and
// the schema (as a consumer must), and returns the sum and the element count (sum -1: the
// format was not what it reads).
func Sum(arr, schema unsafe.Pointer) (float64, int64) {
	var n C.int64_t
	s := C.ct_sum((*C.struct_ArrowArray)(arr), (*C.struct_ArrowSchema)(schema), &n)
	return float64(s), int64(n)
}
