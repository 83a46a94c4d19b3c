// Package onnxx runs ONNX models on core tensors with ONNX Runtime, through
// github.com/yalue/onnxruntime_go, without copying the tensors' elements.
//
// Any *core.Tensor (over a Go slice, a Gonum or Gorgonia array, a memory-mapped .npy file, memory
// that Python handed over through DLPack) becomes an ORT input with ToValue, and ORT's outputs
// become core tensors with FromValue. Session and Run put the two together: they take named core
// tensors and return named core tensors.
//
// This package is not an ONNX Runtime binding: sessions, options and execution providers are
// onnxruntime_go's. It only moves tensors in and out, and loads the library (Init).
//
// # The library
//
// onnxruntime_go ships no ONNX Runtime library for linux/amd64. Init loads $ONNXRUNTIME_LIB if it
// is set, else the copy that the script onnxx/setup/fetch-ort.sh puts in the user's cache
// (${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/ort/1.30.0/libonnxruntime.so.1, taken from the npm
// package onnxruntime-node@1.30.0). When neither exists it fails with ErrNoRuntime, saying how to
// get one. Init may be called any number of times, from any goroutine.
//
// # Inputs
//
// ToValue shares memory with host tensors in C order of float32, float64, float16, bfloat16,
// int8 to int64, uint8 to uint64 and bool: ORT reads the tensor's own elements (float16 and
// bfloat16 through onnxruntime_go's custom-data tensors). Tensors in other layouts (Fortran
// order, slices with steps, negative or zero strides) are copied once into C order with the
// adapters kernels; the adapters.Option values choose (adapters.ZeroCopyOnly fails with
// adapters.ErrCopyRequired instead, adapters.AlwaysCopy always copies, adapters.ReportCopy says
// what happened). Read-only tensors (memory maps, read-only imports) are shared too: ORT never
// writes its inputs. Device tensors are refused (ErrDevice), and so are other dtypes (ErrDType:
// complex, which ORT 1.30 cannot make tensors of, float8, sub-byte types, vector lanes). 0-d
// tensors are copied (one element; onnxruntime_go makes 0-d values only over its own copy), and
// 0-d float16 and bfloat16 tensors are refused.
//
// # Outputs
//
// A Session allocates each output whose shape the model declares (or that an earlier run with
// the same input shapes revealed) as a core tensor before the run, and ORT writes into it: no
// copy. Session.RunWith writes outputs into tensors the caller supplies (a Gonum matrix's memory,
// a writable memory map), and Session.RunInto does the same with slices instead of maps.
//
// Outputs whose shape is not known before the run are allocated by ORT; onnxruntime_go copies
// each into a value over Go memory and releases ORT's. That path cannot carry float16 or
// bfloat16: onnxruntime_go v1.27 copies such an output as shape-size bytes rather than
// shape-size elements and then refuses its own too-short copy ("not enough space"), and it
// releases ORT's value inside DynamicAdvancedSession.Run, so the correct bytes are gone before
// this package sees them. Reading them ourselves would take ORT's C API (GetTensorMutableData,
// GetTensorTypeAndShape) on the session and value pointers, which onnxruntime_go keeps in
// unexported fields: that needs cgo or purego bindings of our own against its private layout, and
// this package does not do that. So for such outputs Run fails with ErrModel until the shape is
// known: give a destination to RunWith (or RunInto) for the first run of each input shape, which
// also teaches the session that shape.
//
// # Repeated inference
//
// A Session keeps the ORT values it made over the tensors the caller passed (inputs, and
// destinations of RunWith and RunInto), with the tensor, its data address and its shape. When the
// next run gets the same tensor with the same data address and shape, it hands ORT the same value
// instead of making a new one (a tensor released since is refused, never read through the old
// value). RunInto on the same tensors therefore allocates nothing beyond what onnxruntime_go's Run
// allocates itself. The values are destroyed, and their memory unpinned, when replaced, by
// Destroy, or when the Session is collected.
//
// # Ownership
//
// A value from ToValue holds the tensor's memory (core.Attach): the memory stays valid while the
// value is reachable, even if the tensor is released. Destroy the value when done, as any
// onnxruntime_go value; a value that becomes unreachable undestroyed is destroyed by the garbage
// collector. Keep the value reachable while a session uses it.
//
// FromValue takes ownership of the value it converts. For a value of onnxruntime_go's (an output
// ORT allocated, or one made with ort.NewTensor), the tensor is made with core.Wrap and the
// value's Destroy as the release function: the value is destroyed exactly once, when the last
// tensor over it (views included) is released, or collected unreleased. Such tensors are Foreign
// and count in core.LiveForeign until then. Do not Destroy the value yourself, and do not use it
// after the last Release. For a value ToValue made, FromValue gives a view of the tensor the value
// is over, and the value stays under the rule above (destroyed by Destroy or the collector).
package onnxx
