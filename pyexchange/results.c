/*
 * results.c: the C half of the light export of small function results (results.go).
 *
 * A registered function's small result (Go memory, not foreign) is exported without a cgo.Handle
 * and without a deleter that enters Go: the managed tensor carries the number of the Go slot that
 * holds the result's view, and its deleter, which runs when NumPy or PyTorch lets go (any thread,
 * any time, once), frees the block and puts the slot on a queue. Go releases the queued slots at
 * the start of the next call (it is in Go then anyway), when the library is asked for its live
 * counts, or at once, from the deleter, once PXG_RESULTS_BATCH are due: what is kept past its
 * time is at most that many small results.
 */
#include <pthread.h>
#include <stdlib.h>

#include "results.h"
#include "_cgo_export.h" /* dlpackgo_results_drain */

int64_t pxg_results_due;

static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *queue;
static int64_t queue_len, queue_cap;

typedef struct {
	pxg_managed_versioned m;
	uint64_t slot;
	int64_t dims[];
} result;

static void result_deleter(pxg_managed_versioned *self) {
	result *r = (result *)self;
	uint64_t slot = r->slot;
	free(r);
	pthread_mutex_lock(&queue_mu);
	if (queue_len == queue_cap) {
		int64_t cap = queue_cap ? 2 * queue_cap : 2 * PXG_RESULTS_BATCH;
		uint64_t *q = realloc(queue, (size_t)cap * sizeof *q);
		if (q == NULL) { /* out of memory: let Go release it now, and the queue too */
			pthread_mutex_unlock(&queue_mu);
			dlpackgo_results_release(slot);
			dlpackgo_results_drain();
			return;
		}
		queue = q;
		queue_cap = cap;
	}
	queue[queue_len++] = slot;
	int64_t n = queue_len;
	__atomic_store_n(&pxg_results_due, n, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&queue_mu);
	if (n >= PXG_RESULTS_BATCH) dlpackgo_results_drain();
}

pxg_managed_versioned *pxg_result_new(int nd, uint64_t slot) {
	result *r = calloc(1, sizeof *r + 2 * (size_t)nd * sizeof(int64_t));
	if (r == NULL) return NULL;
	r->m.version.major = 1;
	r->m.version.minor = 3;
	r->m.manager_ctx = r;
	r->m.deleter = result_deleter;
	r->slot = slot;
	r->m.dl_tensor.ndim = nd;
	if (nd > 0) {
		r->m.dl_tensor.shape = r->dims;
		r->m.dl_tensor.strides = r->dims + nd;
	}
	return &r->m;
}

int64_t pxg_results_take(uint64_t *buf, int64_t n) {
	pthread_mutex_lock(&queue_mu);
	int64_t k = 0;
	while (k < n && queue_len > 0) buf[k++] = queue[--queue_len];
	__atomic_store_n(&pxg_results_due, queue_len, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&queue_mu);
	return k;
}
