// Package pyexchange is what a Go library loaded into a Python process needs to be called from
// Python on NumPy and PyTorch arrays, and to hand its tensors to them and take theirs, without
// copying: Register, the C functions that the pure-Python package dlpackgo (numpyx/python, with
// a pyproject.toml; the exchange itself is its module dlpackgo._exchange) calls, and the export
// and import policy behind them. It is built on the C bridge of package core/cdlpack, and needs
// cgo.
//
// # Registered functions
//
// A library registers ordinary Go functions in its init, one call each, and Python calls them
// as attributes of dlpackgo.Library:
//
//	func init() { pyexchange.MustRegister("scale", scale, "scale(x, factor)\n\nx *= factor, in place.") }
//	func scale(x *core.Tensor, factor float64) error { ... }
//
//	lib = dlpackgo.Library("./libexample.so")   # Python
//	lib.scale(numpy_array, 2.0)                 # or a torch tensor: Go writes it in place
//
// Parameters are *core.Tensor, Go integers, floats, bool and string; results the same, before
// a last error (Register refuses other signatures). Each function is a Python function with
// its real signature (positional-only parameters, named by the first line of the docstring),
// so help(lib.scale) and dir(lib) work. A call converts and checks every argument in C (a
// TypeError, or an OverflowError for a number out of range of the Go type, before the Go
// function runs), hands the tensor arguments' DLPack capsules to Go, releases the GIL and enters
// Go once: the arguments are imported, held (core.Hold) for the whole call and released after
// it (the producers' deleters then run with the GIL, on the calling thread), and the tensor
// results are exported, without copying, to NumPy (the default), PyTorch or dlpackgo.Tensor, as
// the caller asks (Library(..., returns=...), or returns= on the call). A non-nil error raises
// dlpackgo.GoError with the error's message, as a ValueError, TypeError, BufferError or
// MemoryError subclass when it wraps a mapped sentinel (ExceptionFor, MapError); a panic is
// recovered and raises dlpackgo.GoPanic with the panic value and stack. The function may keep
// views of its arguments beyond the call: their memory then stays valid until the views are
// released, whose deleter takes the GIL itself.
//
// A Go program becomes such a library by importing this package and building with
// -buildmode=c-shared (see examples/python): every function below marked "C" is then exported
// by the shared object. The library's own exported functions pass tensors as handles: NewHandle
// registers a tensor and returns the integer that Python wraps (dlpackgo.Library.tensor), and
// Lookup finds the tensor of a handle that Python passes in (dlpackgo.Tensor.handle).
//
// This package is not a Python extension and links against no libpython: the Python module
// hands it the addresses of the few C API functions it needs when it loads the library.
//
// # Go to Python
//
// numpy.from_dlpack(t) and torch.from_dlpack(t) call t.__dlpack__, which calls dlpackgo_export:
// ExportVersioned for a consumer that passed max_version >= (1, 0), ExportLegacy for one that
// did not (NumPy < 2.1 and PyTorch < 2.9). The capsule's destructor, in C, calls the deleter
// only while the capsule still has its unused name, and keeps any Python exception pending
// while it runs. The export policy (Shareable) shares memory except where a consumer would
// misread or abuse it:
//
//   - negative strides are never exported: PyTorch 1.13 aborts the process on them, so such a
//     tensor is exported as a C-order copy (IS_COPIED), or refused under copy=False;
//   - a read-only tensor is copied for a legacy consumer, which has no read-only flag
//     (versioned consumers get READ_ONLY and share);
//   - data always points at the first element and byte_offset is 0 (PyTorch 1.13 ignores
//     byte_offset), strides are always present, a negative stride on a dimension of size 1 is
//     rewritten, and an empty tensor gets a non-NULL data address (PyTorch 1.13 never calls
//     the deleter of one with NULL data).
//
// Exports that share are made in C after the first: dlpackgo_sharer exports the tensor once
// (ExportVersioned under adapters.ZeroCopyOnly) to the library's C code, which keeps it as a
// template with a reference count and returns a Python builtin bound to it. That builtin makes
// every later capsule in C (a small managed tensor that copies the template's descriptor), and
// their deleters are C too: a shared export never enters Go, and costs about as much as NumPy's
// own. The template is let go, through its Go deleter, once the Python Tensor and every capsule
// and array made from it are gone. Copies, refusals, streams and devices go through
// dlpackgo_export.
//
// The consumer's array keeps the Go memory valid, pinned and in place, until the consumer
// frees it and calls the deleter; releasing the handle does not affect it.
//
// # Python to Go
//
// dlpackgo.Library.from_dlpack(x) takes x's capsule and calls take, a builtin the library makes
// with the Python C API (dlpackgo_taker), which checks the capsule's name, renames it
// "used_dltensor[_versioned]" and calls dlpackgo_import in one call: ImportVersioned or ImportLegacy validate the descriptor as untrusted
// input and return a tensor over x's memory, registered under a new handle. Go owns the managed
// tensor from then on, and the producer's deleter runs exactly once, when the last Go holder
// (the handle, views of it) lets go — also after a refusal. Go may let go on any thread (a
// garbage-collector cleanup), while NumPy 1.24's deleter needs the GIL: every deleter of a
// Python producer therefore runs under PyGILState_Ensure, and not at all once the interpreter
// is shutting down.
//
// # C functions
//
// dlpackgo_abi, dlpackgo_init, dlpackgo_python_exiting, dlpackgo_capsule_name,
// dlpackgo_capsule_destructor, dlpackgo_export, dlpackgo_sharer, dlpackgo_taker,
// dlpackgo_delete_export, dlpackgo_import, dlpackgo_release, dlpackgo_describe, dlpackgo_live
// and dlpackgo_collect: see cexports.go. dlpackgo_call_init, dlpackgo_functions, dlpackgo_free,
// dlpackgo_caller, dlpackgo_call, dlpackgo_releaser, dlpackgo_view and dlpackgo_clone: see
// call.go. Failures are reported through a message buffer whose
// first byte says which Python exception to raise.
//
// # Limits
//
// One Go c-shared library per process (Go does not support two Go runtimes in one process).
// Streams are not supported: a CPU tensor accepts only stream=None. Tensors are never moved
// between devices (dl_device must be the tensor's own).
package pyexchange
