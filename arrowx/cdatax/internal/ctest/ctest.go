// Package ctest holds the C code that the tests of package cdatax drive: a C producer of Arrow
// arrays that carry tensors (with release callbacks that count their calls, struct by struct, and
// poison the memory they free), ways to make what it produced hostile (a field set to a bad value,
// a pointer set to NULL, a struct released before it is handed over), and a C consumer of exported
// arrays, so that the tests, which cannot use cgo themselves, exchange data with real C code
// through the Arrow C Data Interface. It is for tests only.
//
// Every struct the producer makes frees what it allocated from its own record (private_data),
// whatever its public fields say later, so that a test can make the fields lie and still see the
// producer free exactly what it made when its release runs.
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

// ---- accounting -----------------------------------------------------------------------------

#define CT_MAX 4096
#define CT_SLACK 4 // the public children and buffers arrays have this many slots at least, NULL past the real ones

// top-level releases, ever (the counters of ArrayReleases and SchemaReleases)
static int64_t ct_array_releases, ct_schema_releases;
// per struct made in the current generation: how many times its release ran
static int64_t ct_releases[CT_MAX];
static int ct_made, ct_gen;
// releases of a child struct that its parent's release did not make (the consumer called a
// child's release, which the C Data Interface forbids), in the current generation
static int64_t ct_orphans;
// how deep in release callbacks this thread is: a child's release runs inside its parent's
static _Thread_local int ct_in_release;

static void ct_count(int64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_SEQ_CST); }

// ct_priv is what a struct's release frees: its own record, kept apart from the public fields.
struct ct_priv {
	int id, gen;
	int child;          // its parent's release releases it
	int64_t n_children; // the real children
	void **kids;
	void *pub_children; // the public children array
	void *pub_buffers;  // the public buffers array
	void *block;        // a leaf's values and bitmap
	char *format, *format2; // a schema's format, and one a test put in its place
	void *dictionary;   // a dictionary struct a test attached
	char *metadata;     // metadata a test attached
};

static struct ct_priv *ct_new_priv(int child) {
	struct ct_priv *p = calloc(1, sizeof *p);
	p->gen = ct_gen;
	p->id = __atomic_fetch_add(&ct_made, 1, __ATOMIC_SEQ_CST);
	p->child = child;
	return p;
}

static void ct_released(struct ct_priv *p, int64_t *top) {
	if (p->gen == ct_gen) {
		if (p->id < CT_MAX) ct_count(&ct_releases[p->id]);
		if (p->child && ct_in_release == 0) ct_count(&ct_orphans);
	}
	if (!p->child) ct_count(top);
}

static void ct_reset(void) {
	__atomic_fetch_add(&ct_gen, 1, __ATOMIC_SEQ_CST);
	memset(ct_releases, 0, sizeof ct_releases);
	ct_made = 0;
	ct_orphans = 0;
}

// ---- producer ---------------------------------------------------------------------------

static void ct_release_array(struct ArrowArray *a) {
	struct ct_priv *p = a->private_data;
	ct_released(p, &ct_array_releases);
	ct_in_release++;
	for (int64_t i = 0; i < p->n_children; i++) {
		struct ArrowArray *c = p->kids[i];
		if (c->release) c->release(c);
		memset(c, 0xA5, sizeof *c);
		free(c);
	}
	ct_in_release--;
	free(p->kids);
	free(p->pub_children);
	free(p->pub_buffers);
	free(p->block);
	free(p->dictionary);
	free(p);
	memset(a, 0xA5, sizeof *a);
	a->release = NULL;
}

static void ct_release_schema(struct ArrowSchema *s) {
	struct ct_priv *p = s->private_data;
	ct_released(p, &ct_schema_releases);
	ct_in_release++;
	for (int64_t i = 0; i < p->n_children; i++) {
		struct ArrowSchema *c = p->kids[i];
		if (c->release) c->release(c);
		memset(c, 0xA5, sizeof *c);
		free(c);
	}
	ct_in_release--;
	free(p->kids);
	free(p->pub_children);
	free(p->format);
	free(p->format2);
	free(p->dictionary);
	free(p->metadata);
	free(p);
	memset(s, 0xA5, sizeof *s);
	s->release = NULL;
}

// Sloppy releases: they free as the producer's do, then leave release set (to themselves), as a
// producer that forgets to mark its struct released does.
static void ct_sloppy_release_array(struct ArrowArray *a) {
	ct_release_array(a);
	a->release = ct_sloppy_release_array;
}

static void ct_sloppy_release_schema(struct ArrowSchema *s) {
	ct_release_schema(s);
	s->release = ct_sloppy_release_schema;
}

static void ct_make_sloppy(struct ArrowArray *a, struct ArrowSchema *s) {
	a->release = ct_sloppy_release_array;
	s->release = ct_sloppy_release_schema;
}

// ct_fill fills a and s with level `level` of a float32 tensor of the given shape as nested
// FixedSizeLists: the leaf (level ndim-1) holds the values k*0.5 for k = 0, 1, ... in C order,
// starting at element `offset` of its buffer (the leaf's offset field), with every third element
// null when nulls. It returns the address of the first element.
static float *ct_fill(struct ArrowArray *a, struct ArrowSchema *s, const int64_t *shape, int ndim, int level,
		int64_t offset, int nulls, int child) {
	memset(a, 0, sizeof *a);
	memset(s, 0, sizeof *s);
	struct ct_priv *pa = ct_new_priv(child), *ps = ct_new_priv(child);
	a->private_data = pa;
	s->private_data = ps;
	a->release = ct_release_array;
	s->release = ct_release_schema;
	s->name = "";
	a->buffers = pa->pub_buffers = calloc(CT_SLACK, sizeof(void *));
	int64_t len = 1;
	for (int i = 0; i <= level; i++) len *= shape[i];
	if (level == ndim - 1) { // the leaf: float32
		// one block holds the validity bitmap (64 bytes aligned) and the values
		size_t bm = ((size_t)(offset + len) / 8 + 1 + 63) & ~(size_t)63;
		char *block = calloc(1, bm + (size_t)(offset + len + 1) * sizeof(float));
		float *vals = (float *)(block + bm);
		for (int64_t k = 0; k < offset + len; k++) vals[k] = (float)(k - offset) * 0.5f;
		uint8_t *valid = NULL;
		if (nulls) {
			valid = (uint8_t *)block;
			for (int64_t k = 0; k < offset + len; k++) {
				if ((k - offset) % 3 != 2) valid[k / 8] |= (uint8_t)(1u << (k % 8));
				else if (k >= offset) a->null_count++;
			}
		}
		a->length = len;
		a->offset = offset;
		a->n_buffers = 2;
		a->buffers[0] = valid;
		a->buffers[1] = vals;
		pa->block = block;
		s->format = ps->format = strdup("f");
		s->flags = ARROW_FLAG_NULLABLE;
		return vals + offset;
	}
	a->length = len;
	a->n_buffers = 1;
	a->n_children = s->n_children = pa->n_children = ps->n_children = 1;
	a->children = pa->pub_children = calloc(CT_SLACK, sizeof(void *));
	s->children = ps->pub_children = calloc(CT_SLACK, sizeof(void *));
	pa->kids = malloc(sizeof(void *));
	ps->kids = malloc(sizeof(void *));
	struct ArrowArray *ca = malloc(sizeof *ca);
	struct ArrowSchema *cs = malloc(sizeof *cs);
	a->children[0] = pa->kids[0] = ca;
	s->children[0] = ps->kids[0] = cs;
	char fmt[32];
	snprintf(fmt, sizeof fmt, "+w:%lld", (long long)shape[level + 1]);
	s->format = ps->format = strdup(fmt);
	return ct_fill(ca, cs, shape, ndim, level + 1, offset, nulls, 1);
}

static void *ct_produce(struct ArrowArray *a, struct ArrowSchema *s, const int64_t *shape, int ndim,
		int64_t offset, int nulls) {
	return ct_fill(a, s, shape, ndim, 0, offset, nulls, 0);
}

// the struct at a depth (0: the top), found through the producer's own record
static struct ArrowArray *ct_array_at(struct ArrowArray *a, int depth) {
	while (depth-- > 0) a = ((struct ct_priv *)a->private_data)->kids[0];
	return a;
}

static struct ArrowSchema *ct_schema_at(struct ArrowSchema *s, int depth) {
	while (depth-- > 0) s = ((struct ct_priv *)s->private_data)->kids[0];
	return s;
}

static void ct_set_format(struct ArrowSchema *s, const char *f) {
	struct ct_priv *p = s->private_data;
	free(p->format2);
	p->format2 = f ? strdup(f) : NULL;
	s->format = p->format2;
}

static void ct_set_metadata(struct ArrowSchema *s, const char *md, size_t n) {
	struct ct_priv *p = s->private_data;
	free(p->metadata);
	p->metadata = NULL;
	if (md) {
		p->metadata = malloc(n ? n : 1);
		memcpy(p->metadata, md, n);
	}
	s->metadata = p->metadata;
}

static void ct_attach_dictionaries(struct ArrowArray *a, struct ArrowSchema *s) {
	struct ct_priv *pa = a->private_data, *ps = s->private_data;
	if (!pa->dictionary) a->dictionary = pa->dictionary = calloc(1, sizeof(struct ArrowArray));
	if (!ps->dictionary) s->dictionary = ps->dictionary = calloc(1, sizeof(struct ArrowSchema));
}

// release a struct and put back its fields but release, as a producer's release that frees
// without poisoning would leave them: pointing at freed memory
static void ct_release_array_intact(struct ArrowArray *a) {
	struct ArrowArray keep = *a;
	a->release(a);
	*a = keep;
	a->release = NULL;
}

static void ct_release_schema_intact(struct ArrowSchema *s) {
	struct ArrowSchema keep = *s;
	s->release(s);
	*s = keep;
	s->release = NULL;
}

static int64_t ct_array_count(void) { return ct_array_releases; }
static int64_t ct_schema_count(void) { return ct_schema_releases; }
static int ct_made_count(void) { return ct_made < CT_MAX ? ct_made : CT_MAX; }
static int64_t ct_release_count(int id) { return __atomic_load_n(&ct_releases[id], __ATOMIC_SEQ_CST); }
static int64_t ct_orphan_count(void) { return __atomic_load_n(&ct_orphans, __ATOMIC_SEQ_CST); }

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
static int ct_schema_released(void *s) { return ((struct ArrowSchema *)s)->release == NULL; }
*/
import "C"

import (
	"encoding/binary"
	"unsafe"
)

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

// Sloppy makes the release callbacks of the top-level structs from Produce sloppy: they free
// what the producer made, as before, but leave the struct's release set instead of NULL, as a
// producer that breaks that rule of the C Data Interface does.
func Sloppy(arr, schema unsafe.Pointer) {
	C.ct_make_sloppy((*C.struct_ArrowArray)(arr), (*C.struct_ArrowSchema)(schema))
}

// Released reports whether the ArrowArray's release callback is NULL (released or moved).
func Released(arr unsafe.Pointer) bool { return C.ct_array_released(arr) != 0 }

// SchemaReleased reports whether the ArrowSchema's release callback is NULL.
func SchemaReleased(schema unsafe.Pointer) bool { return C.ct_schema_released(schema) != 0 }

// ArrayReleases counts the calls of the producer's top-level ArrowArray release callbacks.
func ArrayReleases() int64 { return int64(C.ct_array_count()) }

// SchemaReleases counts the calls of the producer's top-level ArrowSchema release callbacks.
func SchemaReleases() int64 { return int64(C.ct_schema_count()) }

// Reset starts a new generation of per-struct accounting: Releases and Orphans then count only
// the structs Produce makes from now on (releases of older ones, which the garbage collector may
// still run, are not counted there).
func Reset() { C.ct_reset() }

// Releases returns, for every struct (array or schema, top-level or child) produced since Reset,
// in the order they were made, how many times its release callback has run.
func Releases() []int64 {
	n := int(C.ct_made_count())
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(C.ct_release_count(C.int(i)))
	}
	return out
}

// Orphans counts, since Reset, the releases of a child struct that did not come from its
// parent's release: a consumer that called a child's release, which the C Data Interface
// forbids ("the consumer MUST NOT call any of its children's release callbacks").
func Orphans() int64 { return int64(C.ct_orphan_count()) }

// ArrayField names a field of an ArrowArray that SetArray writes.
type ArrayField int

// The ArrowArray fields SetArray writes; the pointer fields (Buffers, Children, Dictionary) are
// set to NULL, whatever the value.
const (
	Length ArrayField = iota
	NullCount
	Offset
	NBuffers
	NChildren
	Buffers
	Children
	Validity // buffers[0]
	Values   // buffers[1]
)

func arrayAt(arr unsafe.Pointer, depth int) *C.struct_ArrowArray {
	return C.ct_array_at((*C.struct_ArrowArray)(arr), C.int(depth))
}

func schemaAt(schema unsafe.Pointer, depth int) *C.struct_ArrowSchema {
	return C.ct_schema_at((*C.struct_ArrowSchema)(schema), C.int(depth))
}

// SetArray writes v into field f of the array at depth (0: the top one, 1 its child, ...) of a
// tree from Produce.
func SetArray(arr unsafe.Pointer, depth int, f ArrayField, v int64) {
	a := arrayAt(arr, depth)
	switch f {
	case Length:
		a.length = C.int64_t(v)
	case NullCount:
		a.null_count = C.int64_t(v)
	case Offset:
		a.offset = C.int64_t(v)
	case NBuffers:
		a.n_buffers = C.int64_t(v)
	case NChildren:
		a.n_children = C.int64_t(v)
	case Buffers:
		a.buffers = nil
	case Children:
		a.children = nil
	case Validity:
		if a.buffers != nil {
			*a.buffers = nil
		}
	case Values:
		if a.buffers != nil {
			unsafe.Slice(a.buffers, 2)[1] = nil
		}
	}
}

// ArrayLengths returns the length and offset fields of the array at depth.
func ArrayLengths(arr unsafe.Pointer, depth int) (length, offset int64) {
	a := arrayAt(arr, depth)
	return int64(a.length), int64(a.offset)
}

// SetSchemaFormat replaces the format string of the schema at depth; null: with NULL.
func SetSchemaFormat(schema unsafe.Pointer, depth int, format string, null bool) {
	var f *C.char
	if !null {
		f = C.CString(format)
		defer C.free(unsafe.Pointer(f))
	}
	C.ct_set_format(schemaAt(schema, depth), f)
}

// SetSchemaMetadata replaces the metadata of the schema at depth with a copy of md, bytes in the
// C Data Interface's encoding (see Metadata) or any others; nil: with NULL.
func SetSchemaMetadata(schema unsafe.Pointer, depth int, md []byte) {
	if md == nil {
		C.ct_set_metadata(schemaAt(schema, depth), nil, 0)
		return
	}
	c := C.CBytes(md)
	defer C.free(c)
	C.ct_set_metadata(schemaAt(schema, depth), (*C.char)(c), C.size_t(len(md)))
}

// Metadata encodes key-value pairs as the C Data Interface's ArrowSchema.metadata: an int32
// count, then each key and value as an int32 length and its bytes, native-endian.
func Metadata(kv ...string) []byte {
	var out []byte
	put := func(n int) { out = binary.NativeEndian.AppendUint32(out, uint32(int32(n))) }
	put(len(kv) / 2)
	for _, s := range kv {
		put(len(s))
		out = append(out, s...)
	}
	return out
}

// SetSchemaChildren writes n_children of the schema at depth; null also sets children to NULL.
func SetSchemaChildren(schema unsafe.Pointer, depth int, n int64, null bool) {
	s := schemaAt(schema, depth)
	s.n_children = C.int64_t(n)
	if null {
		s.children = nil
	}
}

// AttachDictionaries points the dictionary fields of the array and the schema at depth at
// zeroed structs (which the producer frees with them): dictionary-encoded data.
func AttachDictionaries(arr, schema unsafe.Pointer, depth int) {
	C.ct_attach_dictionaries(arrayAt(arr, depth), schemaAt(schema, depth))
}

// Cycle makes the array and the schema at depth their own first child (their public children
// field only: the producer's release still frees the real ones), where they have a children
// array.
func Cycle(arr, schema unsafe.Pointer, depth int) {
	a, s := arrayAt(arr, depth), schemaAt(schema, depth)
	if a.children != nil {
		*a.children = a
	}
	if s.children != nil {
		*s.children = s
	}
}

// ReleaseArrayAt runs the release callback of the array at depth, as a producer that hands
// over an already released struct (or child) would have. The release poisons the struct's
// fields; intact puts them back afterwards (all but release, which stays NULL), so that they look
// valid and point at freed memory.
func ReleaseArrayAt(arr unsafe.Pointer, depth int, intact bool) {
	a := arrayAt(arr, depth)
	if intact {
		C.ct_release_array_intact(a)
		return
	}
	C.ct_release_array(a)
}

// ReleaseSchemaAt runs the release callback of the schema at depth (intact: as ReleaseArrayAt).
func ReleaseSchemaAt(schema unsafe.Pointer, depth int, intact bool) {
	s := schemaAt(schema, depth)
	if intact {
		C.ct_release_schema_intact(s)
		return
	}
	C.ct_release_schema(s)
}

// Sum is the C consumer: it reads the float32 leaf of an exported array, releases the array and
// the schema (as a consumer must), and returns the sum and the element count (sum -1: the
// format was not what it reads).
func Sum(arr, schema unsafe.Pointer) (float64, int64) {
	var n C.int64_t
	s := C.ct_sum((*C.struct_ArrowArray)(arr), (*C.struct_ArrowSchema)(schema), &n)
	return float64(s), int64(n)
}
