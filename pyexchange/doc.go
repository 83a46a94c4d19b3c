// Package pyexchange is what a Go library loaded into a Python process needs to be called from
// Python on NumPy and PyTorch arrays, and to hand its tensors to them and take theirs, without
// copying: Register, the C functions that the pure-Python package dlpackgo (pyexchange/python, with
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
// Parameters are *core.Tensor, Go integers, floats, bool and string; results the same, before a
// last error (Register refuses other signatures). Each function is a dlpackgo.GoFunction, a
// callable written in C (call.c) that CPython calls through vectorcall, with the generated Python
// function of its real signature behind it (__wrapped__: positional-only parameters, named by the
// first line of the docstring), so help(lib.scale), inspect.signature and dir(lib) work; calls that
// C does not take as they are (keywords, a wrong count, tensor results, arguments other than NumPy
// arrays and live dlpackgo.Tensors) go to that Python function (on Python 3.9 and 3.10, which
// export no PyObject_Vectorcall, that function is the attribute). A call converts and checks every
// argument in C (a TypeError, or an OverflowError for a number out of range of the Go type, before
// the Go function runs), hands the tensor arguments to Go (a NumPy array read in C, see "NumPy
// arrays" below; any other array as its DLPack capsule; a dlpackgo.Tensor by handle), releases the
// GIL and enters Go once: the arguments are imported (core.ImportExplicitWith: one allocation for
// the tensor, its shape and strides and the state of its release, and no collector cleanup, since
// the call releases them itself), held for the whole call (by the import's own reference; a
// handle's tensor by a view of the call's own, Tensor.ExplicitView) and released after it (the
// producers' deleters then run with the GIL, on the calling thread), and the tensor results are
// exported, without copying, to NumPy (the default), PyTorch or dlpackgo.Tensor, as the caller asks
// (Library(..., returns=...), or returns= on the call). A host result for NumPy is made a NumPy
// array in C, with NumPy's own C API (PyArray_NewFromDescr over the export's memory, whose base is
// a capsule of the export); one for PyTorch is made by torch's own import (torch._C._from_dlpack)
// of a legacy capsule of the export, called from C (read-only results, and dtypes some torch
// releases cannot import, get torch.from_numpy of the NumPy array instead), and a small one (64 KiB
// at most) of Go memory is exported the light way (results.go: no cgo.Handle, and a C deleter
// that queues it for Go to release at its next call): a call returning a small new array costs
// about twice one returning an int. A non-nil error raises dlpackgo.GoError
// with the error's message, as a ValueError, TypeError, BufferError or MemoryError subclass when it
// wraps a mapped sentinel (ExceptionFor, MapError); a panic is recovered and raises
// dlpackgo.GoPanic with the panic value and stack. The function may keep views of its arguments
// beyond the call: their memory then stays valid until the views are released, whose deleter takes
// the GIL itself.
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
//   - a read-only tensor is copied for every consumer: a legacy one has no read-only flag, and
//     versioned ones such as PyTorch 2.x ignore READ_ONLY and would write into the memory;
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
// IS_COPIED tells a consumer that the memory is its own until it calls the deleter, so it is set
// only on an export that nothing else aliases: a copy Go made for that export alone (copy=True,
// or copy=None of a Tensor that cannot be shared), whose memory the export is the only holder of
// and which is released when its deleter runs. A registered function's result that Go had to
// copy (read-only, negative strides) is copied once, when the function returns, and that copy is
// the template of the result's sharer: every share of it aliases the others, so none carries
// IS_COPIED (pxg_sharer_new clears it), and the copy is released when the last of them is let go.
//
// The consumer's array keeps the Go memory valid, pinned and in place, until the consumer
// frees it and calls the deleter; releasing the handle does not affect it.
//
// # Python to Go
//
// dlpackgo.Library.from_dlpack(x) takes x's capsule and calls take, a builtin the library makes
// with the Python C API (dlpackgo_taker), which checks the capsule's name, renames it
// "used_dltensor[_versioned]" and validates the managed tensor in C as untrusted input, by the
// rules of core.ValidateDLTensor (core/cdlpack/dlpack_validate.h; FuzzValidateInC holds the two to
// the same answers): a refused tensor raises BufferError and its deleter runs at once. An accepted
// one becomes a pending import: the Tensor owns it, and Go adopts it (dlpackgo_import: the same
// validation in Go, a tensor registered under a handle) the first time it needs it — a call, an
// export, Tensor.handle — or never, if the Tensor is released first. Go owns the managed tensor
// from adoption on, and the producer's deleter runs exactly once, when the last Go holder (the
// handle, views of it) lets go. Go may let go on any thread (a garbage-collector cleanup of a
// view), while NumPy 1.24's deleter needs the GIL: every deleter of a Python producer therefore
// runs under PyGILState_Ensure, and not at all once the interpreter is shutting down.
//
// # NumPy arrays
//
// For an argument of exactly numpy.ndarray or numpy.memmap, the call and from_dlpack skip
// __dlpack__: the library's C code (numpy.c) reads the array's public C fields (data, dimensions,
// strides, dtype number, flags: NumPy's ABI, which its C API macros read in every compiled
// extension) and makes a DLManagedTensorVersioned of its own holding a reference to the array,
// dropped with the GIL when Go lets go (in a call, the managed tensor lies on the C stack of the
// call, which Go reads only while importing; what outlives the call is the array's reference). It
// takes what NumPy's own __dlpack__ would export (aligned, native byte order, a dtype of the table
// the Python module builds from numpy.dtype(...).num, strides of whole elements), read-only arrays
// included (flags.writeable False, np.load(..., mmap_mode="r"), which NumPy 1.24's __dlpack__
// refuses): they become tensors flagged READ_ONLY, which a function may read and which it fails to
// write with core.ErrReadOnly (a GoValueError in Python, the array unchanged). torch tensors that
// may not be written (requires_grad: detached; inference tensors outside inference mode) go in
// READ_ONLY too, as arguments and through Library.from_dlpack alike. It declines the rest, which then goes through __dlpack__ as before; the Python
// module checks on probe arrays that the reader and NumPy agree before turning it on. from_dlpack
// of such an array does not enter Go at all: the Tensor holds the pending import, describes it from
// C (shape, dtype, strides), and Go adopts it (dlpackgo_import) the first time it needs it: a call,
// an export, Tensor.handle. Releasing a pending Tensor only drops the array's reference.
//
// dlpackgo.Tensor's __dlpack__ and __dlpack_device__ are method descriptors written in C
// (exchange_api.c): a tensor whose device is known, asked with no stream, copy None or False and
// no dl_device, gets its capsule from the sharer without a Python frame; the rest goes to the
// Tensor's Python halves (_dlpack_slow, _dlpack_device_slow).
//
// # The C exchange API of DLPack 1.3
//
// dlpackgo.Tensor carries __dlpack_c_exchange_api__, a capsule named "dlpack_exchange_api"
// over the library's static DLPackExchangeAPI (ExchangeAPI; version 1.3, no prev_api), whose
// entries are C (exchange_api.c), so that compiled consumers (tvm-ffi, dlpark, a C++ extension)
// skip __dlpack__ and capsules:
//
//   - managed_tensor_from_py_object_no_sync gives what __dlpack__(max_version=(1, 3)) gives: a
//     share of the tensor's sharer, made in C without entering Go (the first call for a tensor
//     makes the sharer in Go, as __dlpack__ does); a tensor that must be copied (read-only,
//     negative strides) is copied by Go, IS_COPIED. Same flags, same lifetimes.
//   - dltensor_from_py_object_no_sync fills a borrowed DLTensor from the sharer's template, and
//     refuses (BufferError) a tensor only a copy could describe.
//   - managed_tensor_to_py_object_no_sync adopts a managed tensor (dlpackgo_import, under the
//     GIL guard) and returns a dlpackgo.Tensor; a tensor of another major version is refused and
//     its deleter run.
//   - managed_tensor_allocator allocates C memory (CPU only: one block holding the managed
//     tensor, shape, strides and zeroed data aligned to 256 bytes), reports a bad prototype
//     through the consumer's set_error, once; ExchangeAllocate calls it from Go.
//   - current_work_stream answers NULL (the legacy default stream) on every device: Go keeps no
//     current stream, and this table's exports of device tensors do not synchronize (through
//     __dlpack__(stream=...) they do, with the device's StreamSync: see SetStreamSync).
//
// As a consumer, Library.from_dlpack(x) calls take_api, a builtin that reads type(x)'s table,
// accepts major 1 with minor >= 3 (walking prev_api past newer majors), and makes a pending import
// of the managed tensor (validated in C, adopted by Go on first use); a type without a table, or
// with one of another version, falls back on __dlpack__. The API does not synchronize streams, so a
// tensor on a device falls back on __dlpack__ too unless the caller asks for the API (via="api")
// and orders its work after current_work_stream. Library.to_framework(t, cls) makes a cls tensor
// over a Go tensor through cls's managed_tensor_to_py_object_no_sync, and Library.allocate(cls,
// shape, dtype, device) a Go tensor over a new tensor of cls's managed_tensor_allocator. The C
// functions dlpackgo_exchange_init, dlpackgo_exchange_api, dlpackgo_exchange_capsule_name,
// dlpackgo_exchange_builtin and dlpackgo_exchange_count serve dlpackgo/_exchange.py
// (exchange_api.go).
//
// # C functions
//
// dlpackgo_abi, dlpackgo_init, dlpackgo_python_exiting, dlpackgo_capsule_name,
// dlpackgo_capsule_destructor, dlpackgo_export, dlpackgo_sharer, dlpackgo_taker,
// dlpackgo_delete_export, dlpackgo_import, dlpackgo_release, dlpackgo_describe, dlpackgo_live and
// dlpackgo_collect: see cexports.go. dlpackgo_call_init, dlpackgo_functions, dlpackgo_free,
// dlpackgo_caller, dlpackgo_function, dlpackgo_call, dlpackgo_releaser, dlpackgo_view and
// dlpackgo_clone: see call.go. dlpackgo_numpy_init, dlpackgo_numpy_off, dlpackgo_numpy_builtin and
// dlpackgo_numpy_reads: see numpy.go; dlpackgo_results_drain and dlpackgo_results_release: see
// results.go; dlpackgo_protocol_method: see exchange_api.go. Failures are reported through a
// message buffer whose first byte says which Python exception to raise.
//
// # Limits
//
// One Go c-shared library per process (Go does not support two Go runtimes in one process). On
// glibc a second one fails to load with "cannot allocate memory in static TLS block" (each takes
// a block of static TLS, about 1 KiB here, and the reserve after the first is too small);
// dlpackgo.Library raises an OSError that says so: register every function in one library, or, at
// one's own risk, start the interpreter with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384.
// A library that registers no function (only //export'ed ones, through Library.cdll) opens with
// no functions.
// A CPU tensor accepts only stream=None; a device tensor accepts a stream only through the
// StreamSync installed for its device type (SetStreamSync), and without one only None and -1.
// Tensors are never moved between devices (dl_device must be the tensor's own).
package pyexchange
