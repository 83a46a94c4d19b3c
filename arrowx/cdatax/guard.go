package cdatax

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
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

// cdatax_release_schema runs a schema's release and marks it released, whether or not the
// producer's callback did (arrow-go's own helper aborts the process when it did not).
static void cdatax_release_schema(struct ArrowSchema* s) {
	if (s->release != NULL) {
		s->release(s);
		s->release = NULL;
	}
}

// cdatax_guarded_release is the release of an array cdatax interposed (cdatax_guard): it runs
// the producer's release on the producer's struct, kept in private_data, frees that copy, and
// marks the struct it was called on released.
static void cdatax_guarded_release(struct ArrowArray* a) {
	struct ArrowArray* orig = (struct ArrowArray*)a->private_data;
	if (orig != NULL) {
		if (orig->release != NULL) orig->release(orig);
		free(orig);
	}
	a->private_data = NULL;
	a->release = NULL;
}

// cdatax_guard moves the producer's array a into a struct of cdatax's own (a move, which the C
// Data Interface allows a consumer) and makes a's release cdatax_guarded_release, its other
// public fields unchanged, so that whoever releases a later (arrow-go) finds it released after
// the call even if the producer's callback does not set release to NULL. Returns 0 when out of
// memory (a is then untouched).
static int cdatax_guard(struct ArrowArray* a) {
	struct ArrowArray* orig = malloc(sizeof *orig);
	if (orig == NULL) return 0;
	memcpy(orig, a, sizeof *orig);
	a->release = cdatax_guarded_release;
	a->private_data = orig;
	return 1;
}

static void cdatax_release_array(struct ArrowArray* a) {
	if (a->release != NULL) {
		a->release(a);
		a->release = NULL;
	}
}
*/
import "C"

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/cdata"
)

// A producer's release callback must set its struct's release to NULL; arrow-go asserts that it
// did and aborts the process otherwise, which no Go code can recover from. cdatax releases the
// schema itself and interposes on the array's release before handing the array to arrow-go, so
// that a producer that forgets costs nothing worse than its own bug.

// releaseSchema runs the schema's release (if not released already) and marks it released.
func releaseSchema(s *cdata.CArrowSchema) {
	C.cdatax_release_schema((*C.struct_ArrowSchema)(unsafe.Pointer(s)))
}

// releaseArray runs the array's release (if not released already) and marks it released.
func releaseArray(a *cdata.CArrowArray) {
	C.cdatax_release_array((*C.struct_ArrowArray)(unsafe.Pointer(a)))
}

// guardArray interposes cdatax's release on a live array (see cdatax_guard); false when C is out
// of memory.
func guardArray(a *cdata.CArrowArray) bool {
	return C.cdatax_guard((*C.struct_ArrowArray)(unsafe.Pointer(a))) != 0
}
