"""The Go functions a library registered (pyexchange.Register), as Python functions.

``attach(lib)`` asks the library for its registered functions (``dlpackgo_functions``: names,
docstrings, parameter and result kinds) and makes, for each, a Python function with the real
signature (positional-only parameters named as the Go library named them, annotations from
their kinds) that turns tensor arguments into DLPack capsules and calls one builtin the library
made (``dlpackgo_caller``, see pyexchange/call.c): it checks the other arguments' types, hands
the capsules to Go, releases the GIL while Go runs, and builds the results or raises the error.

What Library exposes is a ``dlpackgo.GoFunction`` the library made around that Python function
(``dlpackgo_function``, call.c): a C callable that CPython calls through vectorcall. It takes the
common call in C (the parameters by position, no keywords, NumPy arrays and live
dlpackgo.Tensors as tensor arguments; tensor results when the Library returns NumPy arrays or
torch tensors, whose host results C makes NumPy arrays of itself, or torch tensors through
torch's own DLPack import) and hands every other call to the Python function, its
``__wrapped__``, which also gives inspect.signature and help() the signature.

Read-only arrays (``flags.writeable`` False, ``np.load(..., mmap_mode="r")``) and torch tensors
that may not be written (``requires_grad``, inference tensors outside inference mode) go to Go as
read-only tensors: a Go function may read them, and one that writes them raises GoValueError
(core.ErrReadOnly), the array unchanged.
"""

import ctypes
import datetime
import functools
import json
import keyword
import sys
import warnings
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_void_p, py_object

from . import _exchange, _numpy
from ._exchange import DLPACK_VERSION, Tensor

__all__ = ["GoError", "GoValueError", "GoTypeError", "GoBufferError", "GoMemoryError", "GoPanic",
           "Array"]


class GoError(RuntimeError):
    """An error a Go function returned; the message is the Go error's. Errors that wrap one of
    the sentinels pyexchange maps (pyexchange.ExceptionFor, pyexchange.MapError) are raised as
    the subclasses below, which are ValueError, TypeError, BufferError or MemoryError too."""


class GoValueError(GoError, ValueError):
    """A Go error mapped to ValueError (bad values: core.ErrInvalid, ErrArgument, ErrReadOnly)."""


class GoTypeError(GoError, TypeError):
    """A Go error mapped to TypeError (dtypes: core.ErrDType, ErrTypeMismatch, ErrUnsupported)."""


class GoBufferError(GoError, BufferError):
    """A Go error mapped to BufferError (memory that cannot be shared or reached as asked)."""


class GoMemoryError(GoError, MemoryError):
    """A Go error mapped to MemoryError."""


class GoPanic(GoError):
    """A Go function panicked; the message holds the panic value and the goroutine's stack. The
    panic was recovered: the library and the interpreter carry on."""


for _c in (GoError, GoValueError, GoTypeError, GoBufferError, GoMemoryError, GoPanic):
    _c.__module__ = "dlpackgo"


class Array:
    """Annotation of a tensor parameter: any object with ``__dlpack__`` (a NumPy array, a torch
    tensor, a dlpackgo.Tensor, ...), shared with Go without copying."""

    __module__ = "dlpackgo"


# The Python C API table of call.h (PXG_CAPI_*): functions, then objects.
_CAPI = ("PyEval_SaveThread", "PyEval_RestoreThread", "PyLong_AsLongLong",
         "PyLong_AsUnsignedLongLong", "PyFloat_AsDouble", "PyUnicode_AsUTF8AndSize",
         "PyErr_Occurred", "PyErr_Format", "PyErr_SetString", "PyErr_ExceptionMatches",
         "PyLong_FromLongLong", "PyLong_FromUnsignedLongLong", "PyFloat_FromDouble",
         "PyUnicode_DecodeUTF8", "PyTuple_New", "PyTuple_SetItem", "PyCapsule_New",
         "PyCapsule_IsValid", "PyCapsule_GetPointer", "PyCapsule_SetName", "PyCFunction_NewEx",
         "Py_IncRef", "Py_DecRef", "PyErr_NoMemory", "PyNumber_Index", "PyObject_Type",
         "PyObject_GetAttrString", "PyObject_CallFunctionObjArgs", "PyType_FromSpec",
         "PyType_GenericAlloc", "PyType_GetSlot", "PyObject_GC_UnTrack", "PyVectorcall_Call",
         "PyObject_Vectorcall", "PyObject_IsTrue", "PyObject_GetAttr")


_CapsuleType = type(datetime.datetime_CAPI)  # types.CapsuleType from Python 3.13 on

_legacy = set()  # producer types whose __dlpack__ takes no max_version, for _capsule_of


def _capsule_of(x):
    """The capsule of a NumPy array the library's reader declined (call.c asks for it)."""
    return _capsule(x, "", 0, "", _legacy)


_OBJECTS = (True, False, None, TypeError, OverflowError, GoError, GoValueError, GoTypeError,
            GoBufferError, GoMemoryError, GoPanic, _capsule_of, Tensor, sys.intern("_handle"))

# The entries of _CAPI an interpreter may lack (0 in the table): PyObject_Vectorcall is a
# function from Python 3.11 on, an inline function before.
_OPTIONAL = {"PyObject_Vectorcall"}

# Whether registered functions are GoFunctions (call.c), whose object layout assumes CPython's
# two-word object header and which hand calls on through PyObject_Vectorcall; elsewhere they stay
# the generated Python functions.
_C_CALLS = (object.__basicsize__ == 2 * ctypes.sizeof(c_void_p)
            and hasattr(ctypes.pythonapi, "PyObject_Vectorcall"))

_ANNOTATION = {"tensor": Array, "int": int, "float": float, "bool": bool, "str": str}
_RETURNS = ("numpy", "torch", "tensor")


def _address(name):
    if name in _OPTIONAL and not hasattr(ctypes.pythonapi, name):
        return 0
    return ctypes.cast(getattr(ctypes.pythonapi, name), c_void_p).value


def attach(lib, returns):
    """Give lib its registered functions (see the module docstring)."""
    if returns not in _RETURNS and not callable(returns):
        raise ValueError(f"dlpackgo: returns must be one of {_RETURNS} or a callable, not {returns!r}")
    lib._returns = returns
    cdll = lib.cdll
    api = (c_void_p * (len(_CAPI) + len(_OBJECTS)))(*([_address(n) for n in _CAPI] + [id(o) for o in _OBJECTS]))
    init = cdll.dlpackgo_call_init
    init.argtypes, init.restype = [POINTER(c_void_p), c_int], c_int
    if init(api, len(api)) != 0:
        raise RuntimeError("dlpackgo: the library refused the Python C API addresses of calls")
    lib._release = ctypes.PYFUNCTYPE(py_object)(("dlpackgo_releaser", cdll))()
    view = cdll.dlpackgo_view
    view.argtypes, view.restype = [c_void_p], c_void_p
    lib._view = view
    clone = cdll.dlpackgo_clone
    clone.argtypes, clone.restype = [c_void_p, c_char_p, c_size_t], c_void_p
    lib._clone = clone

    listing = cdll.dlpackgo_functions
    listing.argtypes, listing.restype = [], c_void_p
    free = cdll.dlpackgo_free
    free.argtypes, free.restype = [c_void_p], None
    p = listing()
    try:
        # a library that registers nothing lists null (older libraries) or []
        specs = json.loads(ctypes.string_at(p).decode()) or []
    finally:
        free(p)
    caller = ctypes.PYFUNCTYPE(py_object, c_int)(("dlpackgo_caller", cdll))
    function = ctypes.PYFUNCTYPE(py_object, c_int, py_object, py_object, py_object)(("dlpackgo_function", cdll))
    # with NumPy or torch results, C takes the calls of functions with tensor results too, and
    # makes NumPy arrays of host results itself, which torch gets through torch.from_numpy (no
    # copy); convert does the rest (device results)
    convert = array_convert = None
    if returns in ("numpy", "torch"):
        def convert(r):
            return _convert(lib, r, returns)
        if returns == "torch":
            import torch
            array_convert = torch.from_numpy
            # torch's own import of a DLPack capsule, called from C: host results become torch
            # tensors without a NumPy array in between (call.c's torch_result); private, so
            # optional: without it they go through torch.from_numpy as before
            from_dlpack = getattr(getattr(torch, "_C", None), "_from_dlpack", None)
            torch_init = getattr(cdll, "dlpackgo_torch_init", None)  # None: an older library
            if callable(from_dlpack) and torch_init is not None:
                torch_init.argtypes, torch_init.restype = [py_object], c_int
                torch_init(from_dlpack)
    lib.functions = {}
    reserved = set(dir(type(lib))) | set(vars(lib))
    for fid, spec in enumerate(specs):
        f = _make(lib, spec, caller(fid))
        if _C_CALLS:  # the same function, called from C (call.c's GoFunction)
            g = function(fid, f, convert, array_convert)
            for a in functools.WRAPPER_ASSIGNMENTS:
                setattr(g, a, getattr(f, a))
            g.__wrapped__ = f  # inspect.signature and help() read f's signature
            f = g
        lib.functions[spec["name"]] = f
        if spec["name"] in reserved:
            warnings.warn(f"dlpackgo: the Go function {spec['name']!r} has the name of a Library "
                          f"attribute: call it as lib.functions[{spec['name']!r}]", stacklevel=3)
        else:
            setattr(lib, spec["name"], f)


def _capsule(x, fn, i, name, legacy):
    """x's unused DLPack capsule, for argument i of fn (legacy: the set of producer types that
    take no max_version), or the handle of a dlpackgo.Tensor."""
    t = type(x)
    if t is Tensor:  # Go has it: its handle is enough (ValueError once released)
        return x.handle
    readonly = False
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        # torch has no read-only flag, but two kinds of tensor must not be written: one that
        # requires grad (its __dlpack__ refuses it) and an inference tensor outside inference
        # mode. Go gets them as read-only tensors (a Go function that writes fails with
        # core.ErrReadOnly); the first detached, which shares its memory.
        if x.requires_grad:
            x, readonly = x.detach(), True
        elif x.is_inference() and not torch.is_inference_mode_enabled():
            readonly = True
    capsule = None
    if t in legacy:
        try:
            capsule = x.__dlpack__()
        except TypeError:  # instances of one type that differ: ask again, the new way
            legacy.discard(t)
    if capsule is None:
        method = getattr(x, "__dlpack__", None)
        if method is None:
            raise TypeError(f"{fn}() argument {i} ({name}) must be an array with __dlpack__ "
                            f"(NumPy, PyTorch, ...), not {t.__name__}")
        try:
            capsule = method(max_version=DLPACK_VERSION)
        except TypeError:  # a producer that predates max_version (NumPy < 2.1, PyTorch < 2.9)
            capsule = method()
            legacy.add(t)
    if type(capsule) is not _CapsuleType:  # call.c would take an int for a Go handle
        raise TypeError(f"{fn}() argument {i} ({name}): {t.__name__}.__dlpack__ returned "
                        f"{type(capsule).__name__}, not a DLPack capsule")
    if readonly:
        capsule = _numpy.readonly(capsule)
    return capsule


class _Exported:
    """A tensor result on its way to the consumer (a host tensor, or one on a device without a
    StreamSync): the export Go made of it, shared through its share builtin (pyexchange.c)."""

    __slots__ = ("_lib", "_share", "_device")

    def __init__(self, lib, share, device):
        self._lib = lib
        self._share = share
        self._device = device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the result, as Tensor.__dlpack__ makes one (the same checks,
        _exchange._request): copy None or False shares the result's memory (made in C, no
        stream), copy=True exports a fresh C-order copy the consumer owns (flag IS_COPIED in a
        versioned capsule); dl_device must be None or the result's own device, stream None on
        the CPU and None or -1 on other devices.

        A result Go could not share (read-only, negative strides) was copied once, when the
        function returned: copy None or False shares that copy, and every such capsule aliases
        the others, so none carries IS_COPIED.

        Copies are made by Go from a share of the result, as for a Tensor, and only in host
        memory: copy=True for a result on another device raises BufferError (no device copy is
        available from Python here: share it, copy=None, and let the consumer copy it, or have
        the Go function return a copy).
        """
        versioned, mode = _exchange._request(self, stream, max_version, dl_device, copy)
        if stream is None and mode != 1:  # the common case: shared, made in C
            return self._share(versioned == 1)
        # the rest goes through Go, as a Tensor's does: a Tensor over a share of the result
        # (its release lets go of the share, whatever the export made of it)
        with Tensor(self._lib, 0, self._lib._take(self._share(True))) as t:
            return t._go_export(versioned, mode, stream)

    def __dlpack_device__(self):
        return self._device


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", POINTER(ctypes.c_int64)),
                ("strides", POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", c_void_p),
                ("deleter", c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_get_pointer = ctypes.PYFUNCTYPE(c_void_p, py_object, c_char_p)(("PyCapsule_GetPointer",
                                                                 ctypes.pythonapi))


class _Interface:
    """What numpy.asarray reads a result through: an __array_interface__ over the memory of an
    unused capsule this object keeps (its destructor lets the memory go when the array's base,
    this object, is collected)."""

    __slots__ = ("__array_interface__", "_capsule")


def _numpy_array(x):
    """A NumPy array over the memory of result x, without copying. Through __array_interface__
    rather than numpy.from_dlpack, whose arrays NumPy < 2 makes read-only. A dtype NumPy lacks
    (bfloat16, float8) comes back as ml_dtypes' type where ml_dtypes is installed."""
    capsule = x._share(True)
    m = _ManagedVersioned.from_address(_get_pointer(capsule, b"dltensor_versioned"))
    dl = m.dl_tensor
    typestr = _exchange._TYPESTR.get((dl.code, dl.bits, dl.lanes))
    ml = None
    if typestr is None and dl.device_type == _exchange.CPU:
        ml = _exchange.ml_dtype(dl.code, dl.bits, dl.lanes)  # bfloat16 and float8 with ml_dtypes
        if ml is not None:
            ml, typestr = ml
    if typestr is None or dl.device_type != _exchange.CPU:
        return _np.from_dlpack(x)  # NumPy says what it cannot take
    size = dl.bits // 8
    holder = _Interface()
    holder._capsule = capsule
    holder.__array_interface__ = {
        "version": 3, "typestr": typestr,
        "shape": tuple(dl.shape[i] for i in range(dl.ndim)),
        "strides": tuple(dl.strides[i] * size for i in range(dl.ndim)),
        "data": (dl.data + dl.byte_offset, bool(m.flags & _exchange.FLAG_READ_ONLY)),
    }
    a = _np.asarray(holder)
    return a if ml is None else a.view(ml)


_np = _torch = None


def _convert(lib, r, returns):
    """The Python value of a tensor result r: a handle (returns == 'tensor', or a tensor on a
    device whose exports synchronize with the consumer's stream: its Tensor's __dlpack__ does) or
    (share, device type, device id)."""
    global _np, _torch
    if type(r) is not tuple and type(r) is not int:  # a NumPy array the library made (call.c)
        if returns == "torch":  # torch over it: no copy, the tensor keeps the array
            if _torch is None:
                import torch as _torch
            return _torch.from_numpy(r)
        return r
    if returns == "tensor":
        return Tensor(lib, r)
    x = Tensor(lib, r) if type(r) is int else _Exported(lib, r[0], (r[1], r[2]))
    if returns == "numpy":
        if _np is None:
            import numpy as _np
        if type(x) is not Tensor:
            return _numpy_array(x)
        ml = _exchange.ml_dtype(*x.dl_dtype) if x.device[0] == _exchange.CPU else None
        if ml is not None:  # bfloat16 or float8, which NumPy holds only as ml_dtypes' types
            holder = _Interface()
            holder._capsule = x
            holder.__array_interface__ = x._interface(ml[1])
            return _np.asarray(holder).view(ml[0])
        return _np.from_dlpack(x)
    if returns == "torch":
        if _torch is None:
            import torch as _torch
        return _torch.from_dlpack(x)
    return returns(x)


def _check_returns(lib, returns):
    if returns is None:
        return lib._returns
    if returns not in _RETURNS and not callable(returns):
        raise ValueError(f"dlpackgo: returns must be one of {_RETURNS}, a callable or None, not "
                         f"{returns!r}")
    return returns


def _make(lib, spec, call):
    """The Python function of one registered Go function."""
    name, params, results = spec["name"], spec["params"], spec["results"]
    names = [p["name"] for p in params]
    # the generated function's own names start with "_" (_call, _lib, _handles, ...): a parameter
    # of one of them would shadow it, so parameters are named arg0, arg1, ... then (as
    # pyexchange.Register names them)
    if (any(not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_") or n == "returns"
            for n in names) or len(set(names)) != len(names)):
        names = [f"arg{i}" for i in range(len(params))]
    args = []
    for i, (n, p) in enumerate(zip(names, params)):
        if p["kind"] == "tensor":  # a live dlpackgo.Tensor goes by its handle, a NumPy array as it
            # is (the library reads it in C), anything else as a capsule; all inline
            args.append(f"({n}._handle if type({n}) is _Tensor and {n}._handle else {n} if "
                        f"type({n}) in _nd else _cap({n}, {name!r}, {i + 1}, {n!r}, _legacy))")
        else:
            args.append(n)
    tensors = [i for i, r in enumerate(results) if r["kind"] == "tensor"]
    sig = ", ".join(names) + (", /" if names else "")
    call_args = ", ".join(["_handles"] + args)
    if not tensors:
        body = f"    return _call(False, {', '.join(args)})\n" if args else "    return _call(False)\n"
    else:
        sig += (", " if names else "") + "*, returns=None"
        # the call's first argument: True for handles, None for NumPy arrays made in C where
        # the library can (call.c), False for exports
        body = ("    returns = _check(_lib, returns)\n"
                "    _handles = True if returns == 'tensor' else None if returns == 'numpy' or returns == 'torch' else False\n"
                f"    r = _call({call_args})\n")
        if len(results) == 1:
            body += "    return _convert(_lib, r, returns)\n"
        else:
            items = [f"_convert(_lib, r[{i}], returns)" if i in tensors else f"r[{i}]"
                     for i in range(len(results))]
            body += f"    return ({', '.join(items)},)\n"
    src = f"def {name}({sig}):\n{body}"
    env = {"_call": call, "_cap": _capsule, "_Tensor": Tensor, "_nd": _numpy.ndarrays, "_legacy": lib._legacy_types, "_lib": lib,
           "_convert": _convert, "_check": _check_returns}
    exec(compile(src, f"<dlpackgo {name}>", "exec"), env)
    f = env[name]
    f.__annotations__ = {n: _ANNOTATION[p["kind"]] for n, p in zip(names, params)}
    if not results:
        f.__annotations__["return"] = None
    elif len(results) == 1:
        f.__annotations__["return"] = _ANNOTATION[results[0]["kind"]]
    else:
        f.__annotations__["return"] = tuple[tuple(_ANNOTATION[r["kind"]] for r in results)]
    go_params = ", ".join(f"{n} {p['type']}" for n, p in zip(names, params))
    go_results = ", ".join([r["type"] for r in results] + ["error"])
    go_results = f"({go_results})" if len(results) > 0 else go_results
    doc = spec["doc"].strip()
    first, _, rest = doc.partition("\n")
    if first.startswith(name + "(") and first.rstrip().endswith(")"):
        doc = rest.strip()  # the parameter names' line: help() shows the signature itself
    f.__doc__ = (doc + "\n\n" if doc else "") + f"Go: func {name}({go_params}) {go_results}"
    if tensors:
        f.__doc__ += ("\n\nTensor results come back as NumPy arrays by default (Library(..., "
                      "returns=...)); returns='torch', 'tensor' (a dlpackgo.Tensor) or a callable "
                      "such as cupy.from_dlpack asks for another kind, without copying.")
    f.__module__ = "dlpackgo"
    f.__qualname__ = name
    return f
