package cuda

import (
	"errors"
	"fmt"
)

// ErrNoDevice is matched (errors.Is) by every error that means CUDA cannot be used here: no
// libcuda.so.1, a driver that fails to initialise, no device, or a device ordinal that does not
// exist. Tests skip with it.
var ErrNoDevice = errors.New("cuda: no CUDA device")

// ErrCUDA is matched by every error a driver call returned (see Error).
var ErrCUDA = errors.New("cuda: driver call failed")

// ErrArgument is matched by errors about arguments this package refuses before calling the
// driver (negative sizes, a NULL pointer with a non-zero size, ...).
var ErrArgument = errors.New("cuda: bad argument")

// Result is a CUresult, the status code of a driver call.
type Result int32

// CUresult values this package tests for.
const (
	Success              Result = 0   // CUDA_SUCCESS
	ErrorInvalidValue    Result = 1   // CUDA_ERROR_INVALID_VALUE
	ErrorOutOfMemory     Result = 2   // CUDA_ERROR_OUT_OF_MEMORY
	ErrorNotInitialized  Result = 3   // CUDA_ERROR_NOT_INITIALIZED
	ErrorNoDevice        Result = 100 // CUDA_ERROR_NO_DEVICE
	ErrorInvalidDevice   Result = 101 // CUDA_ERROR_INVALID_DEVICE
	ErrorInvalidContext  Result = 201 // CUDA_ERROR_INVALID_CONTEXT
	ErrorInvalidHandle   Result = 400 // CUDA_ERROR_INVALID_HANDLE
	ErrorNotReady        Result = 600 // CUDA_ERROR_NOT_READY
	ErrorIllegalAddress  Result = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
	ErrorNotSupported    Result = 801 // CUDA_ERROR_NOT_SUPPORTED
	ErrorUnknown         Result = 999 // CUDA_ERROR_UNKNOWN
	ErrorStubLibrary     Result = 34  // CUDA_ERROR_STUB_LIBRARY
	ErrorSystemNotReady  Result = 802 // CUDA_ERROR_SYSTEM_NOT_READY
	ErrorDriverMismatch  Result = 803 // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
	ErrorCompatNotOnDev  Result = 804 // CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE
	ErrorInsufficientDrv Result = 35  // CUDA_ERROR_INSUFFICIENT_DRIVER
)

// fallbackNames name the codes above when cuGetErrorName is not available (no driver).
var fallbackNames = map[Result]string{
	Success: "CUDA_SUCCESS", ErrorInvalidValue: "CUDA_ERROR_INVALID_VALUE",
	ErrorOutOfMemory: "CUDA_ERROR_OUT_OF_MEMORY", ErrorNotInitialized: "CUDA_ERROR_NOT_INITIALIZED",
	ErrorNoDevice: "CUDA_ERROR_NO_DEVICE", ErrorInvalidDevice: "CUDA_ERROR_INVALID_DEVICE",
	ErrorInvalidContext: "CUDA_ERROR_INVALID_CONTEXT", ErrorInvalidHandle: "CUDA_ERROR_INVALID_HANDLE",
	ErrorNotReady: "CUDA_ERROR_NOT_READY", ErrorIllegalAddress: "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrorNotSupported: "CUDA_ERROR_NOT_SUPPORTED", ErrorUnknown: "CUDA_ERROR_UNKNOWN",
	ErrorStubLibrary: "CUDA_ERROR_STUB_LIBRARY", ErrorSystemNotReady: "CUDA_ERROR_SYSTEM_NOT_READY",
	ErrorDriverMismatch:  "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	ErrorCompatNotOnDev:  "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	ErrorInsufficientDrv: "CUDA_ERROR_INSUFFICIENT_DRIVER",
}

// Error is a failed driver call: the entry point, the CUresult and its CUDA name and
// description (from cuGetErrorName and cuGetErrorString when the driver provides them).
type Error struct {
	Op   string // the driver entry point, such as "cuMemAlloc_v2"
	Code Result
	Name string // such as "CUDA_ERROR_OUT_OF_MEMORY"
	Desc string // the driver's description, if any
}

// Error formats the failure like "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
func (e *Error) Error() string {
	s := fmt.Sprintf("cuda: %s: %s (%d)", e.Op, e.Name, int32(e.Code))
	if e.Desc != "" {
		s += ": " + e.Desc
	}
	return s
}

// Is makes an *Error match ErrCUDA, and ErrNoDevice when the code says the device is missing.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrCUDA:
		return true
	case ErrNoDevice:
		return e.Code == ErrorNoDevice || e.Code == ErrorInvalidDevice
	}
	return false
}

// newError builds the error of a failed call; names come from the driver when it is loaded.
func newError(op string, r Result) *Error {
	e := &Error{Op: op, Code: r, Name: fallbackNames[r]}
	if name, desc, ok := driverErrorText(r); ok {
		e.Name, e.Desc = name, desc
	}
	if e.Name == "" {
		e.Name = fmt.Sprintf("CUresult(%d)", int32(r))
	}
	return e
}

// check turns a CUresult into nil or an *Error.
func check(op string, r Result) error {
	if r == Success {
		return nil
	}
	return newError(op, r)
}
