/*
 * results.h: the light export of small function results (results.go, results.c).
 */
#ifndef DLPACKGO_RESULTS_H
#define DLPACKGO_RESULTS_H

#include <stdint.h>

#include "pyexchange.h"

/* The due count: slots whose deleter ran and that Go has not released yet (Go reads it, atomically,
 * at the start of every call). */
extern int64_t pxg_results_due;

/* When this many are due, the deleter that makes them so hands them to Go at once. */
#define PXG_RESULTS_BATCH 64

/* pxg_result_new returns a managed tensor of nd dimensions (shape, then strides, in the same
 * block) whose deleter frees it and marks slot due; NULL when out of memory. */
pxg_managed_versioned *pxg_result_new(int nd, uint64_t slot);
/* pxg_results_take moves up to n due slots into buf and returns how many. */
int64_t pxg_results_take(uint64_t *buf, int64_t n);

#endif
