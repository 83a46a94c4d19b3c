package ctest

/*
#cgo CFLAGS: -I${SRCDIR}/../.. -Wall
#include "dlpack_validate.h"

static const char *ctest_validate(void *t) { return dlpg_validate((const dlpg_tensor *)t); }
static const char *ctest_validate_versioned(void *m) {
	return dlpg_validate_versioned((const dlpg_managed_versioned *)m);
}
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

// Validate runs dlpack_validate.h's dlpg_validate on dl (which knows DLPack's codes after v1.3:
// kDLBcomplex, kDLTPU, kDLTPUHost, kDLAscend): "" if it accepts the tensor, else its message. dl (and its shape and strides) must be in memory C may read for the call.
func Validate(dl *core.DLTensor) string {
	var pin runtime.Pinner // dl may point at Go arrays: pinned, C may read them
	defer pin.Unpin()
	if dl.Shape != nil {
		pin.Pin(dl.Shape)
	}
	if dl.Strides != nil {
		pin.Pin(dl.Strides)
	}
	if msg := C.ctest_validate(unsafe.Pointer(dl)); msg != nil {
		return C.GoString(msg)
	}
	return ""
}

// ValidateVersioned runs dlpg_validate_versioned on m, as Validate runs dlpg_validate.
func ValidateVersioned(m *core.DLManagedTensorVersioned) string {
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(m)
	if m.DLTensor.Data != nil {
		pin.Pin(m.DLTensor.Data) // a no-op for memory Go did not allocate
	}
	if m.DLTensor.Shape != nil {
		pin.Pin(m.DLTensor.Shape)
	}
	if m.DLTensor.Strides != nil {
		pin.Pin(m.DLTensor.Strides)
	}
	if msg := C.ctest_validate_versioned(unsafe.Pointer(m)); msg != nil {
		return C.GoString(msg)
	}
	return ""
}
