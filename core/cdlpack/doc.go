// Package cdlpack is the C side of DLPack for package core: it exports a *core.Tensor as a
// DLManagedTensorVersioned (or legacy DLManagedTensor) that C code may hold, and imports the
// managed tensors C code produces, calling their deleters through cgo.
//
// It needs cgo; package core itself stays pure Go. It is not a Python bridge: capsules and
// __dlpack__ live elsewhere, on top of this package.
//
// # Export
//
// ExportVersioned and ExportLegacy obey the cgo pointer rules. The managed struct, shape and
// strides live in one block of C memory; the data pointer may point into Go memory, which is
// pinned (runtime.Pinner) until the consumer calls the deleter. manager_ctx holds a
// runtime/cgo.Handle (an integer, never a Go pointer) of a Go record that holds a view of the
// tensor, so the producer may Release its own tensor at once. The deleter is a C function that
// calls back into Go: it unpins, releases the view, deletes the handle and frees the C block,
// exactly once (a second call finds nothing to do). LiveExports counts exports whose deleter
// has not run.
//
// # Import
//
// ImportVersioned and ImportLegacy take ownership of a C producer's tensor: every field is
// validated as untrusted input by core, and the producer's deleter runs exactly once, when the
// last Go holder lets go (Release or garbage collection) or before an error is returned.
package cdlpack
