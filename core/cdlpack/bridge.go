package cdlpack

/*
#include <stdlib.h>
#include "dlpack_abi.h"

extern void dlpgReleaseExport(uintptr_t handle);

// The deleters this package installs on the tensors it exports. They hand the cgo.Handle kept
// in manager_ctx to Go, which frees everything (this very struct included) exactly once.
static void dlpg_export_deleter_versioned(dlpg_managed_versioned *self) {
	if (self == NULL) return;
	uintptr_t h = (uintptr_t)self->manager_ctx;
	self->manager_ctx = NULL;
	self->deleter = NULL;
	dlpgReleaseExport(h);
}

static void dlpg_export_deleter_legacy(dlpg_managed *self) {
	if (self == NULL) return;
	uintptr_t h = (uintptr_t)self->manager_ctx;
	self->manager_ctx = NULL;
	self->deleter = NULL;
	dlpgReleaseExport(h);
}

// manager_ctx is an integer (a cgo.Handle) stored as void*: done in C, where that is legal.
static void dlpg_install_versioned(void *m, uintptr_t handle) {
	dlpg_managed_versioned *mt = m;
	mt->manager_ctx = (void *)handle;
	mt->deleter = dlpg_export_deleter_versioned;
}

static void dlpg_install_legacy(void *m, uintptr_t handle) {
	dlpg_managed *mt = m;
	mt->manager_ctx = (void *)handle;
	mt->deleter = dlpg_export_deleter_legacy;
}

// Trampolines: Go cannot call a C function pointer itself.
static void dlpg_call_versioned(uintptr_t fn, void *m) {
	((void (*)(dlpg_managed_versioned *))fn)((dlpg_managed_versioned *)m);
}

static void dlpg_call_legacy(uintptr_t fn, void *m) {
	((void (*)(dlpg_managed *))fn)((dlpg_managed *)m);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// export is the Go side of one exported tensor, reached from C through the cgo.Handle in
// manager_ctx: the view that holds the memory, the pinner that fixes Go memory in place, and the
// C block that holds the descriptors.
type export struct {
	view   *core.Tensor
	pinner runtime.Pinner
	mem    unsafe.Pointer // C memory: managed struct, then shape, then strides
}

var (
	// exports maps live handles to their records; a deleter finds its record here at most once.
	exports     sync.Map // uintptr -> *export
	liveExports atomic.Int64
)

// LiveExports returns how many exported tensors have not had their deleter run yet. Tests use it
// to prove that every consumer let go.
func LiveExports() int64 { return liveExports.Load() }

//export dlpgReleaseExport
func dlpgReleaseExport(handle C.uintptr_t) {
	v, ok := exports.LoadAndDelete(uintptr(handle))
	if !ok {
		return // a deleter called twice, or a forged handle: nothing to do
	}
	e := v.(*export)
	cgo.Handle(handle).Delete()
	e.pinner.Unpin()
	e.view.Release()
	e.view = nil
	C.free(e.mem)
	liveExports.Add(-1)
}

// prepare takes a hold of its own on t, pins its Go memory and allocates the C block: head bytes
// of managed struct, then ndim shape and ndim stride entries. It fills the DLTensor at dl.
func prepare(t *core.Tensor, head uintptr) (*export, error) {
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "cdlpack: cannot export a nil tensor")
	}
	if t.Released() {
		return nil, errs.Errorf(core.ErrReleased, "cdlpack: cannot export a released tensor")
	}
	v, err := t.View()
	if err != nil {
		return nil, fmt.Errorf("cdlpack: export: %w", err)
	}
	nd := v.Ndim()
	size := head + uintptr(2*nd)*8
	mem := C.calloc(1, C.size_t(size))
	if mem == nil {
		v.Release()
		return nil, fmt.Errorf("cdlpack: out of C memory for the %d bytes of an export", size)
	}
	e := &export{view: v, mem: mem}
	if v.Device().DeviceType == core.CPU && v.Data() != nil {
		// Host memory that may be a Go allocation: C will hold its address, so it must not move
		// (Pin is a no-op for C memory). The view keeps it alive; the pin keeps it in place.
		e.pinner.Pin(v.Data())
	}
	return e, nil
}

// fill writes v's descriptor into dl, its shape and strides into the C block after head.
func (e *export) fill(dl *core.DLTensor, head uintptr) {
	v := e.view
	dl.Data = v.Data()
	dl.Device = v.Device()
	dl.Ndim = int32(v.Ndim())
	dl.Dtype = v.DType()
	dl.ByteOffset = v.ByteOffset() // 0 on host and CUDA-like devices: data is the first element
	if nd := v.Ndim(); nd > 0 {
		shape := unsafe.Slice((*int64)(unsafe.Add(e.mem, head)), nd)
		strides := unsafe.Slice((*int64)(unsafe.Add(e.mem, head+uintptr(nd)*8)), nd)
		copy(shape, v.Shape())
		copy(strides, v.Strides())
		dl.Shape, dl.Strides = &shape[0], &strides[0]
	}
}

// register publishes e under a new handle and installs the handle and the C deleter.
func (e *export) register(install func(h C.uintptr_t)) {
	h := cgo.NewHandle(e)
	exports.Store(uintptr(h), e)
	liveExports.Add(1)
	install(C.uintptr_t(h))
}

// ExportVersioned shares t with C code as a DLPack 1.3 DLManagedTensorVersioned, without copying
// the elements. The managed struct, shape and strides live in one block of C memory; Go memory
// the data points to is pinned until the deleter runs. The export holds a view of t of its own,
// so the caller may Release t at once. Strides are always written (for ndim > 0), data points at
// the first element with byte_offset 0 on host and CUDA-like devices (opaque-handle devices keep
// t's ByteOffset), and the flags carry t's read-only, copied and sub-byte-padded bits.
//
// The consumer must call the deleter exactly once when done (DeleteVersioned does); until then
// the memory stays valid and LiveExports counts the tensor. Released tensors are refused with
// core.ErrReleased.
func ExportVersioned(t *core.Tensor) (*core.DLManagedTensorVersioned, error) {
	head := unsafe.Sizeof(core.DLManagedTensorVersioned{})
	e, err := prepare(t, head)
	if err != nil {
		return nil, err
	}
	m := (*core.DLManagedTensorVersioned)(e.mem)
	m.Version = core.Version
	m.Flags = e.view.Flags() & (core.FlagReadOnly | core.FlagIsCopied | core.FlagIsSubbyteTypePadded)
	e.fill(&m.DLTensor, head)
	e.register(func(h C.uintptr_t) { C.dlpg_install_versioned(e.mem, h) })
	return m, nil
}

// ExportLegacy is ExportVersioned for consumers of the unversioned DLManagedTensor (DLPack < 1.0,
// such as NumPy < 2.1 and PyTorch < 2.9). It has no flags: a read-only tensor is exported all the
// same, and the consumer must be told by other means not to write to it.
func ExportLegacy(t *core.Tensor) (*core.DLManagedTensor, error) {
	head := unsafe.Sizeof(core.DLManagedTensor{})
	e, err := prepare(t, head)
	if err != nil {
		return nil, err
	}
	m := (*core.DLManagedTensor)(e.mem)
	e.fill(&m.DLTensor, head)
	e.register(func(h C.uintptr_t) { C.dlpg_install_legacy(e.mem, h) })
	return m, nil
}

// ImportVersioned takes ownership of a DLManagedTensorVersioned that C code produced and returns
// a Tensor over its memory, without copying. Every descriptor field is validated as untrusted
// input (see core.ImportVersioned); the producer's deleter runs exactly once, through a C
// trampoline: when the last holder of the tensor lets go, or before an error is returned (a
// tensor of another major version included). A NULL deleter is allowed (nothing to free).
func ImportVersioned(m *core.DLManagedTensorVersioned) (*core.Tensor, error) {
	if m == nil {
		return nil, errs.Errorf(core.ErrNil, "cdlpack: cannot import a nil DLManagedTensorVersioned")
	}
	var deleter func()
	if fn := m.Deleter; fn != 0 {
		deleter = func() { C.dlpg_call_versioned(C.uintptr_t(fn), unsafe.Pointer(m)) }
	}
	t, err := core.ImportVersioned(m, deleter)
	if err != nil {
		return nil, fmt.Errorf("cdlpack: import: %w", err)
	}
	return t, nil
}

// ImportLegacy is ImportVersioned for the unversioned DLManagedTensor of DLPack < 1.0. The
// tensor is writable (legacy tensors carry no flags).
func ImportLegacy(m *core.DLManagedTensor) (*core.Tensor, error) {
	if m == nil {
		return nil, errs.Errorf(core.ErrNil, "cdlpack: cannot import a nil DLManagedTensor")
	}
	var deleter func()
	if fn := m.Deleter; fn != 0 {
		deleter = func() { C.dlpg_call_legacy(C.uintptr_t(fn), unsafe.Pointer(m)) }
	}
	t, err := core.ImportLegacy(m, deleter)
	if err != nil {
		return nil, fmt.Errorf("cdlpack: import: %w", err)
	}
	return t, nil
}

// DeleteVersioned is what a consumer does when it is done with m: it calls m's deleter, if any.
// It must be called at most once per tensor, and m must not be used afterwards.
func DeleteVersioned(m *core.DLManagedTensorVersioned) {
	if m == nil || m.Deleter == 0 {
		return
	}
	C.dlpg_call_versioned(C.uintptr_t(m.Deleter), unsafe.Pointer(m))
}

// DeleteLegacy is DeleteVersioned for a legacy DLManagedTensor.
func DeleteLegacy(m *core.DLManagedTensor) {
	if m == nil || m.Deleter == 0 {
		return
	}
	C.dlpg_call_legacy(C.uintptr_t(m.Deleter), unsafe.Pointer(m))
}
