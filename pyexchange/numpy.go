package pyexchange

/*
#include <stdint.h>
#include "call.h"
*/
import "C"

import "unsafe"

// The C functions below set up numpy.c, the reader of NumPy arrays that registered-function calls
// and Library.from_dlpack use instead of __dlpack__ for arrays of exactly numpy.ndarray.

// dlpackgo_numpy_init hands numpy.c its table (call.h's PXG_NP_*: Python C API addresses,
// numpy.ndarray, sizeof(PyObject) and the dtypes by NumPy type number). It returns 0, or -1 if n is
// wrong or an address is missing. With a 0 numpy.ndarray the reader stays off.
//
//export dlpackgo_numpy_init
func dlpackgo_numpy_init(cfg *C.uintptr_t, n C.int) C.int { return C.pxg_numpy_attach(cfg, n) }

// dlpackgo_numpy_off turns the reader off: the Python module calls it when the reader and NumPy
// disagree about a probe array.
//
//export dlpackgo_numpy_off
func dlpackgo_numpy_off() { C.pxg_numpy_off() }

// dlpackgo_numpy_builtin returns a new reference to numpy.c's builtin which (0 pend, 1 adopt,
// 2 describe, 3 readonly), or NULL. The caller holds the GIL.
//
//export dlpackgo_numpy_builtin
func dlpackgo_numpy_builtin(which C.int) unsafe.Pointer { return C.pxg_numpy_builtin(which) }

// dlpackgo_numpy_reads returns how many arrays the reader has read (for tests and benchmarks: which
// path an import took).
//
//export dlpackgo_numpy_reads
func dlpackgo_numpy_reads() C.int64_t { return C.int64_t(C.pxg_numpy_reads()) }
