// Package ortgo converts between core tensors and the values of github.com/yalue/onnxruntime_go
// (ort.Value), for programs that already use onnxruntime_go's sessions. It needs cgo (as
// onnxruntime_go does); package onnxx, which runs models itself through ONNX Runtime's C API,
// does not.
//
// ortgo is a module of its own, github.com/dlpack-go/dlpack/onnxx/ortgo (on onnxruntime_go
// v1.38.0, which needs ONNX Runtime 1.31 or later), so that requiring dlpack-go never moves the onnxruntime_go release, and with it the
// ONNX Runtime library, that a program picks; require it beside the root module (the README's
// install section says how).
//
// Init points onnxruntime_go at the library package onnxx loaded (onnxx.LoadedLibrary), so that
// onnxx sessions and onnxruntime_go sessions share one copy of ONNX Runtime and one environment
// in the process.
//
// # Zero-copy and copies
//
//	conversion                               memory
//	ToValue, C-order host tensor             shared: ORT reads the tensor's elements
//	ToValue, other layouts                   copied once into C order (adapters options decide)
//	ToValue, 0-d tensor                      copied (onnxruntime_go makes 0-d values over its own copy)
//	FromValue, *ort.Tensor[T], custom data   shared: the tensor is over the value's memory and owns it
//	FromValue, *ort.Scalar[T]                copied (one element)
//
// ToValue shares memory with host tensors in C order of float32, float64, float16, bfloat16,
// int8 to int64, uint8 to uint64 and bool (float16 and bfloat16 through onnxruntime_go's
// custom-data tensors). Read-only tensors are shared too: ORT never writes its inputs. Device
// tensors are refused (onnxx.ErrUnsupportedDevice), and so are other dtypes (onnxx.ErrDType), and
// 0-d float16 and bfloat16 tensors.
//
// # Ownership
//
// A value from ToValue holds the tensor's memory (core.Attach): the memory stays valid while the
// value is reachable, even if the tensor is released. Destroy the value when done, as any
// onnxruntime_go value; a value that becomes unreachable undestroyed is destroyed by the garbage
// collector.
//
// FromValue takes ownership of the value it converts. For a value of onnxruntime_go's, the tensor
// is made with core.Wrap and the value's Destroy as the release function: the value is destroyed
// exactly once, when the last tensor over it (views included) is released, or collected
// unreleased. For a value ToValue made, FromValue gives a view of the tensor the value is over.
package ortgo

import (
	"errors"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/dlpack-go/dlpack/onnxx/ortgo/internal/errs"
)

// ErrNotInitialized: onnxruntime_go's environment is not initialized; call Init first.
var ErrNotInitialized = errors.New("ortgo: onnxruntime_go is not initialized (call ortgo.Init)")

var initMu sync.Mutex

// The onnxruntime_go release this module requires (go.mod) and the C API version its
// onnxruntime_c_api.h declares (ORT_API_VERSION), which onnxruntime_go asks the library for: ORT
// 1.x provides versions 1 to x. A test holds both to go.mod and the header.
const (
	bindingRelease = "v1.38.0"
	bindingAPI     = 31
)

// Init loads ONNX Runtime with onnxx.Init and initializes onnxruntime_go's environment over the
// same library. It does nothing if onnxruntime_go is already initialized (by an earlier Init or
// by the caller). It is safe to call repeatedly and concurrently.
//
// A library older than onnxruntime_go needs (onnxruntime_go v1.38.0 needs ONNX Runtime 1.31) is
// refused before onnxruntime_go is called, with an error wrapping onnxx.ErrNoRuntime that names
// the onnxruntime_go release, the ONNX Runtime release it needs, the library's path and version,
// and what to do.
func Init() error {
	initMu.Lock()
	defer initMu.Unlock()
	if ort.IsInitialized() {
		return nil
	}
	if err := onnxx.Init(); err != nil {
		return err
	}
	path, version, _ := onnxx.LoadedLibrary()
	release := linkedRelease()
	if api, ok := libraryAPI(version); ok && api < bindingAPI {
		return tooOld(release, bindingAPI, path, version)
	}
	ort.SetSharedLibraryPath(path)
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		if strings.Contains(err.Error(), "ORT API base") {
			// GetApi returned NULL: a newer onnxruntime_go than this module's, whose C API
			// version is not known here, asked for more than the library has.
			return tooOld(release, 0, path, version)
		}
		return errs.Errorf(onnxx.ErrNoRuntime, "ortgo: onnxruntime_go %s cannot load %s (ONNX Runtime %s): %v", release, path, version, err)
	}
	return nil
}

// tooOld is the error for a library older than onnxruntime_go release needs (C API api, or 0
// where not known).
func tooOld(release string, api int, path, version string) error {
	need := "a newer ONNX Runtime"
	if api > 0 {
		need = "ONNX Runtime 1." + strconv.Itoa(api) + " or later (C API " + strconv.Itoa(api) + ")"
	}
	return errs.Errorf(onnxx.ErrNoRuntime, "ortgo: onnxruntime_go %s needs %s; the library at %s is %s: run scripts/fetch-ort.sh (ONNX Runtime %s) or set $ONNXRUNTIME_LIB to a newer libonnxruntime.so",
		release, need, path, version, onnxx.RuntimeVersion)
}

// libraryAPI is the newest C API version that ONNX Runtime version provides ("1.30.0": 30).
func libraryAPI(version string) (int, bool) {
	major, rest, ok := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	x, err := strconv.Atoi(minor)
	return x, ok && major == "1" && err == nil
}

// linkedRelease is the onnxruntime_go release built into the program (a program may require a
// newer one than this module does), or bindingRelease where the build information does not say.
func linkedRelease() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/yalue/onnxruntime_go" {
				if m.Replace != nil && m.Replace.Version != "" {
					return m.Replace.Version
				}
				if m.Version != "" && m.Version != "(devel)" {
					return m.Version
				}
			}
		}
	}
	return bindingRelease
}

func initialized() error {
	if !ort.IsInitialized() {
		return ErrNotInitialized
	}
	return nil
}

// ToDType returns onnxruntime_go's element type of a core dtype, or an error wrapping
// onnxx.ErrDType.
func ToDType(dt core.DLDataType) (ort.TensorElementDataType, error) {
	e, err := onnxx.ToDType(dt)
	return ort.TensorElementDataType(e), err
}

// FromDType returns the core dtype of onnxruntime_go's element type, or an error wrapping
// onnxx.ErrDType.
func FromDType(t ort.TensorElementDataType) (core.DLDataType, error) {
	return onnxx.FromDType(onnxx.ElementType(t))
}

// Shareable reports whether ToValue can make a value over t's own memory, or says why not.
func Shareable(t *core.Tensor) (ok bool, why string) {
	if t != nil && t.Ndim() == 0 {
		return false, "ortgo: onnxruntime_go copies 0-d values"
	}
	return onnxx.Shareable(t)
}
