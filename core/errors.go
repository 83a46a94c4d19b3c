package core

import (
	"errors"
	"fmt"
)

// ErrInvalid is the root of every error about a malformed tensor description: each of the
// more specific errors below matches it with errors.Is too.
var ErrInvalid = errors.New("core: invalid tensor")

// Errors about malformed descriptors. Each error returned by this package wraps one of them
// (and so ErrInvalid) and names the offending field and value.
var (
	ErrNdim     = fmt.Errorf("%w: bad ndim", ErrInvalid)
	ErrShape    = fmt.Errorf("%w: bad shape", ErrInvalid)
	ErrStrides  = fmt.Errorf("%w: bad strides", ErrInvalid)
	ErrOverflow = fmt.Errorf("%w: size overflows int64", ErrInvalid)
	ErrNullData = fmt.Errorf("%w: NULL data with elements", ErrInvalid)
	ErrDType    = fmt.Errorf("%w: bad dtype", ErrInvalid)
	ErrDevice   = fmt.Errorf("%w: bad device", ErrInvalid)
	ErrVersion  = fmt.Errorf("%w: unsupported DLPack major version", ErrInvalid)
	ErrBounds   = fmt.Errorf("%w: elements outside the memory given", ErrInvalid)
	ErrNil      = fmt.Errorf("%w: nil pointer", ErrInvalid)
)

// Errors about operations a valid tensor does not allow.
var (
	// ErrReadOnly: writable access was asked of a read-only tensor.
	ErrReadOnly = errors.New("core: tensor is read-only")
	// ErrNotContiguous: the operation needs compact row-major (C-order) elements.
	ErrNotContiguous = errors.New("core: tensor is not C-contiguous")
	// ErrNotHost: the operation needs memory the CPU can address (the tensor is on a device).
	ErrNotHost = errors.New("core: tensor memory is not host-accessible")
	// ErrReleased: the tensor was released; its memory may be gone.
	ErrReleased = errors.New("core: tensor was released")
	// ErrNotViewable: the view asked for cannot share memory with the tensor (a copy is needed).
	ErrNotViewable = errors.New("core: no view without a copy")
	// ErrTypeMismatch: the Go element type does not match the tensor's dtype.
	ErrTypeMismatch = errors.New("core: element type does not match dtype")
	// ErrSubByte: the operation does not support packed sub-byte element types.
	ErrSubByte = errors.New("core: operation not supported for sub-byte dtypes")
	// ErrImported: a managed tensor was imported while an earlier import of it is still held.
	ErrImported = errors.New("core: managed tensor is already imported")
	// ErrArgument: an argument to a view or constructor is out of range.
	ErrArgument = errors.New("core: bad argument")
	// ErrTooLarge: a new tensor would take more bytes than this machine has memory and swap,
	// or than the process's control group allows (New, memory.NewUninit and the copies made with
	// them: the Clone of a view that repeats one element 2^40 times, say). Go's allocator, or
	// the kernel's out-of-memory killer, ends the process when it cannot have the memory; this
	// error comes first, for what could never be had.
	ErrTooLarge = errors.New("core: larger than this machine's memory")
)
