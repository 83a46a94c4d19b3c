package onnxx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// RuntimeVersion is the ONNX Runtime release that scripts/fetch-ort.sh fetches.
const RuntimeVersion = "1.31.1"

// oldestRuntimeVersion is the oldest ONNX Runtime release this package is tested with (the
// first that provides APIVersion); `scripts/fetch-ort.sh 1.24.3` fetches it.
const oldestRuntimeVersion = "1.24.3"

// Errors of this package. Each error returned wraps one of them (or an error of package core or
// adapters) and says what was wrong.
var (
	// ErrNoRuntime: no ONNX Runtime library was found, it could not be loaded, or it is older than
	// APIVersion.
	ErrNoRuntime = errors.New("onnxx: ONNX Runtime library not available")
	// ErrRuntime: an ONNX Runtime call failed; the error is a *RuntimeError with ORT's code and
	// message.
	ErrRuntime = errors.New("onnxx: ONNX Runtime call failed")
	// ErrDType: an element type ONNX Runtime or this package cannot pass (complex, float8,
	// sub-byte types, vector lanes, ONNX strings), or an input whose element type is not the
	// model's (see CastInputs).
	ErrDType = errs.Errorf(adapters.ErrUnsupported, "onnxx: element type")
	// ErrUnsupportedDevice: the tensor's memory is on a device this session cannot hand to ORT
	// (anything but CPU memory and, with the CUDA execution provider, CUDA memory).
	ErrUnsupportedDevice = errs.Errorf(adapters.ErrUnsupported, "onnxx: memory on a device this session cannot use")
	// ErrValue: a model input or output, or an ORT value, is not a tensor (a sequence, a map) or
	// holds strings: this package passes numeric and bool tensors only.
	ErrValue = errs.Errorf(adapters.ErrUnsupported, "onnxx: not a numeric tensor")
	// ErrModel: the inputs or outputs asked for do not match the model (names, counts, shapes).
	ErrModel = errors.New("onnxx: inputs or outputs do not match the model")
	// ErrOverlap: an output destination shares memory with an input or another destination.
	ErrOverlap = errors.New("onnxx: an output destination overlaps an input or another destination")
	// ErrProvider: an execution provider could not be added to the session options.
	ErrProvider = errors.New("onnxx: execution provider not available")
)

var initMu sync.Mutex

// LibraryPath returns the ONNX Runtime library Init loads: $ONNXRUNTIME_LIB when set, else the
// copy in the user's cache that scripts/fetch-ort.sh fetched. It fails with ErrNoRuntime when that
// file does not exist.
func LibraryPath() (string, error) {
	if p := os.Getenv("ONNXRUNTIME_LIB"); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Size() == 0 {
			return "", errs.Errorf(ErrNoRuntime, "onnxx: $ONNXRUNTIME_LIB=%s is not a library file", p)
		}
		return p, nil
	}
	p, err := cachedLibrary()
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		return "", errs.Errorf(ErrNoRuntime, "onnxx: %s not found; run scripts/fetch-ort.sh (needs npm) or set $ONNXRUNTIME_LIB to your libonnxruntime.so", p)
	}
	return p, nil
}

// cachedLibrary is where scripts/fetch-ort.sh puts the library.
func cachedLibrary() (string, error) {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errs.Errorf(ErrNoRuntime, "onnxx: no cache directory: %v; set $ONNXRUNTIME_LIB", err)
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "dlpack-go", "ort", RuntimeVersion, "libonnxruntime.so.1"), nil
}

// Init loads the ONNX Runtime library (see LibraryPath), checks that it provides C API version
// APIVersion, and makes the process's ORT environment, silent (see SetLogLevel). It does nothing
// once it has succeeded; it is safe to call repeatedly and concurrently; after a failure a later
// call tries again. NewSession calls it.
func Init() error {
	_, err := loaded()
	return err
}

// loaded returns the library, loading it on first use.
func loaded() (*ortAPI, error) {
	initMu.Lock()
	defer initMu.Unlock()
	if lib != nil {
		return lib, nil
	}
	p, err := LibraryPath()
	if err != nil {
		return nil, err
	}
	a, err := load(p)
	if err != nil {
		return nil, err
	}
	lib = a
	return a, nil
}

// providedAPI is the newest C API version that ONNX Runtime version provides: ORT 1.x provides
// versions 1 to x ("1.30.0": 30). ok is false for a version string of another form.
func providedAPI(version string) (x int, ok bool) {
	major, rest, ok := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	x, err := strconv.Atoi(minor)
	return x, ok && major == "1" && err == nil
}

// apiVersionFor returns the C API version to ask a library of the given version string for: ORT
// 1.x provides versions 1 to x, so the newer of APIVersion and x, up to NewestAPIVersion. A
// version string that does not parse gets APIVersion. (Asking GetApi for a version the library
// lacks returns NULL and prints a complaint to stderr, so the version is chosen before asking.)
func apiVersionFor(version string) int {
	x, ok := providedAPI(version)
	if !ok {
		return APIVersion
	}
	return min(max(x, APIVersion), NewestAPIVersion)
}

// tooOld is the error for the library at p, ONNX Runtime version, which provides C API versions
// up to api (0 where not known) and not APIVersion.
func tooOld(p, version string, api int) error {
	has := ""
	if api > 0 {
		has = fmt.Sprintf(" (C API %d)", api)
	}
	return errs.Errorf(ErrNoRuntime, "onnxx: the library at %s is ONNX Runtime %s%s; onnxx needs ONNX Runtime 1.%d or later (C API %d): run scripts/fetch-ort.sh (ONNX Runtime %s) or set $ONNXRUNTIME_LIB to a newer libonnxruntime.so",
		p, version, has, APIVersion, APIVersion, RuntimeVersion)
}

// load opens the library at p and makes the environment, CPU memory info and allocator.
func load(p string) (*ortAPI, error) {
	getBase, err := openLibrary(p)
	if err != nil || getBase == 0 {
		return nil, errs.Errorf(ErrNoRuntime, "onnxx: loading %s: %v", p, err)
	}
	base := cptr(invoke(getBase)) // const OrtApiBase*: {GetApi, GetVersionString}
	if base == nil {
		return nil, errs.Errorf(ErrNoRuntime, "onnxx: %s: OrtGetApiBase returned NULL", p)
	}
	entry := func(i int) uintptr { return *(*uintptr)(unsafe.Add(base, i*int(unsafe.Sizeof(uintptr(0))))) }
	a := &ortAPI{path: p, version: goString(invoke(entry(fnOrtApiBaseGetVersionString)), 64)}
	if x, ok := providedAPI(a.version); ok && x < APIVersion {
		// refused before GetApi, which would print its own complaint to stderr
		return nil, tooOld(p, a.version, x)
	}
	a.api = apiVersionFor(a.version)
	a.table = cptr(invoke(entry(fnOrtApiBaseGetApi), uintptr(a.api)))
	if a.table == nil {
		return nil, tooOld(p, a.version, 0)
	}
	logID := cstr(envLogID)
	if err := a.call("creating the environment", fnCreateEnv, uintptr(LogSilent.severity()), ptr(logID),
		uintptr(unsafe.Pointer(&a.env))); err != nil {
		return nil, errs.Errorf(ErrNoRuntime, "%w", err)
	}
	if err := a.call("creating CPU memory info", fnCreateCpuMemoryInfo, ortArenaAllocator, ortMemTypeDefault,
		uintptr(unsafe.Pointer(&a.cpuInfo))); err != nil {
		return nil, errs.Errorf(ErrNoRuntime, "%w", err)
	}
	if err := a.call("getting the default allocator", fnGetAllocatorWithDefaultOptions,
		uintptr(unsafe.Pointer(&a.allocator))); err != nil {
		return nil, errs.Errorf(ErrNoRuntime, "%w", err)
	}
	return a, nil
}

// LoadedLibrary returns the path of the ONNX Runtime library Init loaded and its version string
// ("1.31.1"), or ok false before Init succeeded. Package ortgo points onnxruntime_go at the same
// library, so that one process holds one copy of ORT.
func LoadedLibrary() (path, version string, ok bool) {
	initMu.Lock()
	defer initMu.Unlock()
	if lib == nil {
		return "", "", false
	}
	return lib.path, lib.version, true
}

// LogLevel is how much ONNX Runtime writes to standard error. The zero value, LogSilent, lets
// through only fatal messages (which ORT writes just before it aborts): no run, error or warning
// prints anything unless the caller asks for it.
type LogLevel int

// The log levels, from silent to everything.
const (
	LogSilent  LogLevel = iota // fatal messages only (the default)
	LogError                   // errors
	LogWarning                 // warnings and errors
	LogInfo                    // information, warnings and errors
	LogVerbose                 // everything
)

// severity is the ORT_LOGGING_LEVEL of l.
func (l LogLevel) severity() int { return 4 - int(min(max(l, LogSilent), LogVerbose)) }

// String names the level.
func (l LogLevel) String() string {
	switch l {
	case LogSilent:
		return "silent"
	case LogError:
		return "error"
	case LogWarning:
		return "warning"
	case LogInfo:
		return "info"
	case LogVerbose:
		return "verbose"
	}
	return fmt.Sprintf("LogLevel(%d)", int(l))
}

// SetLogLevel sets how much the process's ORT environment logs to standard error (sessions
// made with SessionOptions.LogLevel set use theirs). It calls Init.
func SetLogLevel(l LogLevel) error {
	a, err := loaded()
	if err != nil {
		return err
	}
	return a.call("setting the log level", fnUpdateEnvWithCustomLogLevel, a.env, uintptr(l.severity()))
}

// Providers lists the execution providers the loaded library was built with
// ("CPUExecutionProvider", and for example "CUDAExecutionProvider"). It calls Init.
func Providers() ([]string, error) {
	a, err := loaded()
	if err != nil {
		return nil, err
	}
	var arr uintptr
	var n int32
	if err := a.call("listing providers", fnGetAvailableProviders, uintptr(unsafe.Pointer(&arr)),
		uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	defer a.call("releasing the provider list", fnReleaseAvailableProviders, arr, uintptr(n))
	out := make([]string, 0, max(n, 0))
	for i := range int(n) {
		out = append(out, goString(*(*uintptr)(unsafe.Add(cptr(arr), i*8)), maxNameLen))
	}
	return out, nil
}

// unsupportedDevice is the error for a tensor in memory the session cannot hand to ORT.
func unsupportedDevice(kind, name, format string, args ...any) error {
	return errs.Errorf(ErrUnsupportedDevice, "onnxx: %s %q: "+format, append([]any{kind, name}, args...)...)
}
