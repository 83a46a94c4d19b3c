// Package ortgo converts between core tensors and the values of github.com/yalue/onnxruntime_go
// (ort.Value), for programs that already use onnxruntime_go's sessions. It needs cgo (as
// onnxruntime_go does); package onnxx, which runs models itself through ONNX Runtime's C API,
// does not.
//
// ortgo is a module of its own, github.com/dlpack-go/dlpack/onnxx/ortgo (on onnxruntime_go
// v1.36.0), so that requiring dlpack-go never moves the onnxruntime_go release, and with it the
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
	"sync"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/dlpack-go/dlpack/onnxx/ortgo/internal/errs"
)

// ErrNotInitialized: onnxruntime_go's environment is not initialized; call Init first.
var ErrNotInitialized = errors.New("ortgo: onnxruntime_go is not initialized (call ortgo.Init)")

var initMu sync.Mutex

// Init loads ONNX Runtime with onnxx.Init and initializes onnxruntime_go's environment over the
// same library. It does nothing if onnxruntime_go is already initialized (by an earlier Init or
// by the caller). It is safe to call repeatedly and concurrently.
func Init() error {
	initMu.Lock()
	defer initMu.Unlock()
	if ort.IsInitialized() {
		return nil
	}
	if err := onnxx.Init(); err != nil {
		return err
	}
	path, _, _ := onnxx.LoadedLibrary()
	ort.SetSharedLibraryPath(path)
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		return errs.Errorf(onnxx.ErrNoRuntime, "ortgo: onnxruntime_go cannot load %s: %v", path, err)
	}
	return nil
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
