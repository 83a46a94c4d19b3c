package ctest

/*
#cgo CFLAGS: -Wall
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

// The adopting producer: it copies the structs of a tree another producer exported (every
// ArrowArray and ArrowSchema, their children and buffers arrays, formats, names and metadata)
// into structs of its own whose release callbacks count their calls and free what this producer
// allocated from its own record, whatever the public fields say by then, as ctest.go's producer
// does. The buffers' memory is not copied: the copy points at the original's, which the test
// keeps alive (and releases itself) until the copy is released.

#define VA_MAX 1024
#define VA_SLACK 4 // the public children and buffers arrays have this many slots more, NULL

static int64_t va_array_releases, va_schema_releases;
static int64_t va_releases[VA_MAX];
static int va_made, va_gen;
static int64_t va_orphans;
static _Thread_local int va_in_release;

static void va_count(int64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_SEQ_CST); }

struct va_priv {
	int id, gen;
	int child;
	int64_t n_children;
	void **kids;
	void *pub_children, *pub_buffers;
	char *format, *name, *metadata; // the copies
	char *format2, *metadata2;      // what a test put in their place
	void *dictionary;
};

static struct va_priv *va_new_priv(int child) {
	struct va_priv *p = calloc(1, sizeof *p);
	p->gen = __atomic_load_n(&va_gen, __ATOMIC_SEQ_CST);
	p->id = __atomic_fetch_add(&va_made, 1, __ATOMIC_SEQ_CST);
	p->child = child;
	return p;
}

static void va_released(struct va_priv *p, int64_t *top) {
	if (p->gen == va_gen) {
		if (p->id < VA_MAX) va_count(&va_releases[p->id]);
		if (p->child && va_in_release == 0) va_count(&va_orphans);
	}
	if (!p->child) va_count(top);
}

static void va_reset(void) {
	__atomic_fetch_add(&va_gen, 1, __ATOMIC_SEQ_CST);
	memset(va_releases, 0, sizeof va_releases);
	va_made = 0;
	va_orphans = 0;
}

static void va_release_array(struct ArrowArray *a) {
	struct va_priv *p = a->private_data;
	va_released(p, &va_array_releases);
	va_in_release++;
	for (int64_t i = 0; i < p->n_children; i++) {
		struct ArrowArray *c = p->kids[i];
		if (c->release) c->release(c);
		memset(c, 0xA5, sizeof *c);
		free(c);
	}
	va_in_release--;
	free(p->kids);
	free(p->pub_children);
	free(p->pub_buffers);
	free(p->dictionary);
	free(p);
	memset(a, 0xA5, sizeof *a);
	a->release = NULL;
}

static void va_release_schema(struct ArrowSchema *s) {
	struct va_priv *p = s->private_data;
	va_released(p, &va_schema_releases);
	va_in_release++;
	for (int64_t i = 0; i < p->n_children; i++) {
		struct ArrowSchema *c = p->kids[i];
		if (c->release) c->release(c);
		memset(c, 0xA5, sizeof *c);
		free(c);
	}
	va_in_release--;
	free(p->kids);
	free(p->pub_children);
	free(p->format);
	free(p->name);
	free(p->metadata);
	free(p->format2);
	free(p->metadata2);
	free(p->dictionary);
	free(p);
	memset(s, 0xA5, sizeof *s);
	s->release = NULL;
}

// the length of metadata in the C Data Interface's encoding
static size_t va_metadata_len(const char *md) {
	int32_t n, l;
	memcpy(&n, md, 4);
	size_t off = 4;
	for (int32_t i = 0; i < 2 * n; i++) {
		memcpy(&l, md + off, 4);
		off += 4 + (size_t)l;
	}
	return off;
}

static void va_adopt_array(struct ArrowArray *dst, const struct ArrowArray *src, int child) {
	memset(dst, 0, sizeof *dst);
	struct va_priv *p = va_new_priv(child);
	dst->length = src->length;
	dst->null_count = src->null_count;
	dst->offset = src->offset;
	dst->n_buffers = src->n_buffers;
	dst->n_children = src->n_children;
	dst->buffers = p->pub_buffers = calloc((size_t)src->n_buffers + VA_SLACK, sizeof(void *));
	for (int64_t i = 0; i < src->n_buffers; i++) dst->buffers[i] = src->buffers[i];
	p->n_children = src->n_children;
	dst->children = p->pub_children = calloc((size_t)src->n_children + VA_SLACK, sizeof(void *));
	p->kids = calloc((size_t)src->n_children + 1, sizeof(void *));
	for (int64_t i = 0; i < src->n_children; i++) {
		struct ArrowArray *c = malloc(sizeof *c);
		va_adopt_array(c, src->children[i], 1);
		dst->children[i] = p->kids[i] = c;
	}
	dst->private_data = p;
	dst->release = va_release_array;
}

static void va_adopt_schema(struct ArrowSchema *dst, const struct ArrowSchema *src, int child) {
	memset(dst, 0, sizeof *dst);
	struct va_priv *p = va_new_priv(child);
	dst->format = p->format = src->format ? strdup(src->format) : NULL;
	dst->name = p->name = src->name ? strdup(src->name) : NULL;
	if (src->metadata) {
		size_t n = va_metadata_len(src->metadata);
		p->metadata = malloc(n);
		memcpy(p->metadata, src->metadata, n);
		dst->metadata = p->metadata;
	}
	dst->flags = src->flags;
	dst->n_children = p->n_children = src->n_children;
	dst->children = p->pub_children = calloc((size_t)src->n_children + VA_SLACK, sizeof(void *));
	p->kids = calloc((size_t)src->n_children + 1, sizeof(void *));
	for (int64_t i = 0; i < src->n_children; i++) {
		struct ArrowSchema *c = malloc(sizeof *c);
		va_adopt_schema(c, src->children[i], 1);
		dst->children[i] = p->kids[i] = c;
	}
	dst->private_data = p;
	dst->release = va_release_schema;
}

// the structs of an adopted tree in pre-order (the top first, then each child's subtree), found
// through the producer's own records; it returns how many it wrote to out (at most max)
static int va_array_nodes(struct ArrowArray *a, struct ArrowArray **out, int n, int max) {
	if (n >= max) return n;
	out[n++] = a;
	struct va_priv *p = a->private_data;
	for (int64_t i = 0; i < p->n_children; i++) n = va_array_nodes(p->kids[i], out, n, max);
	return n;
}

static int va_schema_nodes(struct ArrowSchema *s, struct ArrowSchema **out, int n, int max) {
	if (n >= max) return n;
	out[n++] = s;
	struct va_priv *p = s->private_data;
	for (int64_t i = 0; i < p->n_children; i++) n = va_schema_nodes(p->kids[i], out, n, max);
	return n;
}

static void va_set_format(struct ArrowSchema *s, const char *f) {
	struct va_priv *p = s->private_data;
	free(p->format2);
	p->format2 = f ? strdup(f) : NULL;
	s->format = p->format2;
}

static void va_set_metadata(struct ArrowSchema *s, const char *md, size_t n) {
	struct va_priv *p = s->private_data;
	free(p->metadata2);
	p->metadata2 = NULL;
	if (md) {
		p->metadata2 = malloc(n ? n : 1);
		memcpy(p->metadata2, md, n);
	}
	s->metadata = p->metadata2;
}

static void va_attach_dictionaries(struct ArrowArray *a, struct ArrowSchema *s) {
	struct va_priv *pa = a->private_data, *ps = s->private_data;
	if (!pa->dictionary) a->dictionary = pa->dictionary = calloc(1, sizeof(struct ArrowArray));
	if (!ps->dictionary) s->dictionary = ps->dictionary = calloc(1, sizeof(struct ArrowSchema));
}

static void va_release_array_at(struct ArrowArray *a, int intact) {
	struct ArrowArray keep = *a;
	a->release(a);
	if (intact) {
		*a = keep;
		a->release = NULL;
	}
}

static void va_release_schema_at(struct ArrowSchema *s, int intact) {
	struct ArrowSchema keep = *s;
	s->release(s);
	if (intact) {
		*s = keep;
		s->release = NULL;
	}
}

static int64_t va_array_count(void) { return __atomic_load_n(&va_array_releases, __ATOMIC_SEQ_CST); }
static int64_t va_schema_count(void) { return __atomic_load_n(&va_schema_releases, __ATOMIC_SEQ_CST); }
static int va_made_count(void) { return va_made < VA_MAX ? va_made : VA_MAX; }
static int64_t va_release_count(int id) { return __atomic_load_n(&va_releases[id], __ATOMIC_SEQ_CST); }
static int64_t va_orphan_count(void) { return __atomic_load_n(&va_orphans, __ATOMIC_SEQ_CST); }
static void *va_alloc_array(void) { return calloc(1, sizeof(struct ArrowArray)); }
static void *va_alloc_schema(void) { return calloc(1, sizeof(struct ArrowSchema)); }
*/
import "C"

import "unsafe"

// Adopt copies the structs of the tree arr and schema (exported by another producer, arrow-go's
// exporter for one; they stay the caller's, live, to release and free) into new C structs of the
// adopting producer (malloc'ed, freed by Free), whose release callbacks free what it allocated
// from its own records and count their calls (AdoptedReleases), so that a test can make every
// public field lie and still see each struct released exactly once. The copy shares the
// original's buffers: keep the original unreleased until the copy has been released.
func Adopt(arr, schema unsafe.Pointer) (adoptedArr, adoptedSchema unsafe.Pointer) {
	a, s := C.va_alloc_array(), C.va_alloc_schema()
	C.va_adopt_array((*C.struct_ArrowArray)(a), (*C.struct_ArrowArray)(arr), 0)
	C.va_adopt_schema((*C.struct_ArrowSchema)(s), (*C.struct_ArrowSchema)(schema), 0)
	return a, s
}

// AdoptedNodes returns the ArrowArrays and the ArrowSchemas of an adopted tree in pre-order
// (the top first, then each child's subtree in turn), found through the producer's own records:
// call it before making the fields lie. Each is a depth-0 struct for SetArray, SetSchemaChildren
// and Cycle, and the struct for the SetAdopted functions.
func AdoptedNodes(arr, schema unsafe.Pointer) (arrays, schemas []unsafe.Pointer) {
	const max = 64
	as := make([]*C.struct_ArrowArray, max)
	ss := make([]*C.struct_ArrowSchema, max)
	// the out arrays are C memory: Go memory holding the C pointers would be passed to C
	ca := (**C.struct_ArrowArray)(C.malloc(C.size_t(max) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	cs := (**C.struct_ArrowSchema)(C.malloc(C.size_t(max) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cs))
	na := int(C.va_array_nodes((*C.struct_ArrowArray)(arr), ca, 0, max))
	ns := int(C.va_schema_nodes((*C.struct_ArrowSchema)(schema), cs, 0, max))
	copy(as, unsafe.Slice(ca, max))
	copy(ss, unsafe.Slice(cs, max))
	for _, a := range as[:na] {
		arrays = append(arrays, unsafe.Pointer(a))
	}
	for _, s := range ss[:ns] {
		schemas = append(schemas, unsafe.Pointer(s))
	}
	return arrays, schemas
}

// SetAdoptedFormat replaces the format string of an adopted schema struct; null: with NULL.
func SetAdoptedFormat(schema unsafe.Pointer, format string, null bool) {
	var f *C.char
	if !null {
		f = C.CString(format)
		defer C.free(unsafe.Pointer(f))
	}
	C.va_set_format((*C.struct_ArrowSchema)(schema), f)
}

// SetAdoptedMetadata replaces the metadata of an adopted schema struct with a copy of md (see
// Metadata); nil: with NULL.
func SetAdoptedMetadata(schema unsafe.Pointer, md []byte) {
	if md == nil {
		C.va_set_metadata((*C.struct_ArrowSchema)(schema), nil, 0)
		return
	}
	c := C.CBytes(md)
	defer C.free(c)
	C.va_set_metadata((*C.struct_ArrowSchema)(schema), (*C.char)(c), C.size_t(len(md)))
}

// AttachAdoptedDictionaries points the dictionary fields of an adopted array and schema struct
// at zeroed structs (which the producer frees with them).
func AttachAdoptedDictionaries(arr, schema unsafe.Pointer) {
	C.va_attach_dictionaries((*C.struct_ArrowArray)(arr), (*C.struct_ArrowSchema)(schema))
}

// ReleaseAdoptedArray runs the release callback of an adopted array struct, as a producer that
// hands over an already released struct (or child) would have; intact puts its fields back but
// release, as ReleaseArrayAt does.
func ReleaseAdoptedArray(arr unsafe.Pointer, intact bool) {
	C.va_release_array_at((*C.struct_ArrowArray)(arr), boolInt(intact))
}

// ReleaseAdoptedSchema runs the release callback of an adopted schema struct (intact: as
// ReleaseAdoptedArray).
func ReleaseAdoptedSchema(schema unsafe.Pointer, intact bool) {
	C.va_release_schema_at((*C.struct_ArrowSchema)(schema), boolInt(intact))
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// AdoptedTopReleases counts the calls of the adopting producer's top-level ArrowArray and
// ArrowSchema release callbacks, ever.
func AdoptedTopReleases() (arrays, schemas int64) {
	return int64(C.va_array_count()), int64(C.va_schema_count())
}

// ResetAdopted starts a new generation of the adopting producer's per-struct accounting, as
// Reset does for Produce's.
func ResetAdopted() { C.va_reset() }

// AdoptedReleases returns, for every struct adopted since ResetAdopted (arrays and schemas, in
// the order they were made: the array tree in pre-order, then the schema tree), how many times
// its release callback has run.
func AdoptedReleases() []int64 {
	n := int(C.va_made_count())
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(C.va_release_count(C.int(i)))
	}
	return out
}

// AdoptedOrphans counts, since ResetAdopted, the releases of an adopted child struct that did
// not come from its parent's release (as Orphans does).
func AdoptedOrphans() int64 { return int64(C.va_orphan_count()) }
