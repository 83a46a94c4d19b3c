"""Tensor results of registered functions, made NumPy arrays in C.

Run by TestPythonResults in pyexchange. A host result becomes a NumPy array in the
library's C code (numpy.c: PyArray_NewFromDescr over the export's memory, whose base is a capsule
of the export), with no copy whatever its size; a small result of Go memory is exported the light
way (results.go: no cgo.Handle, a deleter that only queues its slot). torch results are made
by torch's own DLPack import of a legacy capsule of the export (call.c's torch_result), or
torch.from_numpy of those arrays for the dtypes and read-only results that path leaves.
"""

import gc
import sys
import unittest

import numpy as np
import torch

import dlpackgo
from test_dlpackgo import LIB


class NumPyResults(unittest.TestCase):
    def test_arrays_made_in_c(self):
        sq = np.arange(16.0).reshape(4, 4)
        for call in (lambda: LIB.matmul(sq, sq), lambda: LIB.matmul.__wrapped__(sq, sq),
                     lambda: LIB.matmul(sq, sq, returns="numpy")):
            r = call()
            self.assertIs(type(r), np.ndarray)
            self.assertEqual(type(r.base).__name__, "PyCapsule")
            self.assertTrue(r.flags.writeable and r.flags.c_contiguous and r.flags.aligned)
            self.assertEqual(r.dtype, np.float64)
            np.testing.assert_array_equal(r, sq @ sq)

    def test_every_dtype_and_layout(self):
        base = np.arange(3 * 4 * 5).reshape(3, 4, 5)
        for dtype in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                      "float16", "float32", "float64", "complex64", "complex128"):
            full = base.astype(dtype)
            for x in (full, full[::2, 1:, ::3], full.transpose(2, 0, 1), full[1, 2], full[0, 0, 0:0],
                      np.asfortranarray(full), np.array(5, dtype)):
                with self.subTest(dtype=dtype, shape=x.shape, strides=x.strides):
                    r = LIB.same(x)  # the argument's own memory, as a new array
                    self.assertIs(type(r), np.ndarray)
                    self.assertEqual(r.dtype, x.dtype)
                    self.assertEqual(r.dtype.char, x.dtype.char)
                    self.assertEqual(r.shape, x.shape)
                    np.testing.assert_array_equal(r, x)
                    if x.size:
                        self.assertEqual(r.ctypes.data, x.ctypes.data, "zero-copy")
                        self.assertEqual(r.strides, x.strides)

    def test_large_results_are_not_copied(self):
        big = np.zeros((1000, 1000))
        r = LIB.same(big)
        self.assertEqual(r.ctypes.data, big.ctypes.data)
        r[3, 4] = 7.0
        self.assertEqual(big[3, 4], 7.0)
        z = LIB.zeros_like(big)  # 8 MB of new Go memory: the ordinary export
        self.assertEqual(z.shape, big.shape)
        self.assertEqual(z.sum(), 0.0)

    def test_small_results_are_released(self):
        sq = np.arange(16.0).reshape(4, 4)
        LIB.noop(sq)
        before = LIB.live_exports()
        rs = [LIB.zeros_like(sq) for _ in range(300)]
        self.assertEqual(LIB.live_exports(), before + 300)
        addrs = {r.ctypes.data for r in rs}
        self.assertEqual(len(addrs), 300, "each result its own memory")
        del rs
        gc.collect()
        self.assertEqual(LIB.live_exports(), before)

    def test_views_keep_small_results(self):
        sq = np.arange(16.0).reshape(4, 4)
        v = LIB.zeros_like(sq)[1:, ::2]
        v[...] = 5.0
        for _ in range(500):  # results come and go, Go collects: v's memory stays v's
            LIB.zeros_like(sq)
        LIB.collect()
        for _ in range(500):
            LIB.zeros_like(sq)[...] = -1.0
        np.testing.assert_array_equal(v, np.full((3, 2), 5.0))
        del v

    def test_results_that_are_arguments_hold_them(self):
        a = np.arange(6.0)
        refs = sys.getrefcount(a)
        r = LIB.same(a)
        self.assertGreater(sys.getrefcount(a), refs)
        del r
        self.assertEqual(sys.getrefcount(a), refs, "the array is let go with the result")

    def test_read_only_and_reversed_results_are_copies(self):
        a = np.arange(4.0)
        ro = LIB.readonly(a)
        self.assertTrue(ro.flags.writeable)
        self.assertNotEqual(ro.ctypes.data, a.ctypes.data)
        rv = LIB.reversed(a)
        np.testing.assert_array_equal(rv, a[::-1])


class TorchResults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tlib = dlpackgo.Library(LIB.cdll, returns="torch")

    def test_torch_tensors_over_go_memory(self):
        sq = np.arange(16.0).reshape(4, 4)
        for r in (self.tlib.matmul(sq, sq), LIB.matmul(sq, sq, returns="torch"),
                  self.tlib.matmul.__wrapped__(sq, sq)):
            self.assertIs(type(r), torch.Tensor)
            self.assertEqual(r.dtype, torch.float64)
            self.assertEqual(r.tolist(), (sq @ sq).tolist())
        x = np.arange(10.0)
        t = self.tlib.same(x)
        self.assertEqual(t.data_ptr(), x.ctypes.data, "zero-copy")
        t[2] = 42.0
        self.assertEqual(x[2], 42.0)

    def test_torch_imports_host_results_itself(self):
        # call.c hands host results to torch._C._from_dlpack as legacy capsules (no NumPy
        # array in between) for the dtypes every torch reads; bool and the unsigned types
        # wider than 8 bits go through torch.from_numpy as before
        base = np.arange(3 * 4 * 5).reshape(3, 4, 5)
        for dtype in ("int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64",
                      "complex64", "complex128"):
            full = base.astype(dtype)
            for x in (full, full[::2, 1:, ::3], full.transpose(2, 0, 1), full[1, 2], full[0, 0, 0:0],
                      np.asfortranarray(full), np.array(5, dtype)):
                with self.subTest(dtype=dtype, shape=x.shape, strides=x.strides):
                    t = self.tlib.same(x)
                    self.assertIs(type(t), torch.Tensor)
                    self.assertEqual(tuple(t.shape), x.shape)
                    self.assertEqual(t.dtype, torch.from_numpy(np.ascontiguousarray(x)).dtype)
                    np.testing.assert_array_equal(t.numpy(), x)
                    if x.size:
                        self.assertEqual(t.data_ptr(), x.ctypes.data, "zero-copy")
                        self.assertEqual(tuple(s * x.itemsize for s in t.stride()), x.strides)

    def test_torch_results_are_released(self):
        sq = np.arange(16.0).reshape(4, 4)
        self.tlib.noop(sq)
        before = LIB.live_exports()
        rs = [self.tlib.zeros_like(sq) for _ in range(300)]
        self.assertEqual(LIB.live_exports(), before + 300)
        self.assertEqual(len({r.data_ptr() for r in rs}), 300, "each result its own memory")
        v = rs[7][1:, ::2]  # a view holds its result on
        v[...] = 5.0
        del rs
        gc.collect()
        self.assertEqual(LIB.live_exports(), before + 1)
        for _ in range(500):
            self.tlib.zeros_like(sq)[...] = -1.0
        LIB.collect()
        self.assertEqual(v.tolist(), [[5.0, 5.0]] * 3)
        del v
        gc.collect()
        self.assertEqual(LIB.live_exports(), before)

    def test_device_results_go_to_torch_as_before(self):
        # not host memory: no NumPy array is made; torch says what it says of the capsule, from
        # the C path as from the Python one
        for call in (lambda: self.tlib.vk_tensor(4), lambda: LIB.vk_tensor(4, returns="torch")):
            with self.assertRaisesRegex(RuntimeError, "device_type: 7"):
                call()
        t = LIB.vk_tensor(4, returns="tensor")
        self.assertEqual(t.device, (7, 0))
        t.release()


if __name__ == "__main__":
    unittest.main()
