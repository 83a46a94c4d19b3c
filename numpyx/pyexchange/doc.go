// Package pyexchange is the old import path of the Python bridge.
//
// Deprecated: moved to github.com/dlpack-go/dlpack/pyexchange. This package forwards every
// exported name there for one release and will then be removed. It is pure Go: the C functions
// the dlpackgo Python package calls are exported once, by the new package, so a library that
// imports both paths still registers into one table.
package pyexchange

import (
	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// Exception is the Python exception class a Go error is raised as.
//
// Deprecated: use pyexchange.Exception of github.com/dlpack-go/dlpack/pyexchange.
type Exception = pyexchange.Exception

// Handle names a Go tensor handed to Python.
//
// Deprecated: use pyexchange.Handle of github.com/dlpack-go/dlpack/pyexchange.
type Handle = pyexchange.Handle

// StreamSync makes a tensor ready for a consumer's stream.
//
// Deprecated: use pyexchange.StreamSync of github.com/dlpack-go/dlpack/pyexchange.
type StreamSync = pyexchange.StreamSync

// The Python exception classes.
//
// Deprecated: use the constants of github.com/dlpack-go/dlpack/pyexchange.
const (
	RuntimeError = pyexchange.RuntimeError
	ValueError   = pyexchange.ValueError
	TypeError    = pyexchange.TypeError
	BufferError  = pyexchange.BufferError
	MemoryError  = pyexchange.MemoryError
)

// The sentinel errors: the same values as the new package's, so errors.Is matches either.
//
// Deprecated: use the errors of github.com/dlpack-go/dlpack/pyexchange.
var (
	ErrAllocate    = pyexchange.ErrAllocate
	ErrArgument    = pyexchange.ErrArgument
	ErrRegister    = pyexchange.ErrRegister
	ErrStream      = pyexchange.ErrStream
	ErrHandle      = pyexchange.ErrHandle
	ErrNotAttached = pyexchange.ErrNotAttached
	ErrOutOfMemory = pyexchange.ErrOutOfMemory
)

// ExchangeAPI forwards to pyexchange.ExchangeAPI.
//
// Deprecated: use pyexchange.ExchangeAPI of github.com/dlpack-go/dlpack/pyexchange.
func ExchangeAPI() *core.DLPackExchangeAPI { return pyexchange.ExchangeAPI() }

// ExchangeAPILiveAllocations forwards to pyexchange.ExchangeAPILiveAllocations.
//
// Deprecated: use pyexchange.ExchangeAPILiveAllocations of github.com/dlpack-go/dlpack/pyexchange.
func ExchangeAPILiveAllocations() int64 { return pyexchange.ExchangeAPILiveAllocations() }

// ExchangeAllocate forwards to pyexchange.ExchangeAllocate.
//
// Deprecated: use pyexchange.ExchangeAllocate of github.com/dlpack-go/dlpack/pyexchange.
func ExchangeAllocate(dtype core.DLDataType, device core.DLDevice, shape []int64) (*core.DLManagedTensorVersioned, error) {
	return pyexchange.ExchangeAllocate(dtype, device, shape)
}

// ExportLegacy forwards to pyexchange.ExportLegacy.
//
// Deprecated: use pyexchange.ExportLegacy of github.com/dlpack-go/dlpack/pyexchange.
func ExportLegacy(t *core.Tensor, opts ...adapters.Option) (*core.DLManagedTensor, error) {
	return pyexchange.ExportLegacy(t, opts...)
}

// ExportVersioned forwards to pyexchange.ExportVersioned.
//
// Deprecated: use pyexchange.ExportVersioned of github.com/dlpack-go/dlpack/pyexchange.
func ExportVersioned(t *core.Tensor, opts ...adapters.Option) (*core.DLManagedTensorVersioned, error) {
	return pyexchange.ExportVersioned(t, opts...)
}

// Functions forwards to pyexchange.Functions.
//
// Deprecated: use pyexchange.Functions of github.com/dlpack-go/dlpack/pyexchange.
func Functions() []string { return pyexchange.Functions() }

// ImportLegacy forwards to pyexchange.ImportLegacy.
//
// Deprecated: use pyexchange.ImportLegacy of github.com/dlpack-go/dlpack/pyexchange.
func ImportLegacy(m *core.DLManagedTensor) (*core.Tensor, error) { return pyexchange.ImportLegacy(m) }

// ImportVersioned forwards to pyexchange.ImportVersioned.
//
// Deprecated: use pyexchange.ImportVersioned of github.com/dlpack-go/dlpack/pyexchange.
func ImportVersioned(m *core.DLManagedTensorVersioned) (*core.Tensor, error) {
	return pyexchange.ImportVersioned(m)
}

// LiveExports forwards to pyexchange.LiveExports.
//
// Deprecated: use pyexchange.LiveExports of github.com/dlpack-go/dlpack/pyexchange.
func LiveExports() int64 { return pyexchange.LiveExports() }

// LiveHandles forwards to pyexchange.LiveHandles.
//
// Deprecated: use pyexchange.LiveHandles of github.com/dlpack-go/dlpack/pyexchange.
func LiveHandles() int64 { return pyexchange.LiveHandles() }

// Lookup forwards to pyexchange.Lookup.
//
// Deprecated: use pyexchange.Lookup of github.com/dlpack-go/dlpack/pyexchange.
func Lookup(h Handle) (*core.Tensor, error) { return pyexchange.Lookup(h) }

// MapError forwards to pyexchange.MapError.
//
// Deprecated: use pyexchange.MapError of github.com/dlpack-go/dlpack/pyexchange.
func MapError(target error, exc Exception) { pyexchange.MapError(target, exc) }

// MustRegister forwards to pyexchange.MustRegister.
//
// Deprecated: use pyexchange.MustRegister of github.com/dlpack-go/dlpack/pyexchange.
func MustRegister(name string, fn any, doc string) { pyexchange.MustRegister(name, fn, doc) }

// Register forwards to pyexchange.Register.
//
// Deprecated: use pyexchange.Register of github.com/dlpack-go/dlpack/pyexchange.
func Register(name string, fn any, doc string) error { return pyexchange.Register(name, fn, doc) }

// Release forwards to pyexchange.Release.
//
// Deprecated: use pyexchange.Release of github.com/dlpack-go/dlpack/pyexchange.
func Release(h Handle) error { return pyexchange.Release(h) }

// SetStreamSync forwards to pyexchange.SetStreamSync.
//
// Deprecated: use pyexchange.SetStreamSync of github.com/dlpack-go/dlpack/pyexchange.
func SetStreamSync(dev core.DeviceType, sync StreamSync) { pyexchange.SetStreamSync(dev, sync) }

// Shareable forwards to pyexchange.Shareable.
//
// Deprecated: use pyexchange.Shareable of github.com/dlpack-go/dlpack/pyexchange.
func Shareable(t *core.Tensor, legacy bool) (ok bool, why string) {
	return pyexchange.Shareable(t, legacy)
}

// ExceptionFor forwards to pyexchange.ExceptionFor.
//
// Deprecated: use pyexchange.ExceptionFor of github.com/dlpack-go/dlpack/pyexchange.
func ExceptionFor(err error) Exception { return pyexchange.ExceptionFor(err) }

// NewHandle forwards to pyexchange.NewHandle.
//
// Deprecated: use pyexchange.NewHandle of github.com/dlpack-go/dlpack/pyexchange.
func NewHandle(t *core.Tensor) (Handle, error) { return pyexchange.NewHandle(t) }
