"""dlpackgo: live, zero-copy exchange of tensors between Python and a Go library, via DLPack.

A Go library built with ``go build -buildmode=c-shared`` that imports the Go package
``github.com/dlpack-go/dlpack/pyexchange`` exports the C functions this module calls
(``dlpackgo_*``). This module is pure Python: it uses ctypes only, and needs no compiler.

Go to Python::

    lib = dlpackgo.Library("./libexample.so")
    lib.cdll.example_matrix.restype = ctypes.c_void_p  # handles are uintptr_t
    t = lib.tensor(lib.cdll.example_matrix(2, 3))    # adopt a handle a Go function returned
    a = numpy.from_dlpack(t)                          # or torch.from_dlpack(t): no copy

``Tensor`` implements the Python array API's DLPack protocol, ``__dlpack__(*, stream=None,
max_version=None, dl_device=None, copy=None)`` and ``__dlpack_device__()``:

* a consumer that passes ``max_version`` with major >= 1 gets a ``"dltensor_versioned"``
  capsule (DLPack 1.3: flags READ_ONLY and IS_COPIED); ``max_version=None`` (NumPy < 2.1,
  PyTorch < 2.9) gets a legacy ``"dltensor"`` capsule;
* the capsule's destructor (in the Go library, written in C) calls the deleter only if no
  consumer took the capsule (its name is still the unused one);
* ``copy=True`` always exports a fresh C-order copy the consumer owns (IS_COPIED), ``copy=False``
  never copies and raises ``BufferError`` when sharing is impossible, ``copy=None`` copies only
  when needed; copies are made in host memory, so ``copy=True`` for a tensor on another device
  raises ``BufferError`` (there is no device copy from Python here);
* sharing is impossible, and a C-order copy is exported instead, for a tensor with negative
  strides (PyTorch 1.13 aborts the process on them) and for a read-only tensor (a legacy
  capsule cannot carry the read-only flag, and PyTorch 2.x ignores it in a versioned one and
  would write into the memory: a fault, for a memory-mapped file);
* ``dl_device`` must be None or the tensor's own device, and ``stream`` must be None for a CPU
  tensor: otherwise ``BufferError``. A device tensor's ``stream`` is honoured by the Go library's
  stream synchronization for the device (``pyexchange.SetStreamSync``: the consumer's stream waits
  for the producer's work, None meaning the legacy default stream); a library without one accepts
  only None and -1 for device tensors.

A registered function's tensor result that reaches a consumer as an object with ``__dlpack__``
(``returns=`` a callable, or ``"torch"``) follows the same rules: both exporters check a request
with ``_request``, and make copies through Go. One difference: a result that cannot be shared
(read-only, negative strides) is copied by Go once, when the function returns, and ``copy``
None or False shares that one copy with every consumer, without IS_COPIED (they alias each
other); only ``copy=True`` gives a consumer a copy of its own.

The first export of a shareable tensor enters Go once, to export it to the library's C code;
from then on ``__dlpack__`` (``copy`` None or False, no ``stream``, ``dl_device`` None or the
tensor's own) makes each capsule in C, through a builtin function the library made with the
Python C API, and the capsule's deleter runs in C too: ``numpy.from_dlpack`` of a Go tensor
costs little more than of a NumPy array (BENCHMARKS.md). Copies, refusals and streams always
go through Go.

The memory a consumer holds stays valid until the consumer frees its array, whatever happens
to the ``Tensor`` (``release()`` or garbage collection only drop the handle).

Python to Go::

    t = lib.from_dlpack(numpy_array_or_torch_tensor)   # no copy
    lib.cdll.example_scale(t.handle, 2.0)              # Go sees and writes the same memory

``from_dlpack`` asks ``__dlpack__(max_version=(1, 3))`` first and falls back on
``__dlpack__()`` when the producer raises ``TypeError``; it renames the capsule to
``used_dltensor[_versioned]`` and hands the pointer to Go (both in one call of a builtin the
library made), which owns it from then on and runs the producer's deleter exactly once, with the
GIL held, when the last Go holder lets go. A NumPy array (exactly ``numpy.ndarray``) skips all
that: the library reads its C fields and holds a reference to it (``_numpy.py``), and Go adopts
the tensor only when it first needs it, so ``from_dlpack`` of an array costs less than
``torch.from_dlpack`` of it.

DLPack 1.3's C exchange API: ``Tensor`` carries ``__dlpack_c_exchange_api__`` (a capsule named
``"dlpack_exchange_api"`` over the library's table, implemented in C), so compiled consumers that
know the API skip ``__dlpack__`` and capsules, and get the same tensors, flags and lifetimes.
``from_dlpack(x)`` uses ``type(x)``'s table when it has one of version 1.x (x >= 3) and x is in host
memory, and ``__dlpack__`` otherwise (``via="api"`` / ``via="dlpack"`` force one path;
``exchange_counts()`` says which ones were taken); ``to_framework(t, cls)`` hands a Go tensor to
``cls`` through cls's table (``torch.Tensor`` from PyTorch 2.10 on), and ``allocate(cls, shape,
dtype, device)`` makes a Go tensor over memory cls's allocator provides (outputs a Go kernel fills
for the framework, in the framework's own memory).

Errors: ``BufferError`` when a tensor cannot be exchanged as asked (the Go error message says
why), ``ValueError`` for a released or unknown handle, ``TypeError`` for an object that has no
``__dlpack__`` or returns no DLPack capsule.

One Go c-shared library per process: Go does not support two Go runtimes in one process.
"""

import atexit
import ctypes
import os
import sys
import threading
from ctypes import POINTER, c_char_p, c_int, c_int64, c_size_t, c_void_p, py_object

from . import _numpy

__all__ = ["Library", "Tensor", "DLPACK_VERSION", "CPU", "FLAG_READ_ONLY", "FLAG_IS_COPIED"]

DLPACK_VERSION = (1, 3)
CPU = 1  # kDLCPU
FLAG_READ_ONLY = 1
FLAG_IS_COPIED = 2

_ERRLEN = 1024

# The Python C API, through prototypes of our own (never ctypes.pythonapi's shared function
# objects, whose argtypes other code may set). PYFUNCTYPE keeps the GIL and raises any error the
# call sets.
_api = ctypes.pythonapi
_capsule_new = ctypes.PYFUNCTYPE(py_object, c_void_p, c_void_p, c_void_p)(("PyCapsule_New", _api))


# What the library's C code needs of the Python C API, in the order of pyexchange.h: function
# addresses, then objects: True, None and three exception types (an object's address is its id in
# CPython).
_API = ("PyCapsule_IsValid", "PyCapsule_GetPointer", "PyErr_Fetch", "PyErr_Restore",
        "PyGILState_Ensure", "PyGILState_Release", "Py_IsInitialized", "Py_IsFinalizing",
        "PyCapsule_New", "PyCFunction_NewEx", "Py_IncRef", "Py_DecRef", "PyErr_NoMemory",
        "PyCapsule_SetName", "PyLong_FromVoidPtr", "PyErr_SetString",
        True, None, TypeError, ValueError, BufferError)
_ABI = 7  # the protocol version of this module and the library (dlpackgo_abi); 5: numpy.c;
# 6: registered functions called from C (GoFunction); 7: read-only arrays, readonly()


def _api_address(name):
    if not isinstance(name, str):
        return id(name)
    if name == "_PyType_Lookup":  # CPython's; optional (0: the library asks getattr instead)
        f = getattr(_api, name, None)
        return ctypes.cast(f, c_void_p).value if f is not None else 0
    if name == "Py_IsFinalizing":
        for n in ("Py_IsFinalizing", "_Py_IsFinalizing"):  # public from 3.13; optional
            try:
                return ctypes.cast(getattr(_api, n), c_void_p).value
            except AttributeError:
                pass
        return 0
    return ctypes.cast(getattr(_api, name), c_void_p).value


_STATIC_TLS = "cannot allocate memory in static TLS block"


def _open(path):
    """ctypes.CDLL of path, a bare file name resolved against the current directory first, with
    errors that say what to do."""
    name = os.fspath(path)
    here = None
    if isinstance(name, str) and os.sep not in name and (os.altsep is None or os.altsep not in name):
        here = os.path.abspath(name)
        if os.path.exists(here):
            name = here  # dlopen would search only the linker's path for a bare name
    try:
        return ctypes.CDLL(name)
    except OSError as e:
        msg = str(e)
        if _STATIC_TLS in msg:
            raise OSError(
                f"dlpackgo: cannot load {name}: {msg}. glibc refuses a second Go c-shared "
                "library in this process: each takes a block of static TLS, and the reserve "
                "left after the first is too small for another. Load one Go library per process "
                "(register all your Go functions in one library), or, at your own risk (Go does "
                "not support two Go runtimes in one process), raise glibc's reserve before the "
                "interpreter starts: GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 "
                "python3 ...") from e
        if here is not None and name != here:
            raise OSError(f"dlpackgo: cannot load {name!r}: not in the current directory "
                          f"({os.getcwd()}) and the dynamic linker says: {msg}. Pass a path "
                          f"(\"./{name}\" or an absolute one).") from e
        raise


class Library:
    """A Go c-shared library that exports the pyexchange C functions.

    ``path`` is the shared object's path (or an already loaded ``ctypes.CDLL``); a bare file
    name such as ``"libme.so"`` is looked for in the current directory first, as a path, and
    only then on the dynamic linker's search path (``LD_LIBRARY_PATH``, ...). One Go library per
    process: a second one raises ``OSError`` saying so (see ``_open``). The Go
    functions the library registered (``pyexchange.Register``) are attributes of it
    (``lib.scale(a, 2.0)``; ``dir(lib)``, ``help(lib.scale)``, and all of them in the dict
    ``functions``); their tensor results come back as ``returns`` says: "numpy" (the default),
    "torch", "tensor" (a ``Tensor``) or a callable taking an object with ``__dlpack__`` (such as
    ``cupy.from_dlpack``), which a call's own ``returns=`` overrides. The raw library stays
    available as ``cdll`` for functions the library exports itself with //export; pass them
    ``Tensor.handle`` and adopt the handles they return with ``tensor``.
    """

    def __init__(self, path, *, returns="numpy"):
        cdll = path if isinstance(path, ctypes.CDLL) else _open(path)
        self.cdll = cdll
        abi = getattr(cdll, "dlpackgo_abi", None)
        if abi is not None:
            abi.argtypes, abi.restype = [], c_int
        if abi is None or abi() != _ABI:
            raise RuntimeError(f"dlpackgo: {path} speaks another version of the dlpackgo protocol "
                               f"than this module ({_ABI}): rebuild it against the matching "
                               "github.com/dlpack-go/dlpack/pyexchange")
        api = (c_void_p * len(_API))(*(_api_address(n) for n in _API))
        f = cdll.dlpackgo_init
        f.argtypes, f.restype = [POINTER(c_void_p), c_int], c_int
        if f(api, len(_API)) != 0:
            raise RuntimeError("dlpackgo: the library refused the Python C API addresses")
        exiting = cdll.dlpackgo_python_exiting
        exiting.argtypes, exiting.restype = [], None
        atexit.register(exiting)

        name = cdll.dlpackgo_capsule_name
        name.argtypes, name.restype = [c_int], c_void_p
        # static C strings in the library: they outlive every capsule, as names must
        self._names = (name(0), name(1))          # unused: versioned, legacy
        d = cdll.dlpackgo_capsule_destructor
        d.argtypes, d.restype = [], c_void_p
        self._destructor = d()

        self._export = cdll.dlpackgo_export
        self._export.argtypes = [c_void_p, c_int, c_int, c_int64, c_int, c_int, c_char_p, c_size_t]
        self._export.restype = c_void_p
        self._delete_export = cdll.dlpackgo_delete_export
        self._delete_export.argtypes, self._delete_export.restype = [c_void_p, c_int], None
        self._release = cdll.dlpackgo_release
        self._release.argtypes, self._release.restype = [c_void_p], c_int
        self._describe = cdll.dlpackgo_describe
        self._describe.argtypes = [c_void_p, POINTER(c_int64), POINTER(c_int64), POINTER(c_int64)]
        self._describe.restype = c_int
        # made with the GIL held: they build Python objects
        self._sharer = ctypes.PYFUNCTYPE(py_object, c_void_p)(("dlpackgo_sharer", cdll))
        self._take = ctypes.PYFUNCTYPE(py_object)(("dlpackgo_taker", cdll))()
        self._live = cdll.dlpackgo_live
        self._live.argtypes, self._live.restype = [c_int], c_int64
        self._collect = cdll.dlpackgo_collect
        self._collect.argtypes, self._collect.restype = [], None
        self._legacy_types = set()  # producers whose __dlpack__ takes no max_version
        from . import _functions
        _numpy.attach(self)  # NumPy arrays read in C: before the functions, which test their type
        _functions.attach(self, returns)  # the registered Go functions: attributes of this Library
        _attach_exchange_api(self)

    # -- Go to Python ---------------------------------------------------------------------

    def tensor(self, handle):
        """Adopt a handle a Go function returned: the Tensor releases it when collected.

        A handle of 0 (the Go function failed) or an unknown one raises ValueError.
        """
        if not handle:
            raise ValueError("dlpackgo: handle 0: the Go function returned no tensor")
        return Tensor(self, handle)

    # -- Python to Go ---------------------------------------------------------------------

    def from_dlpack(self, x, *, copy=None, device=None, via=None):
        """Hand x's memory to Go and return the Go tensor over it (a ``Tensor``).

        x is any object with ``__dlpack__`` (a NumPy array, a torch tensor, another library's
        array). ``copy`` has the array API's meaning: None (the default) and False share x's
        memory (Go reads and writes it in place; importing never needs a copy), True gives Go a
        C-order copy of its own (flag IS_COPIED). ``device`` must be None, ``"cpu"`` or x's own
        DLPack device: tensors are never moved between devices (``BufferError`` otherwise).

        ``via`` chooses the path: None uses the DLPack 1.3 C exchange API of ``type(x)``
        (``__dlpack_c_exchange_api__``, version 1.x with x >= 3) for host memory and
        ``__dlpack__`` otherwise; ``"api"`` the exchange API only (no stream synchronization:
        see ``current_work_stream``); ``"dlpack"`` ``__dlpack__`` only. ``exchange_counts()``
        tells which path imports took.

        Go owns the managed tensor from then on: the producer's deleter runs exactly once, when
        the returned Tensor is released and no other Go holder is left. A NumPy array (with
        ``via``, ``copy`` and ``device`` None) is read in C instead and handed to Go the first
        time Go needs it; until then the Tensor holds a reference to the array.

        A torch tensor that may not be written (one that requires grad, whose ``__dlpack__``
        refuses it, or an inference tensor outside inference mode) is imported as registered
        functions take it: read-only (``Tensor.readonly``; a Go function that writes it fails with
        core.ErrReadOnly), a requires-grad one detached first, which shares its memory and leaves
        autograd out of Go's sight. Such an import goes through ``__dlpack__`` (``via="api"``
        raises BufferError: the exchange API has no way to mark it read-only); ``copy=True`` gives
        Go a writable copy of its own, as for any tensor.
        """
        readonly = False
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch.Tensor):
            if x.requires_grad:
                x, readonly = x.detach(), True
            elif x.is_inference() and not torch.is_inference_mode_enabled():
                readonly = True
            if readonly and not copy:
                if via == "api":
                    raise BufferError("dlpackgo: via='api' cannot import a torch tensor that may not "
                                      "be written (requires_grad, or an inference tensor outside "
                                      "inference mode) read-only: use via=None or 'dlpack'")
                via = "dlpack"
            else:
                readonly = False
        if type(x) in self._ndarrays and via is None and copy is None and device is None:
            p = self._pend(x)  # a NumPy array read in C (_numpy.py); Go adopts it on first use
            if p is not None:
                return Tensor(self, 0, p)
        if via is None or via == "api":
            if copy is None and device is None:
                p = (self._take_api if via is None else self._take_api_strict)(x)
                if p is not None:
                    return Tensor(self, 0, p)
            elif via == "api":
                raise ValueError("dlpackgo: via='api' takes neither copy nor device")
        elif via != "dlpack":
            raise ValueError(f"dlpackgo: via must be None, 'api' or 'dlpack', not {via!r}")
        if copy is None and device is None and not readonly:  # the common case, first and short
            if type(x) in self._legacy_types:
                try:
                    return Tensor(self, 0, self._take(x.__dlpack__()))
                except TypeError:  # instances of one type that differ: ask again, the new way
                    self._legacy_types.discard(type(x))
            return Tensor(self, 0, self._take(self._capsule(x)))
        if copy is not None and copy is not True and copy is not False:
            raise ValueError(f"dlpackgo: copy must be None, True or False, not {copy!r}")
        if device is not None:
            want = (CPU, 0) if device == "cpu" else device
            dev_of = getattr(x, "__dlpack_device__", None)
            have = tuple(int(v) for v in dev_of()) if dev_of is not None else None
            try:
                want = (int(want[0]), int(want[1]))
            except (TypeError, ValueError, IndexError):
                raise ValueError(f"dlpackgo: device must be None, 'cpu' or a DLPack device "
                                 f"(type, id), not {device!r}") from None
            if have is not None and have != want:
                raise BufferError(f"dlpackgo: x is on device {have}, not {want}: "
                                  "tensors are never moved between devices")
        capsule = self._capsule(x)
        t = self.from_capsule(_numpy.readonly(capsule) if readonly else capsule)
        if device is not None and (got := tuple(t.__dlpack_device__())) != want:
            # x has no __dlpack_device__, or one that disagrees with its capsule
            t.release()
            raise BufferError(f"dlpackgo: x is on device {got}, not {want}: "
                              "tensors are never moved between devices")
        if copy:
            try:
                buf = _errbuf()
                h = self._clone(t.handle, buf, _ERRLEN)
                if not h:
                    raise _error(buf)
            finally:
                t.release()
            return Tensor(self, h)
        return t

    def _capsule(self, x):
        """x's DLPack capsule: versioned if x's producer speaks it, else legacy."""
        if type(x) in self._legacy_types:
            try:
                return x.__dlpack__()
            except TypeError:  # instances of one type that differ: ask again, the new way
                self._legacy_types.discard(type(x))
        method = getattr(x, "__dlpack__", None)
        if method is None:
            raise TypeError(f"dlpackgo: {type(x).__name__} has no __dlpack__ method")
        try:
            return method(max_version=DLPACK_VERSION)
        except TypeError:  # a producer that predates max_version (NumPy < 2.1, PyTorch < 2.9)
            capsule = method()
            self._legacy_types.add(type(x))  # ask it the old way from now on: no exception
            return capsule

    def from_capsule(self, capsule):
        """Take an unused DLPack capsule: rename it to used_..., and return a Tensor that owns its
        managed tensor (validated now; Go adopts it the first time it needs it).

        The producer's deleter runs exactly once: when the Tensor and every Go holder have let go,
        or at once when the tensor is refused.
        """
        return Tensor(self, 0, self._take(capsule))

    # -- the DLPack 1.3 C exchange API (exchange_api.c) -----------------------------------

    def to_framework(self, t, cls):
        """A ``cls`` tensor over the Go tensor t's memory, made by cls's C exchange API.

        cls is a tensor type that publishes ``__dlpack_c_exchange_api__`` (``torch.Tensor`` from
        PyTorch 2.10 on): t is exported as by ``t.__dlpack__(max_version=(1, 3))`` (shared, or
        copied when read-only or reversed) and cls's ``managed_tensor_to_py_object_no_sync`` adopts
        it. Raises TypeError or BufferError when cls has no API, or one of another version.
        """
        return self._give_api(cls, t)

    def allocate(self, cls, shape, dtype, device=(CPU, 0)):
        """A new Go tensor over memory that cls's exchange API allocates (``torch.Tensor``: torch's
        caching allocator, on any of its devices). dtype is DLPack's ``(code, bits, lanes)``.

        Go code fills it, and ``to_framework(t, cls)`` hands it back to cls without copying: the
        way to give a framework outputs in its own memory. The allocator's refusals are raised as
        the exception it names (ValueError, MemoryError, ...).
        """
        shape = tuple(int(d) for d in shape)
        arr = (c_int64 * max(len(shape), 1))(*shape)
        code, bits, lanes = (int(x) for x in dtype)
        h = self._allocate_api(cls, ctypes.addressof(arr), len(shape), code, bits, lanes,
                               int(device[0]), int(device[1]))
        return Tensor(self, h)

    def current_work_stream(self, cls, device):
        """The stream (an int, 0 for none) cls's exchange API says it works on for device, a
        ``(device_type, device_id)`` pair: order Go's work after it for a tensor taken with
        ``from_dlpack(x, via="api")`` on a GPU."""
        return self._stream_api(cls, int(device[0]), int(device[1])) or 0

    def exchange_counts(self):
        """Counters of the exchange API: imports through a type's API and fallbacks on
        ``__dlpack__`` (from_dlpack), exports, views and Tensors made by our own API, and
        tensors of our allocator (live and in all); and NumPy arrays read in C (``numpy_reader``:
        from_dlpack and call arguments)."""
        f = self._exchange_count
        keys = ("import_api", "import_fallback", "export_api", "view_api", "to_py", "live_allocs",
                "allocs")
        counts = {k: (f(i) if f else 0) for i, k in enumerate(keys)}
        counts["numpy_reader"] = self._numpy_reads()  # NumPy arrays read in C (_numpy.py)
        return counts

    # -- accounting -----------------------------------------------------------------------

    def live_handles(self):
        """How many Go handles are registered and not released."""
        return self._live(0)

    def live_exports(self):
        """How many tensors exported to consumers have not had their deleter run."""
        return self._live(1)

    def live_foreign(self):
        """How many blocks of foreign memory (imports included) Go still holds."""
        return self._live(2)

    def collect(self):
        """Run Go's garbage collector (cleanups of unreachable tensors follow shortly)."""
        self._collect()


# DLPack dtype codes and NumPy's names (ml_dtypes' for the float formats NumPy lacks)
_KINDS = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}
_NAMED = {(7, 8): "float8_e3m4", (8, 8): "float8_e4m3", (9, 8): "float8_e4m3b11fnuz",
          (10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz", (12, 8): "float8_e5m2",
          (13, 8): "float8_e5m2fnuz", (14, 8): "float8_e8m0fnu", (15, 6): "float6_e2m3fn",
          (16, 6): "float6_e3m2fn", (17, 4): "float4_e2m1fn", (6, 8): "bool",
          (18, 32): "bcomplex32"}  # kDLBcomplex (after the v1.3 tag): core's name


def dtype_name(code, bits, lanes=1):
    """NumPy's name of a DLPack dtype: dtype_name(2, 64) == 'float64', (4, 16) 'bfloat16'."""
    name = _NAMED.get((code, bits))
    if name is None:
        kind = _KINDS.get(code)
        name = f"{kind}{bits}" if kind is not None else f"dlpack(code={code}, bits={bits})"
    return name if lanes == 1 else f"{name}x{lanes}"


# NumPy's __array_interface__ typestr of the dtypes NumPy has (little-endian hosts)
_TYPESTR = {(0, 8, 1): "|i1", (0, 16, 1): "<i2", (0, 32, 1): "<i4", (0, 64, 1): "<i8",
            (1, 8, 1): "|u1", (1, 16, 1): "<u2", (1, 32, 1): "<u4", (1, 64, 1): "<u8",
            (2, 16, 1): "<f2", (2, 32, 1): "<f4", (2, 64, 1): "<f8",
            (5, 64, 1): "<c8", (5, 128, 1): "<c16", (6, 8, 1): "|b1"}

_local = threading.local()


def ml_dtype(code, bits, lanes=1):
    """ml_dtypes' NumPy dtype for a DLPack float format NumPy lacks (bfloat16, the float8 formats),
    with the unsigned typestr of its width; None where ml_dtypes is not installed, has no such type,
    or the elements are not whole bytes."""
    if lanes != 1 or bits % 8 or (code, bits, lanes) in _TYPESTR:
        return None
    try:
        import ml_dtypes
    except ImportError:
        return None
    t = getattr(ml_dtypes, dtype_name(code, bits, lanes), None)
    if t is None:
        return None
    import numpy
    dt = numpy.dtype(t)
    if dt.itemsize * 8 != bits:
        return None
    return dt, _TYPESTR[(1, bits, 1)]


def _errbuf():
    """This thread's buffer for error messages from Go (the first byte is the error kind)."""
    try:
        return _local.buf
    except AttributeError:
        _local.buf = ctypes.create_string_buffer(_ERRLEN)
        return _local.buf


def _error(buf):
    raw = buf.value
    text = "dlpackgo: " + raw[1:].decode("utf-8", "replace")
    return ValueError(text) if raw[:1] == b"V" else BufferError(text)


class Tensor:
    """A Go tensor seen from Python, through its handle.

    It speaks the DLPack protocol, so ``numpy.from_dlpack(t)`` and ``torch.from_dlpack(t)``
    share its memory. ``release()`` (or collection) drops the handle; arrays made from it keep
    the memory alive on their own.
    """

    __slots__ = ("_lib", "_handle", "_pending", "_device", "_share", "_desc", "_keep",
                 "__weakref__")

    def __init__(self, lib, handle, pending=None):
        self._lib = lib
        self._handle = handle
        self._pending = pending  # an import of a NumPy array that Go adopts on first use
        self._device = None  # a handle's device never changes: asked once, on first use
        self._share = None   # the fast path of __dlpack__: None not asked yet, False none
        self._desc = None    # (header, shape, element strides), asked once, on first use
        self._keep = None    # a view that keeps the memory of __array_interface__'s arrays

    @property
    def handle(self):
        """The Go handle, to pass to the library's own functions; ValueError once released."""
        h = self._handle
        if not h:
            p = self._pending
            if p is None:
                raise ValueError("dlpackgo: tensor was released")
            h = self._handle = self._lib._adopt(p)  # the pending import enters Go
            self._pending = None
        return h

    def release(self):
        """Release the handle now (idempotent)."""
        h, self._handle = self._handle, 0
        self._pending = None  # a pending import lets go of its array here
        self._share = False  # drops the sharer's hold; arrays made from it keep theirs
        # self._keep stays: arrays made from __array_interface__ have this object as their base
        if h:
            self._lib._release(h)

    def __del__(self):
        if self._handle:  # released already (the common case after release()): nothing to do
            try:
                self.release()
            except Exception:  # interpreter shutdown: the library may be gone
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def _describe(self):
        """(header, shape, element strides) of the tensor: a handle never changes, so Go is asked
        once."""
        d = self._desc
        if d is None and not self._handle and self._pending is not None:
            d = self._desc = self._lib._describe_pending(self._pending)
        elif d is None:
            out = (c_int64 * 8)()
            shape, strides = (c_int64 * 64)(), (c_int64 * 64)()
            if self._lib._describe(self.handle, out, shape, strides) != 0:
                raise ValueError(f"dlpackgo: unknown handle {self._handle}")
            n = out[0]
            d = self._desc = (tuple(out), tuple(shape[:n]), tuple(strides[:n]))
        return d

    @property
    def ndim(self):
        """The number of dimensions."""
        return self._describe()[0][0]

    @property
    def shape(self):
        """The size of each dimension, a tuple of ints."""
        return self._describe()[1]

    @property
    def size(self):
        """The number of elements."""
        n = 1
        for d in self._describe()[1]:
            n *= d
        return n

    @property
    def element_strides(self):
        """Strides in elements, as DLPack counts them (NumPy's ``strides`` // ``itemsize``)."""
        return self._describe()[2]

    @property
    def strides(self):
        """Strides in bytes, as NumPy counts them (see ``element_strides`` for DLPack's)."""
        size = self.itemsize
        return tuple(s * size for s in self._describe()[2])

    @property
    def dl_dtype(self):
        """The DLPack dtype as (code, bits, lanes)."""
        out = self._describe()[0]
        return (out[1], out[2], out[3])

    @property
    def dtype(self):
        """The dtype as NumPy names it: 'float64', 'int8', 'bool', 'complex64', and 'bfloat16',
        'float8_e4m3fn', ... for those NumPy lacks (ml_dtypes' names); 'float32x4' for lanes > 1."""
        return dtype_name(*self.dl_dtype)

    @property
    def itemsize(self):
        """Bytes per element (0 for packed sub-byte dtypes, such as int4)."""
        _, bits, lanes = self.dl_dtype
        return bits * lanes // 8 if bits % 8 == 0 else 0

    @property
    def nbytes(self):
        """Bytes the elements take (size × itemsize)."""
        return self.size * self.itemsize

    @property
    def device(self):
        """The DLPack device (type, id): (1, 0) is the CPU."""
        return self.__dlpack_device__()

    @property
    def flags(self):
        """The DLPack flags: FLAG_READ_ONLY, FLAG_IS_COPIED."""
        return self._describe()[0][6]

    @property
    def readonly(self):
        return bool(self.flags & FLAG_READ_ONLY)

    @property
    def data_ptr(self):
        """Address of the first element (to prove sharing by pointer identity)."""
        return self._describe()[0][7]

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __repr__(self):
        if not self._handle and self._pending is None:
            return "dlpackgo.Tensor(released)"
        ro = ", readonly" if self.readonly else ""
        dev = self.device
        where = "" if dev == (CPU, 0) else f", device={dev}"
        return (f"dlpackgo.Tensor(shape={self.shape}, dtype='{self.dtype}', "
                f"strides={self.strides}{where}{ro})")

    @property
    def __array_interface__(self):
        """NumPy's array interface (version 3), so that ``numpy.asarray(t)`` shares the memory on
        every NumPy version. The array keeps the memory valid on its own (through a view Go holds
        for as long as this Tensor object lives), even after ``release()``. CPU tensors only; a
        dtype NumPy lacks (bfloat16) raises TypeError."""
        if self.__dlpack_device__()[0] != CPU:
            raise TypeError(f"dlpackgo: __array_interface__ is for CPU tensors; this one is on "
                            f"{self.__dlpack_device__()}: use the DLPack protocol")
        code, bits, lanes = self.dl_dtype
        typestr = _TYPESTR.get((code, bits, lanes))
        if typestr is None:
            raise TypeError(f"dlpackgo: NumPy has no dtype for {self.dtype}")
        return self._interface(typestr)

    def _interface(self, typestr):
        """The array interface of this CPU tensor with elements of typestr."""
        if self._keep is None:
            h = self._lib._view(self.handle)
            if not h:
                raise ValueError("dlpackgo: tensor was released")
            self._keep = Tensor(self._lib, h)
        return {"version": 3, "shape": self.shape, "typestr": typestr,
                "data": (self.data_ptr, self.readonly), "strides": self.strides}

    # -- the DLPack protocol --------------------------------------------------------------

    def __dlpack_device__(self):
        return self._dlpack_device_slow()

    def _dlpack_device_slow(self):
        """__dlpack_device__ (the library's C method asks this while the device is unknown)."""
        dev = self._device
        if dev is None:
            out = self._describe()[0]
            dev = self._device = (out[4], out[5])
        return dev

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._dlpack_slow(stream, max_version, dl_device, copy)

    def _dlpack_slow(self, stream, max_version, dl_device, copy):
        """__dlpack__ (the library's C method does the common case itself and asks this for the
        rest)."""
        if stream is None and (copy is None or copy is False) and (
                dl_device is None or _same_device(dl_device, self.__dlpack_device__())):
            share = self._share
            if share is None and (self._handle or self._pending is not None):
                # First shared export: Go exports the tensor once, to the library's C code, if
                # it can be shared at all; every one from then on is made there, not in Go.
                share = self._share = self._lib._sharer(self.handle) or False
            if share:
                return share(max_version is not None and max_version[0] >= 1)
        versioned, mode = _request(self, stream, max_version, dl_device, copy)
        return self._go_export(versioned, mode, stream)

    def _go_export(self, versioned, mode, stream):
        """An export made by Go (dlpackgo_export) for a request _request checked: a copy, a
        refusal, or a share that Go makes each time (streams, tensors without a sharer)."""
        h = self.handle
        lib = self._lib
        buf = _errbuf()
        # a device tensor's stream: Go's StreamSync for the device makes it ready for it
        ptr = lib._export(h, versioned, mode, stream or 0, stream is not None, 0, buf, _ERRLEN)
        if not ptr:
            raise _error(buf)
        try:
            return _capsule_new(ptr, lib._names[1 - versioned], lib._destructor)
        except BaseException:
            lib._delete_export(ptr, versioned)
            raise


def _same_device(dl_device, dev):
    """Whether dl_device, a __dlpack__ argument, names device dev ((type, id) ints); False for a
    malformed one too (_request says what is wrong with it)."""
    try:
        return (int(dl_device[0]), int(dl_device[1])) == dev
    except (TypeError, ValueError, IndexError):
        return False


def _request(x, stream, max_version, dl_device, copy):
    """Check a __dlpack__ request before anything is exported, the same way for both exporters of
    this package (a Tensor, a function's result: x, anything with __dlpack_device__), as the Python
    array API standard says, and return (versioned, mode): whether a versioned capsule was asked
    for (max_version with major >= 1) and dlpackgo_export's copy mode (0 None, 1 True, 2 False).

    * copy: None shares if the tensor can be shared and copies if not; True always exports a fresh
      copy the consumer owns (IS_COPIED in a versioned capsule); False never copies (BufferError,
      from Go, when sharing is impossible). Anything else is a ValueError.
    * dl_device: None or x's own device, as a (type, id) pair of ints; another device is a
      BufferError (tensors are never moved between devices), a malformed one a ValueError.
    * stream: None on the CPU (BufferError otherwise); an int of 64 bits on other devices, which
      the Go library honours through the device's StreamSync, or accepts only as -1 without one.
    """
    mode = 0 if copy is None else 1 if copy is True else 2 if copy is False else None
    if mode is None:
        raise ValueError(f"dlpackgo: copy must be None, True or False, not {copy!r}")
    if stream is not None or dl_device is not None:
        dev = x.__dlpack_device__()
        if stream is not None and dev[0] == CPU:
            raise BufferError(f"dlpackgo: stream={stream!r} is not supported for a tensor on "
                              f"device {dev} (only None on CPU)")
        if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
            raise TypeError(f"dlpackgo: stream must be None or an int, not {stream!r}")
        if stream is not None and not -(1 << 63) <= stream < (1 << 63):
            # ctypes would wrap it into another stream (2**64 + 7 into 7) without a word
            raise BufferError(f"dlpackgo: stream={stream!r} is out of the range of a stream "
                              "handle (64 bits)")
        if dl_device is not None and not _same_device(dl_device, dev):
            try:
                want = (int(dl_device[0]), int(dl_device[1]))
            except (TypeError, ValueError, IndexError):
                raise ValueError(f"dlpackgo: dl_device must be None or a DLPack device "
                                 f"(type, id), not {dl_device!r}") from None
            raise BufferError(f"dlpackgo: cannot export to device {want}: the tensor is on "
                              f"{dev} and is never moved")
    return (1 if max_version is not None and max_version[0] >= 1 else 0), mode


# -- the DLPack 1.3 C exchange API (exchange_api.c in the Go library) ------------------------

# What exchange_api.c needs of the Python C API, in the order of exchange_api.h (PXE_API_*).
_XAPI = ("PyObject_GetAttr", "PyObject_SetAttr", "PyObject_IsInstance", "PyObject_Type",
         "PyCFunction_GetSelf", "PyCapsule_GetPointer", "PyCapsule_IsValid", "PyLong_AsVoidPtr",
         "PyLong_FromVoidPtr", "PyLong_FromLongLong", "PyLong_AsLongLong",
         "PyObject_CallFunctionObjArgs", "PyErr_Occurred", "PyErr_Clear", "PyErr_SetString",
         "PyErr_NoMemory", "PyCFunction_NewEx", "Py_IncRef", "Py_DecRef", "PyGILState_Ensure",
         "PyGILState_Release", "_PyType_Lookup", "PyDescr_NewMethod", "PyTuple_Size",
         "PyTuple_GetItem", "PySequence_GetItem", "PyUnicode_CompareWithASCIIString")
_EXCHANGE_ATTR = "__dlpack_c_exchange_api__"


def _no_api(*args):
    return None


def _attach_exchange_api(lib):
    """Publish the library's exchange API on Tensor and make its consumer builtins.

    A library built before the exchange API (no dlpackgo_exchange_init) keeps working:
    from_dlpack then always takes __dlpack__, and Tensor carries no API.
    """
    cdll = lib.cdll
    lib._take_api = lib._take_api_strict = _no_api
    lib._exchange_count = None
    init = getattr(cdll, "dlpackgo_exchange_init", None)
    if init is None:
        def missing(*args):
            raise TypeError("dlpackgo: the Go library has no DLPack exchange API: rebuild it")
        lib._take_api_strict = lib._give_api = lib._stream_api = lib._allocate_api = missing
        return
    objs = (None, False, TypeError, ValueError, BufferError, MemoryError, RuntimeError, Tensor,
            lib.tensor, sys.intern("_share"), sys.intern("handle"), sys.intern(_EXCHANGE_ATTR),
            sys.intern("_device"), sys.intern("_dlpack_slow"), sys.intern("_dlpack_device_slow"),
            sys.intern("stream"), sys.intern("max_version"), sys.intern("dl_device"),
            sys.intern("copy"), True)
    lib._exchange_objs = objs  # the library holds references of its own too
    addrs = [_api_address(n) for n in _XAPI] + [id(o) for o in objs]
    init.argtypes, init.restype = [POINTER(c_void_p), c_int], c_int
    if init((c_void_p * len(addrs))(*addrs), len(addrs)) != 0:
        raise RuntimeError("dlpackgo: the library refused the Python C API addresses of the exchange API")
    builtin = ctypes.PYFUNCTYPE(py_object, c_int)(("dlpackgo_exchange_builtin", cdll))
    (lib._take_api, lib._take_api_strict, lib._give_api, lib._stream_api,
     lib._allocate_api) = (builtin(i) for i in range(5))
    count = cdll.dlpackgo_exchange_count
    count.argtypes, count.restype = [c_int], c_int64
    lib._exchange_count = count
    if hasattr(cdll, "dlpackgo_protocol_method") and "_c_protocol" not in Tensor.__dict__:
        # __dlpack__ and __dlpack_device__ in C: their common cases without a Python frame
        method = ctypes.PYFUNCTYPE(py_object, c_int)(("dlpackgo_protocol_method", cdll))
        Tensor.__dlpack__, Tensor.__dlpack_device__ = method(0), method(1)
        Tensor._c_protocol = True
    if _EXCHANGE_ATTR not in Tensor.__dict__:
        api = cdll.dlpackgo_exchange_api
        api.argtypes, api.restype = [], c_void_p
        name = cdll.dlpackgo_exchange_capsule_name
        name.argtypes, name.restype = [], c_void_p  # static in the library, as capsule names must be
        setattr(Tensor, _EXCHANGE_ATTR, _capsule_new(api(), name(), None))
