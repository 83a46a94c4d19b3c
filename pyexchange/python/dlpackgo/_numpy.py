"""NumPy arrays handed to Go without ``__dlpack__`` (the library's numpy.c).

For an argument of exactly ``numpy.ndarray``, a registered function's call and
``Library.from_dlpack`` read the array's public C fields (data, dimensions, strides, dtype number,
flags) in the library's C code and make a DLPack managed tensor of their own that holds a
reference to the array: no Python method call, no capsule. The reader takes what NumPy's own
``__dlpack__`` would export (aligned, native byte order, a dtype in the table below, strides of
whole elements), of exactly ``numpy.ndarray`` or ``numpy.memmap``, and read-only arrays too
(``flags.writeable`` False, ``np.load(..., mmap_mode="r")``), which Go gets as tensors flagged
READ_ONLY (a Go function that writes one fails with core.ErrReadOnly, raised as
``GoValueError``); anything else goes through ``__dlpack__``, which exports it or says why not. ``from_dlpack`` of such an array does not even enter Go: the Tensor holds a pending
import, which Go adopts the first time it needs the tensor (a call, an export, ``handle``).

``attach`` checks that the reader and NumPy agree on probe arrays before turning it on; where they
do not (a NumPy or CPython build with another layout) the reader stays off and everything takes
``__dlpack__`` as before. ``ndarrays`` are the types the generated functions test arguments
against (``type(x) in ndarrays``).
"""

import ctypes
from ctypes import POINTER, c_int, c_void_p, py_object

CPU = 1  # kDLCPU


class _Never:
    """Stands for numpy.ndarray while the reader is off: no argument is of this type."""


ndarrays = (_Never,)
readonly = None  # readonly(capsule): the library's builtin (numpy.c), once attached

# call.h's PXG_NP_* table: the Python C API, then objects
_CAPI = ("Py_IncRef", "Py_DecRef", "PyCapsule_New", "PyCapsule_IsValid", "PyCapsule_GetPointer",
         "PyCapsule_SetName", "PyLong_FromVoidPtr", "PyErr_NoMemory", "PyErr_SetString",
         "PyTuple_New", "PyTuple_SetItem", "PyLong_FromLongLong", "PyCFunction_NewEx",
         "PyCapsule_SetContext", "PyCapsule_GetContext")
_DTYPES = 32  # PXG_NP_DTYPES
_KIND_CODE = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}  # NumPy kind -> DLPack code


def _dtype_table(np):
    """DLPack dtypes by NumPy type number, for the dtypes NumPy's own __dlpack__ exports."""
    table = [0] * _DTYPES
    for char in "bBhHiIlLqQefdFD?":
        dt = np.dtype(char)
        if dt.num >= _DTYPES:
            continue
        if char == "?":  # NumPy < 1.25 refuses bool in __dlpack__: keep its answer
            try:
                np.zeros(1, dtype=bool).__dlpack__()
            except (BufferError, TypeError):
                continue
        table[dt.num] = _KIND_CODE[dt.kind] | (dt.itemsize * 8) << 8 | 1 << 16
    return table


# NumPy's C API, by index in its _ARRAY_API table (numpy/__multiarray_api.h; the same in NumPy 1.x
# and 2.x): what the library needs to make the NumPy arrays of function results in C.
_ARRAY_API = {"PyArray_Type": 2, "PyArray_DescrFromType": 45, "PyArray_NewFromDescr": 94,
              "PyArray_SetBaseObject": 282}
_RESULTS = 16  # PXG_NP_RESULTS


def _array_api(np):
    """The addresses of _ARRAY_API's entries in NumPy's own table, or zeros (results are then made
    in Python) when NumPy has no such table or its PyArray_Type is not numpy.ndarray."""
    import importlib
    get = ctypes.PYFUNCTYPE(c_void_p, py_object, ctypes.c_char_p)(("PyCapsule_GetPointer",
                                                                  ctypes.pythonapi))
    for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            cap = importlib.import_module(name)._ARRAY_API
            table = ctypes.cast(get(cap, None), POINTER(c_void_p))
        except (ImportError, AttributeError, ValueError, TypeError):
            continue
        addrs = [table[i] for i in _ARRAY_API.values()]
        if addrs[0] == id(np.ndarray) and all(addrs):
            return addrs
    return [0] * len(_ARRAY_API)


def _result_table(np):
    """(DLPack dtype, NumPy type number) pairs of the dtypes NumPy arrays of results may have."""
    pairs = []
    for name in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128"):
        dt = np.dtype(name)  # the canonical type: int64 is "l" on LP64, as numpy.arange makes
        pairs += [_KIND_CODE[dt.kind] | (dt.itemsize * 8) << 8 | 1 << 16, dt.num]
    return pairs + [0] * (2 * _RESULTS - len(pairs))


def attach(lib):
    """Give lib the builtins of pending imports (``_pend``, ``_adopt``, ``_describe_pending``),
    and turn the NumPy reader on if NumPy is importable and agrees with it (see the module
    docstring)."""
    global ndarrays
    cdll = lib.cdll
    lib._ndarrays = (_Never,)  # the types from_dlpack reads in C: ndarray and memmap once on
    try:
        import numpy as np
    except ImportError:
        np = None
    api = ctypes.pythonapi
    addrs = [ctypes.cast(getattr(api, n), c_void_p).value for n in _CAPI]
    addrs += [id(None), id(ValueError), id(BufferError), id(np.ndarray) if np else 0,
              object.__basicsize__, id(np.memmap) if np else 0]
    addrs += _array_api(np) if np else [0] * len(_ARRAY_API)
    addrs += _dtype_table(np) if np else [0] * _DTYPES
    addrs += _result_table(np) if np else [0] * (2 * _RESULTS)
    init = cdll.dlpackgo_numpy_init
    init.argtypes, init.restype = [POINTER(c_void_p), c_int], c_int
    if init((c_void_p * len(addrs))(*addrs), len(addrs)) != 0:
        raise RuntimeError("dlpackgo: the library refused the NumPy reader's table")
    builtin = ctypes.PYFUNCTYPE(py_object, c_int)(("dlpackgo_numpy_builtin", cdll))
    global readonly
    lib._pend, lib._adopt, lib._describe_pending, readonly = (builtin(i) for i in range(4))
    reads = cdll.dlpackgo_numpy_reads
    reads.argtypes, reads.restype = [], ctypes.c_int64
    lib._numpy_reads = reads
    if np is None:
        return
    if _agrees(np, lib._pend, lib._describe_pending):
        ndarrays = lib._ndarrays = (np.ndarray, np.memmap)
    else:
        off = cdll.dlpackgo_numpy_off
        off.argtypes, off.restype = [], None
        off()


def _agrees(np, pend, describe):
    """Whether the reader sees probe arrays as NumPy does, and declines what it must."""
    base = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
    probes = [base, base.transpose(2, 0, 1)[::-1, :, ::2], np.zeros((), np.int16),
              np.ones((5, 0), np.complex64), np.arange(7, dtype=np.uint8)[1:]]
    readonly = np.arange(3.0)
    readonly.flags.writeable = False
    probes.append(readonly)
    for x in probes:
        p = pend(x)
        if p is None:
            return False
        header, shape, strides = describe(p)
        size = x.dtype.itemsize
        flags = 0 if x.flags.writeable else 1  # DLPack READ_ONLY
        want = ((x.ndim, _KIND_CODE[x.dtype.kind], size * 8, 1, CPU, 0, flags, x.ctypes.data),
                x.shape, tuple(s // size for s in x.strides))
        if (header, shape, strides) != want:
            return False
    swapped = np.arange(3, dtype=">i4")
    unaligned = np.frombuffer(bytearray(17), dtype=np.uint8)[1:].view(np.int64)
    masked = np.ma.masked_array(np.arange(3.0), mask=[0, 1, 0])
    return all(pend(x) is None for x in (swapped, unaligned, np.zeros(2, "U3"), masked))
