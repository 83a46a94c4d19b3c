"""Tests of dlpackgo with the real NumPy and PyTorch.

Run by the Go test TestPython in pyexchange, which builds the test library
(pyexchange/internal/testlib) with -buildmode=c-shared and points DLPACKGO_TESTLIB at it:

    DLPACKGO_TESTLIB=/path/libdlpackgo_test.so python3 -m unittest -v test_dlpackgo

NumPy and PyTorch are required: a missing one fails the import, loudly.
"""

import ctypes
import gc
import os
import subprocess
import sys
import threading
import time
import unittest
import weakref
from ctypes import POINTER, c_double, c_int, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p

import numpy as np
import torch

import dlpackgo

NP_VERSION = tuple(int(x) for x in np.__version__.split(".")[:2])
TORCH_VERSION = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])

# DLPack dtype codes
INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 4, 5, 6

NUMPY_DTYPES = {
    np.int8: (INT, 8), np.int16: (INT, 16), np.int32: (INT, 32), np.int64: (INT, 64),
    np.uint8: (UINT, 8), np.uint16: (UINT, 16), np.uint32: (UINT, 32), np.uint64: (UINT, 64),
    np.float16: (FLOAT, 16), np.float32: (FLOAT, 32), np.float64: (FLOAT, 64),
    np.complex64: (COMPLEX, 64), np.complex128: (COMPLEX, 128),
}

TORCH_DTYPES = {
    torch.uint8: (UINT, 8), torch.int8: (INT, 8), torch.int16: (INT, 16), torch.int32: (INT, 32),
    torch.int64: (INT, 64), torch.float16: (FLOAT, 16), torch.bfloat16: (BFLOAT, 16),
    torch.float32: (FLOAT, 32), torch.float64: (FLOAT, 64), torch.complex64: (COMPLEX, 64),
    torch.complex128: (COMPLEX, 128),
}


def load():
    path = os.environ.get("DLPACKGO_TESTLIB")
    if not path:
        raise RuntimeError("DLPACKGO_TESTLIB must name the test library (see the module docstring)")
    lib = dlpackgo.Library(path)
    c = lib.cdll
    for name, args, res in [
        ("dlpackgo_test_arange", [c_int, c_int, c_int, c_int, POINTER(c_int64)], c_void_p),
        ("dlpackgo_test_transpose", [c_void_p], c_void_p),
        ("dlpackgo_test_reverse", [c_void_p, c_int], c_void_p),
        ("dlpackgo_test_slice", [c_void_p, c_int, c_int64, c_int64, c_int64], c_void_p),
        ("dlpackgo_test_readonly", [c_void_p], c_void_p),
        ("dlpackgo_test_broadcast", [c_void_p, c_int, POINTER(c_int64)], c_void_p),
        ("dlpackgo_test_foreign", [c_int64], c_void_p),
        ("dlpackgo_test_foreign_released", [], c_int64),
        ("dlpackgo_test_drop_view", [c_void_p], c_int),
        ("dlpackgo_test_get", [c_void_p, c_int, POINTER(c_int64), POINTER(c_double)], c_int),
        ("dlpackgo_test_set", [c_void_p, c_int, POINTER(c_int64), c_double], c_int),
        ("dlpackgo_test_sum", [c_void_p, POINTER(c_double)], c_int),
    ]:
        f = getattr(c, name)
        f.argtypes, f.restype = args, res
    return lib


LIB = load()
C = LIB.cdll


def int64s(seq):
    seq = list(seq)
    return (c_int64 * max(len(seq), 1))(*seq)


def arange(shape, code=FLOAT, bits=64, lanes=1):
    """A Go tensor of the dtype holding 0, 1, 2, ... in C order."""
    return LIB.tensor(C.dlpackgo_test_arange(code, bits, lanes, len(shape), int64s(shape)))


def go_view(fn, t, *args):
    return LIB.tensor(fn(t.handle, *args))


def go_get(t, *idx):
    out = c_double()
    if C.dlpackgo_test_get(t.handle, len(idx), int64s(idx), ctypes.byref(out)) != 0:
        raise IndexError(f"Go get {idx} failed")
    return out.value


def go_set(t, value, *idx):
    """Write through Go; False if Go refused (read-only)."""
    return C.dlpackgo_test_set(t.handle, len(idx), int64s(idx), value) == 0


def go_sum(t):
    out = c_double()
    assert C.dlpackgo_test_sum(t.handle, ctypes.byref(out)) == 0
    return out.value


def eventually(cond, what):
    for _ in range(300):
        gc.collect()
        LIB.collect()
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


class Base(unittest.TestCase):
    def setUp(self):
        gc.collect()
        self.exports = LIB.live_exports()
        self.handles = LIB.live_handles()
        self.foreign = LIB.live_foreign()

    def tearDown(self):
        # whatever a test made must be let go: exports, handles, foreign memory
        eventually(lambda: (LIB.live_exports(), LIB.live_handles(), LIB.live_foreign())
                   == (self.exports, self.handles, self.foreign),
                   "live counts back to baseline")


# -- the versioned consumer and producer, written with ctypes -------------------------------

class DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


DELETER_V = ctypes.CFUNCTYPE(None, c_void_p)


class ManagedVersioned(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32), ("manager_ctx", c_void_p),
                ("deleter", c_void_p), ("flags", c_uint64), ("dl_tensor", DLTensor)]


class ManagedLegacy(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


_api = ctypes.pythonapi
_is_valid = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_get_pointer = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))
_USED_V = ctypes.create_string_buffer(b"used_dltensor_versioned")
_set_name = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_void_p)(("PyCapsule_SetName", _api))
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, ctypes.c_char_p, c_void_p)(("PyCapsule_New", _api))


class VersionedView:
    """A DLPack 1.x consumer in plain Python: it takes a versioned capsule and parses it."""

    def __init__(self, capsule):
        assert _is_valid(capsule, b"dltensor_versioned"), "not an unused versioned capsule"
        self.ptr = _get_pointer(capsule, b"dltensor_versioned")
        assert _set_name(capsule, ctypes.addressof(_USED_V)) == 0
        self.m = ManagedVersioned.from_address(self.ptr)
        dl = self.m.dl_tensor
        self.version = (self.m.major, self.m.minor)
        self.flags = self.m.flags
        self.shape = tuple(dl.shape[i] for i in range(dl.ndim))
        self.strides = tuple(dl.strides[i] for i in range(dl.ndim)) if dl.strides else None
        self.dtype = (dl.code, dl.bits, dl.lanes)
        self.device = (dl.device_type, dl.device_id)
        self.data = dl.data
        self.byte_offset = dl.byte_offset

    def f64(self, *idx):
        off = sum(i * s for i, s in zip(idx, self.strides))
        return c_double.from_address(self.data + self.byte_offset + 8 * off)

    def delete(self):
        if self.m.deleter:
            DELETER_V(self.m.deleter)(self.ptr)


class PyProducer:
    """A DLPack 1.x producer in plain Python, over a NumPy array's buffer, that counts deleter
    calls. It speaks the versioned protocol only when asked with max_version."""

    def __init__(self, array, flags=0, major=1, ndim=None, code=None, versioned=True):
        self.array = np.ascontiguousarray(array)
        self.deleted = 0
        self.versioned = versioned
        self.shape = (c_int64 * max(self.array.ndim, 1))(*self.array.shape)
        self.strides = (c_int64 * max(self.array.ndim, 1))(*[s // self.array.itemsize for s in self.array.strides])
        kind = {"f": FLOAT, "i": INT, "u": UINT, "c": COMPLEX, "b": BOOL}[self.array.dtype.kind]
        dl = DLTensor(self.array.ctypes.data, 1, 0, self.array.ndim if ndim is None else ndim,
                      kind if code is None else code, self.array.itemsize * 8, 1,
                      self.shape, self.strides, 0)

        def deleter(_):
            self.deleted += 1
        self._deleter = DELETER_V(deleter)
        addr = ctypes.cast(self._deleter, c_void_p).value
        if versioned:
            self.m = ManagedVersioned(major, 3, None, addr, flags, dl)
        else:
            self.m = ManagedLegacy(dl, None, addr)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self.versioned:
            if max_version is None:
                raise TypeError("this producer needs max_version")
            return _capsule_new(ctypes.addressof(self.m), b"dltensor_versioned", None)
        if max_version is not None:
            raise TypeError("an old producer: no max_version")
        return _capsule_new(ctypes.addressof(self.m), b"dltensor", None)

    def __dlpack_device__(self):
        return (1, 0)


# -- Go to NumPy ---------------------------------------------------------------------------

class GoToNumPy(Base):
    def test_every_dtype(self):
        for dt, (code, bits) in NUMPY_DTYPES.items():
            with self.subTest(dtype=dt.__name__):
                t = arange((2, 3), code, bits)
                a = np.from_dlpack(t)
                self.assertEqual(a.dtype, np.dtype(dt))
                self.assertEqual(a.shape, (2, 3))
                np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3).astype(dt))
                self.assertEqual(a.ctypes.data, t.data_ptr, "zero-copy: same address")
                if NP_VERSION < (2, 0):
                    self.assertFalse(a.flags.writeable, "NumPy 1.x imports are read-only")
                self.assertTrue(go_set(t, 5, 1, 2))
                self.assertEqual(a[1, 2], 5, "a write from Go shows in NumPy")
                del a

    def test_0d_and_empty(self):
        t = arange(())
        a = np.from_dlpack(t)
        self.assertEqual(a.shape, ())
        self.assertEqual(a[()], 0.0)
        self.assertEqual(a.ctypes.data, t.data_ptr)
        for shape in [(0,), (3, 0), (0, 2, 5)]:
            with self.subTest(shape=shape):
                a = np.from_dlpack(arange(shape))
                self.assertEqual(a.shape, shape)
                self.assertEqual(a.size, 0)

    def test_strided_views_share(self):
        base = arange((4, 6))
        ref = np.arange(24.0).reshape(4, 6)
        cases = [
            ("transpose", go_view(C.dlpackgo_test_transpose, base), ref.T),
            ("step2", go_view(C.dlpackgo_test_slice, base, 1, 0, 6, 2), ref[:, ::2]),
            ("offset", go_view(C.dlpackgo_test_slice, base, 0, 1, 3, 1), ref[1:3]),
            ("offset-step", go_view(C.dlpackgo_test_slice, base, 1, 1, 6, 3), ref[:, 1::3]),
        ]
        for name, t, want in cases:
            with self.subTest(view=name):
                a = np.from_dlpack(t)
                np.testing.assert_array_equal(a, want)
                self.assertEqual(tuple(s // 8 for s in a.strides), t.element_strides, "strides in elements")
                self.assertEqual(a.strides, t.strides, "strides in bytes, as NumPy counts them")
                self.assertEqual(a.ctypes.data, t.data_ptr, "offset folded into data, shared")
                self.assertTrue(go_set(t, -1, 0, 1))
                self.assertEqual(a[0, 1], -1)
                go_set(t, want[0, 1] if name != "transpose" else ref[1, 0], 0, 1)

    def test_negative_strides_copied(self):
        base = arange((3, 4))
        ref = np.arange(12.0).reshape(3, 4)
        for axis, want in [(0, ref[::-1]), (1, ref[:, ::-1])]:
            with self.subTest(axis=axis):
                r = go_view(C.dlpackgo_test_reverse, base, axis)
                a = np.from_dlpack(r)
                np.testing.assert_array_equal(a, want)
                self.assertNotEqual(a.ctypes.data, r.data_ptr, "a copy, not the reversed memory")
                self.assertTrue(all(s >= 0 for s in a.strides))
                go_set(r, 100, 0, 0)
                self.assertEqual(a[0, 0], want[0, 0], "the copy does not see later Go writes")
                go_set(r, want[0, 0], 0, 0)
                with self.assertRaises(BufferError):
                    r.__dlpack__(copy=False)

    def test_read_only_go_tensor_copied_for_legacy(self):
        t = arange((5,))
        ro = go_view(C.dlpackgo_test_readonly, t)
        a = np.from_dlpack(ro)
        np.testing.assert_array_equal(a, np.arange(5.0))
        self.assertNotEqual(a.ctypes.data, ro.data_ptr)
        with self.assertRaises(BufferError):
            ro.__dlpack__(copy=False)
        b = np.from_dlpack(go_view(C.dlpackgo_test_broadcast, go_view(C.dlpackgo_test_slice, t, 0, 0, 1, 1), 2, int64s([3, 4])))
        np.testing.assert_array_equal(b, np.zeros((3, 4)))

    def test_unsupported_dtypes_raise(self):
        if NP_VERSION >= (1, 25):
            self.skipTest("NumPy >= 1.25 imports bool")  # the test is about 1.24's refusal
        for code, bits in [(BOOL, 8), (BFLOAT, 16)]:
            with self.subTest(code=code):
                t = arange((3,), code, bits)
                with self.assertRaises((BufferError, RuntimeError, TypeError)) as cm:
                    np.from_dlpack(t)
                self.assertNotIsInstance(cm.exception, SystemError,
                                         "the consumer's own exception survives the capsule destructor")

    def test_lifetime_go_memory(self):
        t = arange((1000,))
        a = np.from_dlpack(t)
        self.assertEqual(LIB.live_exports(), self.exports + 1)
        t.release()
        for _ in range(3):
            LIB.collect()
            junk = [np.ones(1000) for _ in range(100)]
            del junk
        np.testing.assert_array_equal(a, np.arange(1000.0), "Go memory valid while NumPy holds it")
        del a
        eventually(lambda: LIB.live_exports() == self.exports, "NumPy freed, Go released the export")

    def test_lifetime_foreign_memory(self):
        freed = C.dlpackgo_test_foreign_released()
        t = LIB.tensor(C.dlpackgo_test_foreign(64))
        a = np.from_dlpack(t)
        t.release()
        for _ in range(5):
            LIB.collect()
            time.sleep(0.005)
        self.assertEqual(C.dlpackgo_test_foreign_released(), freed, "freed under a live NumPy array")
        np.testing.assert_array_equal(a, np.arange(64.0))
        del a
        eventually(lambda: C.dlpackgo_test_foreign_released() == freed + 1, "foreign memory freed after NumPy")

    def test_protocol_arguments(self):
        t = arange((4,))
        self.assertEqual(t.__dlpack_device__(), (dlpackgo.CPU, 0))
        cap = t.__dlpack__(dl_device=(1, 0), stream=None, copy=None)
        self.assertTrue(_is_valid(cap, b"dltensor"))
        del cap
        with self.assertRaises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        with self.assertRaises(BufferError):
            t.__dlpack__(stream=1)
        with self.assertRaises(ValueError):
            t.__dlpack__(copy="yes")
        self.assertTrue(_is_valid(t.__dlpack__(max_version=(0, 8)), b"dltensor"))
        self.assertTrue(_is_valid(t.__dlpack__(max_version=(1, 0)), b"dltensor_versioned"))
        self.assertTrue(_is_valid(t.__dlpack__(max_version=(2, 0)), b"dltensor_versioned"))

    def test_copy_true(self):
        t = arange((3, 3))

        class Copying:  # a consumer that asks for a copy, as NumPy 1.24 cannot
            def __dlpack__(self, **kw):
                return t.__dlpack__(copy=True)

            def __dlpack_device__(self):
                return t.__dlpack_device__()

        a = np.from_dlpack(Copying())
        np.testing.assert_array_equal(a, np.arange(9.0).reshape(3, 3))
        self.assertNotEqual(a.ctypes.data, t.data_ptr)

    def test_unconsumed_capsules_are_freed(self):
        t = arange((8,))
        for kw in [{}, {"max_version": (1, 3)}]:
            cap = t.__dlpack__(**kw)
            self.assertEqual(LIB.live_exports(), self.exports + 1)
            del cap
            self.assertEqual(LIB.live_exports(), self.exports, "the destructor ran the deleter")

    def test_released_tensor(self):
        t = arange((2,))
        t.release()
        t.release()  # idempotent
        with self.assertRaises(ValueError):
            t.__dlpack__()
        with self.assertRaises(ValueError):
            np.from_dlpack(t)
        with self.assertRaises(ValueError):
            LIB.tensor(0)


# -- the fast path: capsules made in the library's C code, without entering Go ----------------

class Sharer(Base):
    def test_every_export_shares_one_memory(self):
        t = arange((2, 3))
        arrays = [np.from_dlpack(t) for _ in range(5)]
        arrays += [torch.from_dlpack(t) for _ in range(3)]
        self.assertEqual(LIB.live_exports(), self.exports + 8)
        ptrs = {a.ctypes.data if isinstance(a, np.ndarray) else a.data_ptr() for a in arrays}
        self.assertEqual(ptrs, {t.data_ptr}, "every array is a view of the Go memory")
        arrays[-1][1, 2] = -7  # torch writes, NumPy and Go see it
        self.assertEqual(arrays[1][1, 2], -7)
        self.assertEqual(go_get(t, 1, 2), -7)
        del arrays
        self.assertEqual(LIB.live_exports(), self.exports, "each deleter ran once, in C")

    def test_memory_outlives_tensor_and_sharer(self):
        t = arange((1000,))
        a = np.from_dlpack(t)
        share = t._share
        self.assertTrue(callable(share), "a shareable tensor got a sharer")
        cap = share(True)  # the builtin itself: a versioned capsule
        self.assertTrue(_is_valid(cap, b"dltensor_versioned"))
        self.assertTrue(_is_valid(share(False), b"dltensor"))
        self.assertTrue(_is_valid(share(1), b"dltensor"), "only True asks for a versioned capsule")
        with self.assertRaises(TypeError):
            share()
        t.release()
        del share
        for _ in range(3):
            LIB.collect()
            junk = [np.ones(1000) for _ in range(100)]
            del junk
        np.testing.assert_array_equal(a, np.arange(1000.0), "memory valid while an array holds it")
        v = VersionedView(cap)
        self.assertEqual(v.f64(999).value, 999.0, "and while an unconsumed capsule holds it")
        self.assertEqual(LIB.live_exports(), self.exports + 2)
        del a
        v.delete()
        self.assertEqual(LIB.live_exports(), self.exports)
        del v, cap

    def test_not_shareable_tensors_have_no_sharer(self):
        base = arange((3, 4))
        for name, t in [("read-only", go_view(C.dlpackgo_test_readonly, base)),
                        ("reversed", go_view(C.dlpackgo_test_reverse, base, 1))]:
            with self.subTest(name):
                a = np.from_dlpack(t)
                self.assertIs(t._share, False)
                self.assertNotEqual(a.ctypes.data, t.data_ptr, "exported as a copy")
                with self.assertRaises(BufferError):
                    t.__dlpack__(copy=False)

    def test_copy_and_device_arguments_bypass_the_sharer(self):
        u = arange((4,))
        u.__dlpack__(copy=True)  # the capsule dies at once: its destructor frees the copy
        self.assertIsNone(u._share, "a copy makes no sharer")
        t = arange((4,))
        np.from_dlpack(t)
        self.assertTrue(callable(t._share))
        a = np.from_dlpack(_Asking(t, copy=True))
        self.assertNotEqual(a.ctypes.data, t.data_ptr, "copy=True copies")
        b = np.from_dlpack(_Asking(t, copy=False, dl_device=(dlpackgo.CPU, 0)))
        self.assertEqual(b.ctypes.data, t.data_ptr)
        with self.assertRaises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        with self.assertRaises((TypeError, ValueError, IndexError)):
            t.__dlpack__(dl_device="cpu")
        with self.assertRaises(ValueError):
            t.__dlpack__(copy="no")
        with self.assertRaises(BufferError):
            t.__dlpack__(stream=3)

    def test_release_during_copy_export(self):
        """A copy made by __dlpack__(copy=True) on one thread while another releases the tensor,
        which is the only holder of memory NumPy frees on release: the copy is right or refused
        (ValueError: released or unknown handle), never a fault or wrong values (Go holds what it copies)."""
        n = 1 << 18
        want = np.arange(n, dtype=np.float64)
        outcomes = {"copied": 0, "refused": 0}
        for _ in range(60):
            t = LIB.from_dlpack(np.arange(n, dtype=np.float64))  # t holds NumPy's only reference
            go = threading.Barrier(2)

            def release():
                go.wait()
                t.release()

            r = threading.Thread(target=release)
            r.start()
            go.wait()
            try:
                a = np.from_dlpack(_Asking(t, copy=True))
            except (ValueError, BufferError) as e:
                self.assertRegex(str(e), "released|unknown tensor handle")
                outcomes["refused"] += 1
            else:
                np.testing.assert_array_equal(a, want)
                outcomes["copied"] += 1
                del a
            r.join()
        self.assertEqual(outcomes["copied"] + outcomes["refused"], 60, outcomes)

    def test_deleters_on_other_threads(self):
        t = arange((64,))
        arrays = [np.from_dlpack(t) for _ in range(4000)]
        arrays += [torch.from_dlpack(t) for _ in range(1000)]
        t.release()

        def free(part):
            while part:
                part.pop()

        parts = [arrays[i::8] for i in range(8)]
        del arrays
        workers = [threading.Thread(target=free, args=(p,)) for p in parts]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        self.assertEqual(LIB.live_exports(), self.exports)


class Exit(unittest.TestCase):
    def test_interpreter_exits_cleanly_with_exports_alive(self):
        # NumPy arrays, torch tensors and unconsumed capsules over Go memory, sharers and a
        # reference cycle all live at exit: their deleters run during finalization, into Go
        script = """if True:
            import numpy as np, torch
            from test_dlpackgo import LIB, arange
            ts = [arange((100,)) for _ in range(20)]
            arrays = [np.from_dlpack(t) for t in ts for _ in range(3)]
            tensors = [torch.from_dlpack(t) for t in ts]
            capsules = [t.__dlpack__(max_version=(1, 3)) for t in ts[:5]]
            imported = [LIB.from_dlpack(np.ones(8)) for _ in range(5)]
            cycle = [ts[0]]
            cycle.append(cycle)
            del ts
            print("live exports", LIB.live_exports())
        """
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             timeout=120, cwd=os.path.dirname(os.path.abspath(__file__)))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "live exports 85", out.stderr)


class Loading(unittest.TestCase):
    def test_library_without_the_protocol_refused(self):
        with self.assertRaisesRegex(RuntimeError, "another version of the dlpackgo protocol"):
            dlpackgo.Library(ctypes.CDLL(None))  # the Python executable: no dlpackgo_abi


class _Asking:
    """A consumer's view of t that passes __dlpack__ arguments NumPy 1.24 cannot."""

    def __init__(self, t, **kw):
        self.t, self.kw = t, kw

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**self.kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


# -- Go to PyTorch -------------------------------------------------------------------------

class GoToTorch(Base):
    def test_every_dtype(self):
        for dt, (code, bits) in TORCH_DTYPES.items():
            with self.subTest(dtype=str(dt)):
                t = arange((2, 3), code, bits)
                x = torch.from_dlpack(t)
                self.assertEqual(x.dtype, dt)
                self.assertEqual(tuple(x.shape), (2, 3))
                self.assertTrue(torch.equal(x, torch.arange(6).reshape(2, 3).to(dt)))
                self.assertEqual(x.data_ptr(), t.data_ptr, "zero-copy: same address")
                x[1, 2] = 4
                self.assertEqual(go_get(t, 1, 2), 4, "a write from torch shows in Go")
                self.assertTrue(go_set(t, 3, 0, 1))
                self.assertEqual(x[0, 1].item(), 3, "a write from Go shows in torch")
                del x

    def test_strided_views_share(self):
        base = arange((4, 6))
        ref = torch.arange(24.0, dtype=torch.float64).reshape(4, 6)
        cases = [
            ("transpose", go_view(C.dlpackgo_test_transpose, base), ref.T),
            ("step2", go_view(C.dlpackgo_test_slice, base, 1, 0, 6, 2), ref[:, ::2]),
            ("offset", go_view(C.dlpackgo_test_slice, base, 0, 1, 3, 1), ref[1:3]),
            ("row", go_view(C.dlpackgo_test_slice, base, 0, 2, 3, 1), ref[2:3]),
        ]
        for name, t, want in cases:
            with self.subTest(view=name):
                x = torch.from_dlpack(t)
                self.assertTrue(torch.equal(x, want), f"{x} != {want}")
                self.assertEqual(x.data_ptr(), t.data_ptr, "byte offset folded into data")
                x[0, 1] = -7
                self.assertEqual(go_get(t, 0, 1), -7)
                x[0, 1] = want[0, 1]

    def test_size_one_dims(self):
        t = arange((3, 1, 4))
        x = torch.from_dlpack(t)
        self.assertTrue(torch.equal(x, torch.arange(12.0, dtype=torch.float64).reshape(3, 1, 4)))
        # a negative stride on a size-1 dimension is tidied, not copied
        r = go_view(C.dlpackgo_test_reverse, t, 1)
        y = torch.from_dlpack(r)
        self.assertEqual(y.data_ptr(), r.data_ptr)

    def test_negative_strides_never_reach_torch(self):
        base = arange((3, 4))
        ref = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
        r = go_view(C.dlpackgo_test_reverse, go_view(C.dlpackgo_test_reverse, base, 0), 1)
        x = torch.from_dlpack(r)  # torch 1.13 would abort the process on negative strides
        self.assertTrue(torch.equal(x, ref.flip(0).flip(1)))
        self.assertNotEqual(x.data_ptr(), r.data_ptr)
        e = go_view(C.dlpackgo_test_reverse, go_view(C.dlpackgo_test_slice, base, 1, 0, 0, 1), 0)
        self.assertEqual(tuple(torch.from_dlpack(e).shape), (3, 0))

    def test_0d_and_empty(self):
        x = torch.from_dlpack(arange(()))
        self.assertEqual(x.dim(), 0)
        self.assertEqual(x.item(), 0.0)
        for shape in [(0,), (3, 0)]:
            self.assertEqual(tuple(torch.from_dlpack(arange(shape)).shape), shape)

    def test_read_only_go_tensor_copied(self):
        t = arange((4,))
        ro = go_view(C.dlpackgo_test_readonly, t)
        x = torch.from_dlpack(ro)
        self.assertNotEqual(x.data_ptr(), ro.data_ptr)
        x[0] = 99
        self.assertEqual(go_get(t, 0), 0, "torch cannot write through a read-only Go tensor")

    def test_bool_refused_or_exact(self):
        # PyTorch 1.13 refuses bool; PyTorch 2.x imports it: either way, no crash, no wrong value
        t = arange((3,), BOOL, 8)
        try:
            x = torch.from_dlpack(t)
        except (RuntimeError, BufferError):
            self.assertLess(TORCH_VERSION, (2, 0), "only old PyTorch refuses bool")
            return
        self.assertEqual(x.dtype, torch.bool)
        self.assertEqual(x.tolist(), [go_get(t, i) != 0 for i in range(3)])

    def test_lifetime(self):
        t = arange((256,))
        x = torch.from_dlpack(t)
        t.release()
        LIB.collect()
        self.assertEqual(x.sum().item(), sum(range(256)))
        del x
        eventually(lambda: LIB.live_exports() == self.exports, "torch freed, Go released the export")


# -- NumPy to Go ---------------------------------------------------------------------------

class NumPyToGo(Base):
    def test_every_dtype(self):
        for dt, (code, bits) in NUMPY_DTYPES.items():
            with self.subTest(dtype=dt.__name__):
                a = np.arange(6).reshape(2, 3).astype(dt)
                g = LIB.from_dlpack(a)
                self.assertEqual(g.dl_dtype, (code, bits, 1))
                self.assertEqual(g.dtype, np.dtype(dt).name, "NumPy's name")
                self.assertEqual(g.shape, (2, 3))
                self.assertEqual(g.element_strides, (3, 1), "NULL strides from NumPy < 2.4 become C order")
                self.assertEqual(g.data_ptr, a.ctypes.data)
                self.assertEqual(go_sum(g), 15)
                a[1, 1] = 9
                self.assertEqual(go_get(g, 1, 1), 9, "a write from NumPy shows in Go")
                self.assertTrue(go_set(g, 7, 0, 2))
                self.assertEqual(a[0, 2], 7, "a write from Go shows in NumPy")
                g.release()

    def test_views(self):
        ref = np.arange(24.0).reshape(4, 6)
        for name, a in [("T", ref.T), ("step", ref[:, ::2]), ("offset", ref[1:, 2:]),
                        ("negative", ref[::-1, ::-2]), ("0-d", np.array(3.5)),
                        ("empty", np.zeros((0, 3))), ("size-1", ref[1:2])]:
            with self.subTest(view=name):
                g = LIB.from_dlpack(a)
                self.assertEqual(g.shape, a.shape)
                if a.size:
                    self.assertEqual(g.data_ptr, a.ctypes.data)
                    self.assertEqual(go_sum(g), a.sum())
                    idx = (0,) * a.ndim
                    self.assertEqual(go_get(g, *idx), a[idx])
                for i, n in enumerate(a.shape):
                    if n > 1 and a.size:
                        self.assertEqual(g.element_strides[i] * a.itemsize, a.strides[i])
                        self.assertEqual(g.strides[i], a.strides[i])
                g.release()

    def test_refusals_are_python_exceptions(self):
        # NumPy < 2 refuses to export bool (and, below, read-only and broadcast arrays); newer
        # NumPy exports them: either a Python exception or an exact import, never a crash
        try:
            g = LIB.from_dlpack(np.array([True, False, True]))
        except (BufferError, TypeError):
            self.assertLess(NP_VERSION, (2, 0), "only old NumPy refuses bool")
        else:
            self.assertEqual([go_get(g, i) for i in range(3)], [1, 0, 1])
            g.release()
        ro = np.arange(3.0)
        ro.setflags(write=False)
        g = LIB.from_dlpack(ro)  # read in C: a read-only tensor, whatever __dlpack__ says
        self.assertTrue(g.readonly)
        self.assertEqual(g.data_ptr, ro.ctypes.data)
        self.assertFalse(go_set(g, 1, 0), "Go refuses to write read-only memory")
        g.release()
        try:
            g = LIB.from_dlpack(np.broadcast_to(np.arange(3.0), (2, 3)))
        except BufferError:
            self.assertLess(NP_VERSION, (2, 1), "only old NumPy refuses read-only arrays")
        else:
            self.assertTrue(g.readonly)
            self.assertEqual([go_get(g, 1, j) for j in range(3)], [0, 1, 2])
            g.release()
        with self.assertRaises(TypeError):
            LIB.from_dlpack([1, 2, 3])
        with self.assertRaises(TypeError):
            LIB.from_capsule(object())

    def test_lifetime_explicit_release(self):
        a = np.arange(100.0)
        w = weakref.ref(a)
        g = LIB.from_dlpack(a)
        del a
        gc.collect()
        self.assertIsNotNone(w(), "Go holds the array")
        self.assertEqual(go_sum(g), 4950)
        g.release()
        gc.collect()
        self.assertIsNone(w(), "released: NumPy's deleter ran")

    def test_lifetime_released_by_go_gc_on_a_go_thread(self):
        a = np.arange(10.0)
        w = weakref.ref(a)
        g = LIB.from_dlpack(a)
        del a
        self.assertEqual(C.dlpackgo_test_drop_view(g.handle), 0)
        g.release()
        gc.collect()
        self.assertIsNotNone(w(), "an unreleased Go view still holds the array")
        # the view's cleanup runs NumPy's deleter from a Go thread, under the GIL guard
        eventually(lambda: w() is None, "the Go collector let go of the NumPy array")

    def test_round_trip_back_to_numpy(self):
        a = np.arange(12.0).reshape(3, 4)
        g = LIB.from_dlpack(a)
        b = np.from_dlpack(g)
        self.assertEqual(b.ctypes.data, a.ctypes.data, "NumPy -> Go -> NumPy shares memory")
        a[2, 3] = -1
        self.assertEqual(b[2, 3], -1)
        g.release()
        del a
        gc.collect()
        self.assertEqual(b[2, 3], -1, "b keeps the memory alive through Go")


# -- PyTorch to Go -------------------------------------------------------------------------

class TorchToGo(Base):
    def test_every_dtype(self):
        for dt, (code, bits) in TORCH_DTYPES.items():
            with self.subTest(dtype=str(dt)):
                x = torch.arange(6).reshape(2, 3).to(dt)
                g = LIB.from_dlpack(x)
                self.assertEqual(g.dl_dtype, (code, bits, 1))
                self.assertEqual(g.dtype, str(dt).split(".")[1], "torch's name, NumPy's where both have it")
                self.assertEqual(g.shape, (2, 3))
                self.assertEqual(g.data_ptr, x.data_ptr())
                self.assertEqual(go_sum(g), 15)
                x[1, 1] = 9
                self.assertEqual(go_get(g, 1, 1), 9)
                self.assertTrue(go_set(g, 7, 0, 2))
                self.assertEqual(x[0, 2].item(), 7)
                g.release()

    def test_views_and_storage_offset(self):
        ref = torch.arange(24.0).reshape(4, 6)
        for name, x in [("T", ref.T), ("step", ref[:, ::2]), ("offset", ref[1:, 2:]),
                        ("0-d", torch.tensor(2.5)), ("empty", torch.zeros(0, 3)), ("size-1", ref[1:2])]:
            with self.subTest(view=name):
                g = LIB.from_dlpack(x)
                self.assertEqual(g.shape, tuple(x.shape))
                if x.numel():
                    self.assertEqual(g.data_ptr, x.data_ptr(), "storage offset reaches Go")
                    self.assertEqual(go_sum(g), x.sum().item())
                g.release()

    def test_refusals_are_python_exceptions(self):
        try:
            g = LIB.from_dlpack(torch.tensor([True, False, True]))
        except (RuntimeError, BufferError):
            self.assertLess(TORCH_VERSION, (2, 0), "only old PyTorch refuses bool")
        else:
            self.assertEqual([go_get(g, i) for i in range(3)], [1, 0, 1])
            g.release()
        # a tensor that requires grad, which torch's __dlpack__ refuses and torch's C exchange API
        # (PyTorch >= 2.10) exports writable, comes in the same way on every path: detached,
        # read-only, its memory shared (test_readonly.py: Go functions that write it fail)
        x = torch.ones(3, requires_grad=True)
        for via in (None, "dlpack"):
            g = LIB.from_dlpack(x, via=via)
            self.assertTrue(g.readonly)
            self.assertEqual(g.data_ptr, x.data_ptr())
            g.release()
        with self.assertRaisesRegex(BufferError, "read-only"):
            LIB.from_dlpack(x, via="api")

    def test_storage_outlives_tensor(self):
        x = torch.arange(1000, dtype=torch.float64)
        g = LIB.from_dlpack(x)
        del x
        gc.collect()
        junk = [torch.ones(1000, dtype=torch.float64) for _ in range(100)]
        del junk
        self.assertEqual(go_sum(g), sum(range(1000)), "torch's storage kept alive by Go")
        g.release()

    def test_go_torch_go(self):
        t = arange((2, 5))
        x = torch.from_dlpack(t)
        g = LIB.from_dlpack(x)
        self.assertEqual(g.data_ptr, t.data_ptr, "Go -> torch -> Go is the same memory")
        go_set(g, 42, 1, 4)
        self.assertEqual(go_get(t, 1, 4), 42)
        del x
        t.release()
        LIB.collect()
        self.assertEqual(go_get(g, 1, 4), 42)
        g.release()


# -- the versioned protocol, with consumers and producers written in Python --------------

class Versioned(Base):
    def test_consumer_parses_struct(self):
        t = arange((3, 4))
        v = VersionedView(t.__dlpack__(max_version=(1, 3)))
        self.assertEqual(v.version, (1, 3))
        self.assertEqual(v.flags, 0)
        self.assertEqual(v.shape, (3, 4))
        self.assertEqual(v.strides, (4, 1))
        self.assertEqual(v.dtype, (FLOAT, 64, 1))
        self.assertEqual(v.device, (1, 0))
        self.assertEqual(v.byte_offset, 0)
        self.assertEqual(v.data, t.data_ptr)
        self.assertEqual(v.f64(2, 3).value, 11)
        v.f64(1, 2).value = -3
        self.assertEqual(go_get(t, 1, 2), -3, "a write through the capsule shows in Go")
        self.assertEqual(LIB.live_exports(), self.exports + 1)
        v.delete()
        self.assertEqual(LIB.live_exports(), self.exports)

    def test_flags_and_strides(self):
        base = arange((3, 4))
        row = go_view(C.dlpackgo_test_slice, base, 0, 1, 2, 1)
        cases = [
            ("transpose", go_view(C.dlpackgo_test_transpose, base), 0, (1, 4), True),
            ("read-only", go_view(C.dlpackgo_test_readonly, base), dlpackgo.FLAG_IS_COPIED, (4, 1), False),
            ("broadcast", go_view(C.dlpackgo_test_broadcast, row, 2, int64s([2, 4])),
             dlpackgo.FLAG_IS_COPIED, (4, 1), False),
            ("reversed", go_view(C.dlpackgo_test_reverse, base, 1), dlpackgo.FLAG_IS_COPIED, (4, 1), False),
        ]
        for name, t, flags, strides, shared in cases:
            with self.subTest(view=name):
                v = VersionedView(t.__dlpack__(max_version=(1, 3)))
                self.assertEqual(v.flags, flags)
                self.assertEqual(v.strides, strides)
                self.assertEqual(v.data == t.data_ptr, shared)
                for i in range(v.shape[0]):
                    for j in range(v.shape[1]):
                        self.assertEqual(v.f64(i, j).value, go_get(t, i, j))
                v.delete()
        r = cases[-1][1]
        with self.assertRaises(BufferError):
            r.__dlpack__(max_version=(1, 3), copy=False)
        v = VersionedView(base.__dlpack__(max_version=(1, 3), copy=True))
        self.assertEqual(v.flags, dlpackgo.FLAG_IS_COPIED)
        self.assertNotEqual(v.data, base.data_ptr)
        v.delete()

    def test_producer_to_go(self):
        p = PyProducer(np.arange(6.0).reshape(2, 3))
        g = LIB.from_dlpack(p)
        self.assertEqual(g.data_ptr, p.array.ctypes.data)
        self.assertFalse(g.readonly)
        self.assertTrue(go_set(g, 8, 1, 0))
        self.assertEqual(p.array[1, 0], 8)
        self.assertEqual(p.deleted, 0)
        g.release()
        self.assertEqual(p.deleted, 1, "the deleter ran exactly once")
        LIB.collect()
        self.assertEqual(p.deleted, 1)

    def test_legacy_producer_fallback(self):
        p = PyProducer(np.arange(4.0), versioned=False)
        g = LIB.from_dlpack(p)  # max_version raises TypeError: asked again without it
        self.assertEqual(go_sum(g), 6)
        g.release()
        self.assertEqual(p.deleted, 1)

    def test_read_only_producer(self):
        p = PyProducer(np.arange(3.0), flags=dlpackgo.FLAG_READ_ONLY)
        g = LIB.from_dlpack(p)
        self.assertTrue(g.readonly)
        self.assertFalse(go_set(g, 1, 0), "Go refuses to write read-only memory")
        self.assertEqual(go_sum(g), 3)
        g.release()
        self.assertEqual(p.deleted, 1)

    def test_bad_producers_refused_and_deleted_once(self):
        # refused when taken, in C (dlpack_validate.h, core.ValidateDLTensor's rules), naming why
        for name, kw, why in [("major 2", {"major": 2}, "version"), ("ndim -1", {"ndim": -1}, "ndim"),
                              ("ndim 65", {"ndim": 65}, "ndim"), ("dtype code 99", {"code": 99}, "dtype.code")]:
            with self.subTest(name):
                p = PyProducer(np.arange(3.0), **kw)
                with self.assertRaises(BufferError) as cm:
                    LIB.from_dlpack(p)
                self.assertIn("dlpackgo: the producer's tensor is invalid: ", str(cm.exception))
                self.assertIn(why, str(cm.exception))
                self.assertEqual(p.deleted, 1)

    def test_used_capsule_refused(self):
        p = PyProducer(np.arange(3.0))
        cap = p.__dlpack__(max_version=(1, 3))
        LIB.from_capsule(cap).release()
        with self.assertRaises(TypeError):
            LIB.from_capsule(cap)
        self.assertEqual(p.deleted, 1)


if __name__ == "__main__":
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, torch {torch.__version__}")
    unittest.main(verbosity=2)
