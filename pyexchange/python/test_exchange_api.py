"""Tests of dlpackgo's DLPack 1.3 C exchange API, against xharness (xharness/xharness.c), a C
extension that plays a framework on both sides: it consumes dlpackgo.Tensor's
__dlpack_c_exchange_api__ (producer tests) and publishes tables of its own, of several versions,
that Library.from_dlpack consumes (consumer tests).

Run by the Go test TestExchangeAPIPython in pyexchange, which builds the test library and
the harness (gcc with the python3-dev headers) and points DLPACKGO_TESTLIB and XHARNESS_DIR at
them:

    DLPACKGO_TESTLIB=/path/lib.so XHARNESS_DIR=/dir/of/xharness python3 -m unittest -v test_exchange_api
"""

import ctypes
import gc
import os
import sys
import unittest
from ctypes import POINTER, Structure, c_char_p, c_int32, c_uint32, c_uint64, c_void_p, py_object

sys.path.insert(0, os.environ.get("XHARNESS_DIR", ""))
import xharness  # noqa: E402  (built at test time; a missing one fails loudly)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import dlpackgo  # noqa: E402
from test_dlpackgo import (BOOL, BFLOAT, C, COMPLEX, FLOAT, INT, LIB, UINT, arange, eventually,  # noqa: E402
                           go_get, go_set, go_sum, go_view, int64s)

HT = xharness.HTensor
INT_FLOAT = [(INT, 8), (INT, 16), (INT, 32), (INT, 64), (UINT, 8), (UINT, 16), (UINT, 32), (UINT, 64),
             (FLOAT, 32), (FLOAT, 64)]
OTHER = [(FLOAT, 16), (BFLOAT, 16), (COMPLEX, 64), (COMPLEX, 128), (BOOL, 8)]
READ_ONLY, IS_COPIED = dlpackgo.FLAG_READ_ONLY, dlpackgo.FLAG_IS_COPIED


class HTv2(HT):
    __dlpack_c_exchange_api__ = xharness.api_capsule("2.0")


class HTv12(HT):
    __dlpack_c_exchange_api__ = xharness.api_capsule("1.2")


class HTchain(HT):
    __dlpack_c_exchange_api__ = xharness.api_capsule("2.0-chain")


class HTbadname(HT):
    __dlpack_c_exchange_api__ = xharness.api_capsule("bad-name")


class HTnotcapsule(HT):
    __dlpack_c_exchange_api__ = 5


class HTnoview(HT):
    __dlpack_c_exchange_api__ = xharness.api_capsule("1.4-noview")


class Header(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32), ("prev_api", c_void_p)]


class ExchangeAPI(Structure):
    _fields_ = [("header", Header), ("allocator", c_void_p), ("from_py", c_void_p), ("to_py", c_void_p),
                ("dltensor_from_py", c_void_p), ("stream", c_void_p)]


_get_pointer = ctypes.PYFUNCTYPE(c_void_p, py_object, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_new = ctypes.PYFUNCTYPE(py_object, c_void_p, c_void_p, c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_NAME = ctypes.create_string_buffer(b"dlpack_exchange_api")  # outlives the capsules made with it


def api_table(cls):
    return ExchangeAPI.from_address(_get_pointer(cls.__dlpack_c_exchange_api__, b"dlpack_exchange_api"))


# A table of version 1.3 without its required functions: a broken producer.
_HOLLOW = ExchangeAPI(Header(1, 3, None))


class HThollow(HT):
    __dlpack_c_exchange_api__ = _capsule_new(ctypes.addressof(_HOLLOW), ctypes.addressof(_NAME), None)


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device_type", c_int32), ("device_id", c_int32), ("ndim", c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", POINTER(ctypes.c_int64)), ("strides", POINTER(ctypes.c_int64)),
                ("byte_offset", c_uint64)]


class Managed(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32), ("ctx", c_void_p), ("deleter", c_void_p),
                ("flags", c_uint64), ("dl", DLTensor)]


def capsule_view(t):
    """What t.__dlpack__(max_version=(1, 3)) exports: (data, shape, strides, dtype, flags, version);
    the capsule is dropped unused, so its destructor runs the deleter."""
    cap = t.__dlpack__(max_version=(1, 3))
    m = Managed.from_address(_get_pointer(cap, b"dltensor_versioned"))
    d = m.dl
    out = (d.data, tuple(d.shape[i] for i in range(d.ndim)), tuple(d.strides[i] for i in range(d.ndim)),
           (d.code, d.bits, d.lanes), m.flags, (m.major, m.minor))
    del cap
    return out


def api_view(h):
    return (h.data_ptr, h.shape, h.strides, h.dtype, h.flags, h.version)


class Base(unittest.TestCase):
    def setUp(self):
        gc.collect()
        LIB.collect()
        self.base = (LIB.live_exports(), LIB.live_handles(), LIB.live_foreign())
        c = xharness.counts()
        self.hbase = c["made"] - c["deleted"]
        self.counts = LIB.exchange_counts()

    def tearDown(self):
        def settled():
            c = xharness.counts()
            return ((LIB.live_exports(), LIB.live_handles(), LIB.live_foreign()) == self.base
                    and c["made"] - c["deleted"] == self.hbase and LIB.exchange_counts()["live_allocs"] == 0)
        eventually(settled, "live counts of dlpackgo and the harness back to baseline")
        self.assertEqual(xharness.counts()["double_deletes"], 0, "a deleter ran twice")
        xharness.purge()

    def delta(self, key):
        return LIB.exchange_counts()[key] - self.counts[key]


# -- dlpackgo.Tensor's API, consumed by the harness ------------------------------------------

class TestProducer(Base):
    def test_table(self):
        cap = dlpackgo.Tensor.__dlpack_c_exchange_api__
        self.assertIn('"dlpack_exchange_api"', repr(cap))
        api = api_table(dlpackgo.Tensor)
        self.assertEqual((api.header.major, api.header.minor), (1, 3))
        self.assertIsNone(api.header.prev_api)
        for f in ("allocator", "from_py", "to_py", "dltensor_from_py", "stream"):
            self.assertTrue(getattr(api, f), f)
        # a type attribute, the same capsule for every tensor
        self.assertIs(arange((2,)).__dlpack_c_exchange_api__, cap)

    def test_dtypes_zero_copy(self):
        for code, bits in INT_FLOAT + OTHER:
            with self.subTest(code=code, bits=bits):
                t = arange((2, 3), code, bits)
                h = xharness.consume(t)
                self.assertEqual(api_view(h), capsule_view(t), "the API exports what __dlpack__ does")
                self.assertEqual(h.data_ptr, t.data_ptr)
                self.assertEqual((h.shape, h.strides, h.dtype, h.flags, h.version, h.device),
                                 ((2, 3), (3, 1), (code, bits, 1), 0, (1, 3), (1, 0)))
                if (code, bits) in INT_FLOAT:
                    self.assertEqual([h.get(i, j) for i in range(2) for j in range(3)], [0, 1, 2, 3, 4, 5])
                h.release()
        self.assertGreaterEqual(self.delta("export_api"), len(INT_FLOAT + OTHER))

    def test_strides_0d_empty(self):
        t = arange((3, 4))
        cases = {
            "transpose": go_view(C.dlpackgo_test_transpose, t),
            "step": go_view(C.dlpackgo_test_slice, t, 1, 0, 4, 2),
            "offset": go_view(C.dlpackgo_test_slice, t, 0, 1, 3, 1),
            "0-d": arange(()),
            "empty": arange((0, 5)),
            "empty-1": arange((3, 0)),
        }
        for name, v in cases.items():
            with self.subTest(name):
                h = xharness.consume(v)
                self.assertEqual(api_view(h), capsule_view(v))
                self.assertEqual(h.shape, v.shape)
                self.assertEqual(h.strides, v.element_strides)
                self.assertEqual(h.flags, 0)
                if 0 not in v.shape:
                    self.assertEqual(h.data_ptr, v.data_ptr)
                    idx = (0,) * len(v.shape)
                    self.assertEqual(h.get(*idx), go_get(v, *idx))
                h.release()

    def test_copies_like_dlpack(self):
        t = arange((2, 3))
        ro = go_view(C.dlpackgo_test_readonly, t)
        rev = go_view(C.dlpackgo_test_reverse, t, 1)
        for name, v in {"read-only": ro, "reversed": rev}.items():
            with self.subTest(name):
                h = xharness.consume(v)
                data, shape, strides, dtype, flags, version = capsule_view(v)
                self.assertEqual((h.shape, h.strides, h.dtype, h.flags, h.version),
                                 (shape, strides, dtype, flags, version))
                self.assertEqual(h.flags, IS_COPIED)
                self.assertNotEqual(h.data_ptr, t.data_ptr)
                self.assertEqual([h.get(0, j) for j in range(3)], [go_get(v, 0, j) for j in range(3)])
                h.set(99, 0, 0)  # the copy is the consumer's own
                self.assertNotEqual(go_get(v, 0, 0), 99)
                h.release()
                with self.assertRaisesRegex(BufferError, "only as a copy"):
                    xharness.view(v)

    def test_mutation_visible(self):
        t = arange((2, 3))
        h = xharness.consume(t)
        h.set(42, 1, 2)
        self.assertEqual(go_get(t, 1, 2), 42)
        self.assertTrue(go_set(t, -7, 0, 1))
        self.assertEqual(h.get(0, 1), -7)

    def test_lifetime(self):
        t = arange((1000,))
        total = go_sum(t)
        h = xharness.consume(t)
        h2 = xharness.consume(t)
        t.release()
        del t
        gc.collect()
        LIB.collect()
        self.assertEqual(sum(h.get(i) for i in range(1000)), total, "the consumer's tensor outlives the handle")
        self.assertGreaterEqual(LIB.live_exports() - self.base[0], 2)
        h.release()
        h.release()  # idempotent on the harness side: our deleter ran once
        self.assertEqual(h2.get(999), 999)
        del h2

    def test_view(self):
        t = arange((3, 4))
        v = go_view(C.dlpackgo_test_transpose, t)
        data, shape, strides, dtype, device, offset, s = xharness.view(v)
        self.assertEqual((data, shape, strides, dtype, device, offset), (t.data_ptr, (4, 3), (1, 4), (FLOAT, 64, 1), (1, 0), 0))
        self.assertEqual(s, go_sum(t))
        self.assertEqual(self.delta("view_api"), 1)
        self.assertEqual(LIB.live_exports(), self.base[0], "no export per view (the sharer's template is not counted)")

    def test_errors(self):
        t = arange((2,))
        t.release()
        with self.assertRaisesRegex(ValueError, "released"):
            xharness.consume(t)
        with self.assertRaisesRegex(ValueError, "released"):
            xharness.view(t)
        for stranger in (object(), 3, xharness.make(FLOAT, 64, 1, (2,)), None):
            with self.subTest(stranger=type(stranger).__name__):
                with self.assertRaisesRegex(TypeError, "another type"):
                    xharness.consume_as(dlpackgo.Tensor, stranger)
        for junk in (True, len, print, 7, "x"):  # a _share someone tampered with: an error, no crash
            with self.subTest(junk=junk):
                u = arange((2,))
                u._share = junk
                with self.assertRaises((TypeError, ValueError, SystemError)):
                    xharness.consume(u)
                with self.assertRaises((TypeError, ValueError, SystemError)):
                    xharness.view(u)
                u._share = None
                xharness.consume(u).release()  # made afresh, in Go
        self.assertEqual(xharness.stream(dlpackgo.Tensor, 1, 0), 0)
        self.assertEqual(xharness.stream(dlpackgo.Tensor, 2, 0), 0)

    def test_allocator(self):
        for shape in [(2, 3), (), (0, 4), (5,)]:
            with self.subTest(shape=shape):
                h = xharness.alloc(dlpackgo.Tensor, shape, FLOAT, 64, 1)
                self.assertEqual((h.shape, h.dtype, h.flags, h.version, h.device), (shape, (FLOAT, 64, 1), 0, (1, 3), (1, 0)))
                self.assertEqual(h.data_ptr % 256, 0)
                self.assertEqual(LIB.exchange_counts()["live_allocs"], 1)
                n = 1
                for d in shape:
                    n *= d
                idxs = [()] if shape == () else [(i, j) for i in range(shape[0]) for j in range(shape[1])] if len(shape) == 2 else [(i,) for i in range(n)]
                if n:
                    for k, idx in enumerate(idxs):
                        self.assertEqual(h.get(*idx), 0, "allocated memory is zeroed")
                        h.set(k + 0.5, *idx)
                ptr = h.data_ptr
                g = xharness.to_py(dlpackgo.Tensor, h)  # the consumer filled it; Go adopts it
                self.assertIsInstance(g, dlpackgo.Tensor)
                self.assertEqual((g.shape, g.data_ptr if n else ptr), (shape, ptr))
                for k, idx in enumerate(idxs[:n]):
                    self.assertEqual(go_get(g, *idx), k + 0.5)
                g.release()
                eventually(lambda: LIB.exchange_counts()["live_allocs"] == 0, "allocation freed")
        self.assertEqual(self.delta("allocs"), 4)
        self.assertEqual(self.delta("to_py"), 4)
        sub = xharness.alloc(dlpackgo.Tensor, (7,), 17, 4, 1)  # float4: packed, 4 bytes
        self.assertEqual(sub.dtype, (17, 4, 1))
        del sub

    def test_allocator_errors(self):
        cases = [
            ((2, 2), (FLOAT, 64, 1, 2), BufferError, "CPU only"),
            ((2, -1), (FLOAT, 64, 1), ValueError, "negative"),
            ((1 << 40, 1 << 40), (FLOAT, 64, 1), ValueError, "too large"),
            ((1 << 23, 1 << 23), (FLOAT, 64, 1), MemoryError, "too large"),
            ((1,) * 65, (FLOAT, 64, 1), ValueError, "ndim 65"),
            ((), (FLOAT, 64, 1, 1, 2), ValueError, "ndim 2"),  # ndim 2 with a NULL shape
            ((2,), (FLOAT, 0, 1), ValueError, "dtype"),
            ((2,), (FLOAT, 64, 0), ValueError, "dtype"),
            ((2,), (99, 8, 1), ValueError, "dtype"),
        ]
        for shape, args, exc, msg in cases:
            with self.subTest(shape=shape[:3], args=args):
                with self.assertRaisesRegex(exc, msg):  # set_error called exactly once (xharness checks)
                    xharness.alloc(dlpackgo.Tensor, shape, *args)
        self.assertEqual(LIB.exchange_counts()["live_allocs"], 0)

    def test_to_py_refuses_other_major(self):
        before = xharness.counts()
        with self.assertRaisesRegex(BufferError, "major"):
            xharness.to_py_raw(dlpackgo.Tensor, 2)
        after = xharness.counts()
        self.assertEqual(after["deleted"] - before["deleted"], 1, "the stolen tensor's deleter ran once")
        g = xharness.to_py_raw(dlpackgo.Tensor, 1)
        self.assertEqual((g.shape, g.dl_dtype), ((3,), (FLOAT, 64, 1)))

    def test_to_py_wrong_major_from_harness_type(self):
        # the harness as producer refuses a managed tensor of major 2 the same way
        with self.assertRaisesRegex(BufferError, "major"):
            xharness.to_py_raw(HT, 2)


# -- Library.from_dlpack consuming the harness's API ------------------------------------------

class TestConsumer(Base):
    def test_dtypes_zero_copy(self):
        for code, bits in INT_FLOAT + OTHER:
            with self.subTest(code=code, bits=bits):
                h = xharness.make(code, bits, 1, (2, 3))
                g = LIB.from_dlpack(h)
                self.assertEqual((g.data_ptr, g.shape, g.element_strides, g.dl_dtype, g.flags),
                                 (h.data_ptr, (2, 3), (3, 1), (code, bits, 1), 0))
                if (code, bits) in INT_FLOAT:
                    self.assertEqual(go_get(g, 1, 2), 5)
                    self.assertTrue(go_set(g, 9, 0, 1))
                    self.assertEqual(h.get(0, 1), 9)
                g.release()
        self.assertEqual(self.delta("import_api"), len(INT_FLOAT + OTHER))
        self.assertEqual(self.delta("import_fallback"), 0)

    def test_strides_0d_empty_readonly(self):
        cases = {
            "fortran": dict(shape=(3, 4), strides=(1, 3)),
            "step": dict(shape=(3, 2), strides=(4, 2)),
            "broadcast": dict(shape=(3, 4), strides=(0, 1)),
            "0-d": dict(shape=()),
            "empty": dict(shape=(0, 3)),
            "read-only": dict(shape=(4,), readonly=True),
        }
        for name, kw in cases.items():
            with self.subTest(name):
                h = xharness.make(FLOAT, 64, 1, **kw)
                g = LIB.from_dlpack(h)
                self.assertEqual(g.shape, h.shape)
                if 0 not in h.shape:
                    self.assertEqual(g.data_ptr, h.data_ptr)
                    if h.shape:
                        self.assertEqual(g.element_strides, h.strides)
                    idx = tuple(d - 1 for d in h.shape)
                    self.assertEqual(go_get(g, *idx), h.get(*idx))
                self.assertEqual(g.readonly, name == "read-only")
                if name == "read-only":
                    self.assertFalse(go_set(g, 1, 0), "Go refuses to write a read-only import")
                g.release()
        self.assertEqual(self.delta("import_api"), len(cases))

    def test_lifetime(self):
        h = xharness.make(FLOAT, 64, 1, (100,))
        made = xharness.counts()["made"]
        g = LIB.from_dlpack(h)
        del h  # the export holds the harness tensor
        gc.collect()
        self.assertEqual(go_get(g, 99), 99)
        c = xharness.counts()
        self.assertEqual(c["made"] - made, 1)
        deleted = c["deleted"]
        g2 = LIB.from_dlpack(g)  # Go to Go, through dlpackgo.Tensor's own API
        self.assertEqual(g2.data_ptr, g.data_ptr)
        g.release()
        gc.collect()
        LIB.collect()
        self.assertEqual(xharness.counts()["deleted"], deleted, "still held by the second Go tensor")
        g2.release()
        eventually(lambda: xharness.counts()["deleted"] == deleted + 2, "the harness's deleters ran, once each")

    def test_versions(self):
        for cls, ok in [(HT, True), (HTchain, True), (HTv2, False), (HTv12, False), (HTbadname, False),
                        (HTnotcapsule, False), (HThollow, False)]:
            with self.subTest(cls=cls.__name__):
                h = xharness.make(FLOAT, 64, 1, (3,), cls=cls)
                api, fb, calls = self.delta("import_api"), self.delta("import_fallback"), xharness.counts()["from_calls"]
                g = LIB.from_dlpack(h)  # either way zero-copy
                self.assertEqual(g.data_ptr, h.data_ptr)
                self.assertEqual(self.delta("import_api") - api, 1 if ok else 0)
                self.assertEqual(self.delta("import_fallback") - fb, 0 if ok else 1)
                self.assertEqual(xharness.counts()["from_calls"] - calls, 1 if ok else 0,
                                 "a table of a version not understood is never called")
                g.release()
                if ok:
                    LIB.from_dlpack(h, via="api").release()
                else:
                    with self.assertRaises((BufferError, TypeError)):
                        LIB.from_dlpack(h, via="api")
                g = LIB.from_dlpack(h, via="dlpack")
                self.assertEqual(g.data_ptr, h.data_ptr)
                g.release()

    def test_errors_through_the_api(self):
        h = xharness.make(FLOAT, 64, 1, (3,))
        h.fail = 1
        with self.assertRaisesRegex(BufferError, "refuses to be exported"):
            LIB.from_dlpack(h)
        h.fail = 2
        with self.assertRaisesRegex(BufferError, "without saying why"):
            LIB.from_dlpack(h)
        h.fail = 0
        h.release()
        with self.assertRaisesRegex(ValueError, "released"):
            LIB.from_dlpack(h)
        with self.assertRaisesRegex(TypeError, "has no __dlpack_c_exchange_api__"):
            LIB.from_dlpack(object(), via="api")
        with self.assertRaisesRegex(TypeError, "no __dlpack__"):
            LIB.from_dlpack(object())
        with self.assertRaisesRegex(ValueError, "via"):
            LIB.from_dlpack(h, via="capsule")

    def test_device_tensors_fall_back(self):
        # host memory labelled CUDA: Go never touches device memory, so nothing is read
        h = xharness.make(FLOAT, 64, 1, (4,), device_type=2)
        calls = xharness.counts()["from_calls"]
        g = LIB.from_dlpack(h)
        self.assertEqual(self.delta("import_fallback"), 1, "no stream sync in the API: __dlpack__ for devices")
        self.assertEqual(xharness.counts()["from_calls"] - calls, 1)
        self.assertEqual((g.data_ptr, g.__dlpack_device__()), (h.data_ptr, (2, 0)))
        g.release()
        g = LIB.from_dlpack(h, via="api")
        self.assertEqual(self.delta("import_api"), 1)
        self.assertEqual((g.data_ptr, g.__dlpack_device__()), (h.data_ptr, (2, 0)))
        back = LIB.to_framework(g, HT)  # and back to the framework, still on the device
        self.assertEqual((back.data_ptr, back.device, back.flags), (h.data_ptr, (2, 0), 0))
        del back
        g.release()
        self.assertEqual(LIB.current_work_stream(HT, (2, 0)), xharness.FAKE_STREAM)
        self.assertEqual(LIB.current_work_stream(HT, (1, 0)), 0)
        with self.assertRaises(BufferError):
            LIB.current_work_stream(HTv2, (2, 0))
        with self.assertRaisesRegex(ValueError, "out of 32 bits"):  # not device (2, 0)
            LIB.current_work_stream(HT, (2 + (1 << 32), 0))

    def test_to_framework(self):
        t = arange((2, 3))
        h = LIB.to_framework(t, HT)
        self.assertIsInstance(h, HT)
        self.assertEqual((h.data_ptr, h.shape, h.flags), (t.data_ptr, (2, 3), 0))
        h.set(5, 0, 0)
        self.assertEqual(go_get(t, 0, 0), 5)
        r = LIB.to_framework(go_view(C.dlpackgo_test_readonly, t), HT)
        self.assertEqual(r.flags, IS_COPIED)
        self.assertEqual(LIB.to_framework(t, HTchain).data_ptr, t.data_ptr)
        for bad in (HTv2, HTbadname, int):
            with self.assertRaises((BufferError, TypeError)):
                LIB.to_framework(t, bad)
        t.release()
        with self.assertRaisesRegex(ValueError, "released"):
            LIB.to_framework(t, HT)

    def test_allocate(self):
        """Library.allocate: Go tensors over a framework's allocations, filled by Go, handed back."""
        for cls in (HT, dlpackgo.Tensor, HTchain):
            with self.subTest(cls=cls.__name__):
                before = xharness.counts()["alloc_calls"]
                g = LIB.allocate(cls, (2, 3), (FLOAT, 64, 1))
                self.assertEqual((g.shape, g.element_strides, g.dl_dtype, g.__dlpack_device__()), ((2, 3), (3, 1), (FLOAT, 64, 1), (1, 0)))
                self.assertEqual(xharness.counts()["alloc_calls"] - before, 0 if cls is dlpackgo.Tensor else 1)
                self.assertTrue(go_set(g, 6.5, 1, 2))
                back = LIB.to_framework(g, HT)
                self.assertEqual((back.data_ptr, back.get(1, 2)), (g.data_ptr, 6.5))
                g.release()
                del back
        s = LIB.allocate(HT, (), (INT, 32, 1))
        self.assertEqual((s.shape, s.dl_dtype), ((), (INT, 32, 1)))
        s.release()
        for cls, shape, dtype, device, exc, msg in [
            (HT, (2, -1), (FLOAT, 64, 1), (1, 0), ValueError, "xharness: bad shape"),
            (HT, (2,), (FLOAT, 64, 1), (2, 0), ValueError, "CPU tensors"),
            (dlpackgo.Tensor, (2,), (FLOAT, 64, 1), (2, 0), BufferError, "CPU only"),
            (dlpackgo.Tensor, (1 << 23, 1 << 23), (FLOAT, 64, 1), (1, 0), MemoryError, "too large"),
            (HT, (1,) * 65, (FLOAT, 64, 1), (1, 0), ValueError, "bad ndim"),
            (HT, (2,), (FLOAT, 300, 1), (1, 0), ValueError, "bad ndim or dtype"),
            # a device out of 32 bits is refused, never truncated into another (the CPU here)
            (dlpackgo.Tensor, (2,), (FLOAT, 64, 1), (1 + (1 << 32), 0), ValueError, "out of 32 bits"),
            (dlpackgo.Tensor, (2,), (FLOAT, 64, 1), (1, 1 << 32), ValueError, "out of 32 bits"),
            (HTv2, (2,), (FLOAT, 64, 1), (1, 0), BufferError, "version"),
            (int, (2,), (FLOAT, 64, 1), (1, 0), TypeError, "no __dlpack_c_exchange_api__"),
        ]:
            with self.subTest(cls=cls.__name__, shape=shape[:3], device=device):
                with self.assertRaisesRegex(exc, msg):
                    LIB.allocate(cls, shape, dtype, device)

    def test_no_view_entry(self):
        h = xharness.make(FLOAT, 64, 1, (3,), cls=HTnoview)  # 1.4: a newer minor is fine; no view entry
        g = LIB.from_dlpack(h)
        self.assertEqual(self.delta("import_api"), 1)
        g.release()
        with self.assertRaises(NotImplementedError):
            xharness.view(h)


# -- the codes DLPack added after the v1.3 tag (the minor version still 3, the ABI unchanged) ---

TPU, TPU_HOST, ASCEND = 19, 20, 21  # kDLTPU, kDLTPUHost, kDLAscend
BCOMPLEX = 18                       # kDLBcomplex: two bfloat16, 32 bits


class TestAfterV13(Base):
    """Tensors with the post-1.3 codes cross dlpackgo both ways, by capsule and by the exchange
    API: TPUHost is host memory Go reads in place, TPU and Ascend are device memory Go describes
    and never reads, bcomplex32 is carried as it is; the values DLPack does not define are refused
    with the validator's message. NumPy and PyTorch know none of the four: they refuse Go's
    export of them with their own errors (DLPACK-FACTS.md), nothing is converted."""

    foreign = (RuntimeError, BufferError, TypeError)  # what NumPy and torch raise, by version

    def test_devices(self):
        for dev in (TPU, TPU_HOST, ASCEND):
            for via in (None, "dlpack", "api"):
                with self.subTest(device=dev, via=via):
                    h = xharness.make(FLOAT, 64, 1, (2, 3), device_type=dev)
                    g = LIB.from_dlpack(h, via=via)
                    self.assertEqual((g.data_ptr, g.__dlpack_device__(), g.shape, g.element_strides),
                                     (h.data_ptr, (dev, 0), (2, 3), (3, 1)), "zero-copy")
                    if dev == TPU_HOST:  # host-accessible: Go reads and writes it in place
                        self.assertTrue(go_set(g, 9, 0, 1))
                        self.assertEqual(ctypes.c_double.from_address(h.data_ptr + 8).value, 9.0)
                        self.assertEqual(go_get(g, 0, 1), 9)
                        self.assertEqual(LIB.total(h), 9.0 + sum(
                            ctypes.c_double.from_address(h.data_ptr + 8 * i).value for i in (0, 2, 3, 4, 5)))
                    else:  # device memory: never read
                        with self.assertRaises(IndexError):
                            go_get(g, 0, 1)
                        with self.assertRaisesRegex(dlpackgo.GoBufferError, "not in host memory"):
                            LIB.total(h)
                    back = LIB.to_framework(g, HT)  # Go -> the framework, through the API
                    self.assertEqual((back.data_ptr, back.device, back.dtype), (h.data_ptr, (dev, 0), (FLOAT, 64, 1)))
                    h2 = xharness.consume(g)  # and through the capsule
                    self.assertEqual((h2.data_ptr, h2.device), (h.data_ptr, (dev, 0)))
                    with self.assertRaises(self.foreign):
                        np.from_dlpack(g)
                    with self.assertRaises(self.foreign):
                        torch.from_dlpack(g)
                    h2.release()
                    back.release()
                    g.release()

    def test_bcomplex(self):
        for via in (None, "dlpack", "api"):
            with self.subTest(via=via):
                h = xharness.make(BCOMPLEX, 32, 1, (2, 3))
                g = LIB.from_dlpack(h, via=via)
                self.assertEqual((g.data_ptr, g.dl_dtype, g.dtype, g.element_strides),
                                 (h.data_ptr, (BCOMPLEX, 32, 1), "bcomplex32", (3, 1)))
                r = LIB.same(h, returns="tensor")  # a registered function's argument and result
                self.assertEqual((r.data_ptr, r.dl_dtype), (h.data_ptr, (BCOMPLEX, 32, 1)))
                back = LIB.to_framework(g, HT)
                self.assertEqual((back.data_ptr, back.dtype), (h.data_ptr, (BCOMPLEX, 32, 1)))
                h2 = xharness.consume(r)
                self.assertEqual((h2.data_ptr, h2.dtype), (h.data_ptr, (BCOMPLEX, 32, 1)))
                with self.assertRaises(self.foreign):
                    np.from_dlpack(g)
                with self.assertRaises(self.foreign):
                    torch.from_dlpack(g)
                for t in (h2, back, r, g):
                    t.release()
        self.assertEqual(dlpackgo.dtype_name(BCOMPLEX, 32), "bcomplex32")

    def test_undefined_codes_are_refused(self):
        cases = [
            ((FLOAT, 64, 1), dict(device_type=22), BufferError, "device_type is not a DLPack device",
             dlpackgo.GoValueError, "device_type = 22 is not a DLPack device"),
            ((BCOMPLEX, 16, 1), {}, BufferError, "dtype.bits is not valid for its code",
             dlpackgo.GoTypeError, "dtype.bits = 16 is not valid for bcomplex"),
            ((BCOMPLEX, 64, 1), {}, BufferError, "dtype.bits is not valid for its code",
             dlpackgo.GoTypeError, "dtype.bits = 64 is not valid for bcomplex"),
            ((19, 32, 1), {}, BufferError, "dtype.code is not a DLPack type code",
             dlpackgo.GoTypeError, "dtype.code = 19 is not a DLPack type code"),
        ]
        for dt, kw, exc, msg, call_exc, call_msg in cases:
            h = xharness.make(*dt, (4,), **kw)
            for via in (None, "dlpack", "api"):
                with self.subTest(dtype=dt, via=via, **kw):
                    with self.assertRaisesRegex(exc, msg):
                        LIB.from_dlpack(h, via=via)
            with self.subTest(dtype=dt, call=True, **kw):
                with self.assertRaisesRegex(call_exc, call_msg):
                    LIB.same(h)
            h.release()


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


class TestRoundTrips(Base):
    def test_memory_flat(self):
        """20 000 round trips each way through the API: counts settle, resident memory stays flat."""
        t = arange((256,))
        h = xharness.make(FLOAT, 64, 1, (256,))

        def rounds(n):
            for _ in range(n):
                xharness.consume(t).release()
                LIB.from_dlpack(h).release()
                LIB.to_framework(t, HT).release()
                g = xharness.to_py(dlpackgo.Tensor, xharness.alloc(dlpackgo.Tensor, (16,), FLOAT, 64, 1))
                g.release()
            gc.collect()
            LIB.collect()

        rounds(5000)  # warm: allocators, the harness's graveyard of 4096 deleted wrappers
        before = rss_mib()
        rounds(20000)
        eventually(lambda: LIB.exchange_counts()["live_allocs"] == 0, "allocations freed")
        grown = rss_mib() - before
        print(f"  resident memory grew by {grown:.2f} MiB", file=sys.stderr)
        self.assertLess(grown, 8, f"resident memory grew by {grown:.1f} MiB over 20 000 round trips")


if __name__ == "__main__":
    unittest.main()
