package onnxx

import (
	"fmt"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/ccall"
)

// APIVersion is the oldest version of ONNX Runtime's C API (ORT_API_VERSION) this package works
// with: everything but RunOptions.Profile needs only the OrtApi entries of version 24, which ORT
// 1.24 and later provide. Init refuses an older library with ErrNoRuntime, naming its version.
const APIVersion = 24

// NewestAPIVersion is the newest version of the C API whose OrtApi table this package knows (as
// onnxruntime_c_api.h declares it in github.com/yalue/onnxruntime_go v1.38.0; ORT 1.31 and later
// provide it, RuntimeVersion among them). Init asks a library for the newer of the two that it
// provides (ORT 1.x provides version x), and what needs more than APIVersion (RunOptions.Profile,
// version 25) fails with ErrNoRuntime on a library that lacks it.
const NewestAPIVersion = 31

// fn names an entry of the OrtApi table this package calls, by its index in the table. The
// table only grows at its end from one API version to the next, so these indices hold for every
// library that provides APIVersion; the entries past the last of version 24 are called only
// where the library gave a table of the version that has them.
type fn int

const (
	fnGetErrorCode                              fn = 1
	fnGetErrorMessage                           fn = 2
	fnCreateEnv                                 fn = 3
	fnCreateSession                             fn = 7
	fnCreateSessionFromArray                    fn = 8
	fnRun                                       fn = 9
	fnCreateSessionOptions                      fn = 10
	fnSetSessionLogSeverityLevel                fn = 22
	fnSetSessionGraphOptimization               fn = 23
	fnSetIntraOpNumThreads                      fn = 24
	fnSetInterOpNumThreads                      fn = 25
	fnSessionGetInputCount                      fn = 30
	fnSessionGetOutputCount                     fn = 31
	fnSessionGetOverridableInitializerCount     fn = 32
	fnSessionGetInputTypeInfo                   fn = 33
	fnSessionGetOutputTypeInfo                  fn = 34
	fnSessionGetOverridableInitializerTypeInfo  fn = 35
	fnSessionGetInputName                       fn = 36
	fnSessionGetOutputName                      fn = 37
	fnSessionGetOverridableInitializerName      fn = 38
	fnCreateTensorWithDataAsOrtValue            fn = 49
	fnGetTensorMutableData                      fn = 51
	fnCastTypeInfoToTensorInfo                  fn = 55
	fnGetOnnxTypeFromTypeInfo                   fn = 56
	fnGetTensorElementType                      fn = 60
	fnGetDimensionsCount                        fn = 61
	fnGetDimensions                             fn = 62
	fnGetSymbolicDimensions                     fn = 63
	fnCreateMemoryInfo                          fn = 68
	fnCreateCpuMemoryInfo                       fn = 69
	fnAllocatorFree                             fn = 76
	fnGetAllocatorWithDefaultOptions            fn = 78
	fnReleaseEnv                                fn = 92
	fnReleaseStatus                             fn = 93
	fnReleaseMemoryInfo                         fn = 94
	fnReleaseSession                            fn = 95
	fnReleaseValue                              fn = 96
	fnReleaseTypeInfo                           fn = 98
	fnReleaseSessionOptions                     fn = 100
	fnGetAvailableProviders                     fn = 125
	fnReleaseAvailableProviders                 fn = 126
	fnRunWithBinding                            fn = 133
	fnCreateIoBinding                           fn = 134
	fnReleaseIoBinding                          fn = 135
	fnBindInput                                 fn = 136
	fnBindOutput                                fn = 137
	fnBindOutputToDevice                        fn = 138
	fnGetBoundOutputValues                      fn = 140
	fnAppendExecutionProviderCUDAV2             fn = 204
	fnCreateCUDAProviderOptions                 fn = 205
	fnUpdateCUDAProviderOptions                 fn = 206
	fnReleaseCUDAProviderOptions                fn = 208
	fnSessionOptionsAppendProvider              fn = 216
	fnUpdateEnvWithCustomLogLevel               fn = 226
	fnEnableMemPattern                          fn = 16
	fnDisableMemPattern                         fn = 17
	fnEnableCpuMemArena                         fn = 18
	fnDisableCpuMemArena                        fn = 19
	fnCreateRunOptions                          fn = 39
	fnRunOptionsSetRunLogSeverityLevel          fn = 41
	fnRunOptionsSetRunTag                       fn = 42
	fnRunOptionsSetTerminate                    fn = 46
	fnReleaseRunOptions                         fn = 97
	fnAddSessionConfigEntry                     fn = 130
	fnAddRunConfigEntry                         fn = 165
	fnGetTensorElementTypeAndShapeDataReference fn = 414 // the last entry of APIVersion 24
	fnRunOptionsEnableProfiling                 fn = 415 // version 25
)

// apiProfiling is the C API version that added fnRunOptionsEnableProfiling.
const apiProfiling = 25

// Constants of onnxruntime_c_api.h.
const (
	fnOrtApiBaseGetApi                   = 0 // OrtApiBase's entries
	fnOrtApiBaseGetVersionString         = 1
	ortTypeTensor                        = 1 // ONNXType: ONNX_TYPE_TENSOR
	ortTypeSequence                      = 2
	ortTypeMap                           = 3
	ortDeviceAllocator                   = 0 // OrtAllocatorType
	ortArenaAllocator                    = 1
	ortMemTypeDefault                    = 0 // OrtMemType
	maxNameLen                           = 1 << 16
	maxRank                              = 64
	errorCodeNoSuchFile                  = 3 // OrtErrorCode: ORT_NO_SUCHFILE
	errorCodeInvalidArgument             = 2 // ORT_INVALID_ARGUMENT
	errorCodeNotImplemented              = 9 // ORT_NOT_IMPLEMENTED
	errorCodeFail                        = 1 // ORT_FAIL
	providerCUDA                         = "CUDAExecutionProvider"
	cpuName                              = "Cpu"
	cudaName                             = "Cuda"
	envLogID                             = "onnxx"
	noStatus                     uintptr = 0
)

// ortAPI is the loaded library: the OrtApi table and what Init made once per process.
type ortAPI struct {
	table     unsafe.Pointer // const OrtApi*
	version   string         // the library's version string, "1.31.1"
	api       int            // the version of the table: APIVersion to NewestAPIVersion
	env       uintptr        // OrtEnv*
	cpuInfo   uintptr        // OrtMemoryInfo* for CPU memory
	allocator uintptr        // the default OrtAllocator* (not released)
	path      string
}

var lib *ortAPI // set once by Init, under initMu

// f returns the C function at index i of the table.
func (a *ortAPI) f(i fn) uintptr {
	return *(*uintptr)(unsafe.Add(a.table, uintptr(i)*unsafe.Sizeof(uintptr(0))))
}

// call calls the OrtApi function i, which returns an OrtStatus*, and turns a status into an error
// wrapping ErrRuntime that says what op was doing and what ORT said. Like purego.SyscallN,
// pointers passed as uintptr(unsafe.Pointer(p)) in the call expression stay valid for the call.
//
//go:uintptrescapes
func (a *ortAPI) call(op string, i fn, args ...uintptr) error {
	st := invoke(a.f(i), args...)
	if st == noStatus {
		return nil
	}
	return a.statusError(op, st)
}

// do calls the OrtApi function i, which returns nothing or a plain value.
//
//go:uintptrescapes
func (a *ortAPI) do(i fn, args ...uintptr) uintptr { return invoke(a.f(i), args...) }

// statusError reads and releases an OrtStatus.
func (a *ortAPI) statusError(op string, st uintptr) error {
	code := int32(invoke(a.f(fnGetErrorCode), st))
	msg := goString(invoke(a.f(fnGetErrorMessage), st), 1<<20)
	invoke(a.f(fnReleaseStatus), st)
	return &RuntimeError{Op: op, Code: int(code), Message: msg}
}

// RuntimeError is an error ONNX Runtime returned (an OrtStatus): the operation, ORT's error code
// (OrtErrorCode) and its message. It matches ErrRuntime with errors.Is.
type RuntimeError struct {
	Op      string // what onnxx asked ORT to do
	Code    int    // OrtErrorCode: 1 FAIL, 2 INVALID_ARGUMENT, 3 NO_SUCHFILE, 6 RUNTIME_EXCEPTION, ...
	Message string // ORT's own text
}

// Error formats the failure as "onnxx: OP: MESSAGE (ONNX Runtime error code N)": what failed
// first, ORT's words after.
func (e *RuntimeError) Error() string {
	return fmt.Sprintf("onnxx: %s: %s (ONNX Runtime error code %d)", e.Op, e.Message, e.Code)
}

// Is makes RuntimeError match ErrRuntime.
func (e *RuntimeError) Is(target error) bool { return target == ErrRuntime }

// invoke calls the C function fn with integer and pointer arguments and returns its result, through
// package ccall (an assembly trampoline on linux/amd64 and linux/arm64, purego.SyscallN
// elsewhere). Pointers passed as uintptr(unsafe.Pointer(p)) in the call expression stay valid for
// the call (go:uintptrescapes). The hot calls of a run (Run, CreateTensorWithDataAsOrtValue,
// ReleaseValue) call ccall's fixed-arity functions directly, which copy no argument slice.
//
//go:uintptrescapes
func invoke(fn uintptr, args ...uintptr) uintptr { return ccall.CallN(fn, args...) }

// goString copies a NUL-terminated C string of at most max bytes.
func goString(p uintptr, max int) string {
	if p == 0 {
		return ""
	}
	n := 0
	base := cptr(p)
	for n < max && *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}

// cstr returns s as a NUL-terminated byte slice; the caller keeps it alive for as long as C reads it.
func cstr(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// ptr is the address of b's first byte, as an argument.
func ptr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// cptr turns an address C returned into a pointer (memory the Go collector does not manage).
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
