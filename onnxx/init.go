package onnxx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// RuntimeVersion is the ONNX Runtime release that setup/fetch-ort.sh fetches.
const RuntimeVersion = "1.30.0"

// Errors of this package. Each error returned wraps one of them (or an error of package core or
// adapters) and says what was wrong.
var (
	// ErrNoRuntime: no ONNX Runtime library was found, or it could not be loaded.
	ErrNoRuntime = errors.New("onnxx: ONNX Runtime library not available")
	// ErrNotInitialized: ONNX Runtime was not initialized; call Init first.
	ErrNotInitialized = errors.New("onnxx: ONNX Runtime is not initialized (call onnxx.Init)")
	// ErrDevice: the tensor is in device memory, which this package does not pass to ORT yet.
	ErrDevice = fmt.Errorf("%w: onnxx: device tensors are not supported yet", errUnsupported)
	// ErrDType: the element type has no ONNX equivalent this package handles.
	ErrDType = fmt.Errorf("%w: onnxx: element type", errUnsupported)
	// ErrValue: the ORT value is not a tensor this package can convert (strings, sequences, maps,
	// a destroyed value, or one whose data does not match its shape).
	ErrValue = errors.New("onnxx: unsupported ORT value")
	// ErrModel: the inputs or outputs asked for do not match the model.
	ErrModel = errors.New("onnxx: inputs or outputs do not match the model")
)

var initMu sync.Mutex

// LibraryPath returns the ONNX Runtime library Init loads: $ONNXRUNTIME_LIB when set, else the
// copy in the user's cache that setup/fetch-ort.sh fetched. It fails with ErrNoRuntime when that
// file does not exist.
func LibraryPath() (string, error) {
	if p := os.Getenv("ONNXRUNTIME_LIB"); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Size() == 0 {
			return "", fmt.Errorf("%w: $ONNXRUNTIME_LIB=%s is not a library file", ErrNoRuntime, p)
		}
		return p, nil
	}
	p, err := cachedLibrary()
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		return "", fmt.Errorf("%w: %s not found; run onnxx/setup/fetch-ort.sh (needs npm) or set $ONNXRUNTIME_LIB to your libonnxruntime.so",
			ErrNoRuntime, p)
	}
	return p, nil
}

// cachedLibrary is where setup/fetch-ort.sh puts the library.
func cachedLibrary() (string, error) {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%w: no cache directory: %v; set $ONNXRUNTIME_LIB", ErrNoRuntime, err)
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "dlpack-go", "ort", RuntimeVersion, "libonnxruntime.so.1"), nil
}

// Init loads the ONNX Runtime library (see LibraryPath) and initializes onnxruntime_go's
// environment. It does nothing if the environment is already initialized, by an earlier Init or
// by the caller through onnxruntime_go. It is safe to call repeatedly and concurrently; after a
// failure a later call tries again.
func Init() error {
	initMu.Lock()
	defer initMu.Unlock()
	if ort.IsInitialized() {
		return nil
	}
	p, err := LibraryPath()
	if err != nil {
		return err
	}
	ort.SetSharedLibraryPath(p)
	if err := ort.InitializeEnvironment(); err != nil {
		return fmt.Errorf("%w: loading %s: %v", ErrNoRuntime, p, err)
	}
	return nil
}

func initialized() error {
	if !ort.IsInitialized() {
		return ErrNotInitialized
	}
	return nil
}
