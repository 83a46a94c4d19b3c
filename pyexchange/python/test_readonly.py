"""Read-only and memory-mapped arrays into registered Go functions.

Run by TestPythonReadOnly in pyexchange (DLPACKGO_TESTLIB: the test library). NumPy's own
``__dlpack__`` refuses read-only arrays (NumPy < 2.1); the library's C reader takes them, of
``numpy.ndarray`` and ``numpy.memmap``, as tensors flagged READ_ONLY: a Go function that reads
them sees the values in place, one that writes them fails with core.ErrReadOnly, raised as
GoValueError naming read-only, and the array is unchanged. torch has no read-only tensors, but
two kinds may not be written (requires_grad, inference tensors outside inference mode): they go
in read-only too.
"""

import os
import sys
import tempfile
import unittest

import numpy as np
import torch

import dlpackgo
from test_dlpackgo import LIB

FLAG_READ_ONLY = dlpackgo.FLAG_READ_ONLY


def layouts():
    """(name, array) of float64 arrays in every order: C, Fortran, strided (negative strides
    too), 0-d, empty."""
    c = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4) + 0.5
    return [
        ("C", c),
        ("Fortran", np.asfortranarray(c)),
        ("strided", c[:, ::2, ::-3]),
        ("0-d", np.array(7.25)),
        ("empty", np.zeros((3, 0))),
        ("empty-strided", np.zeros((4, 0, 2))[::2]),
    ]


class ReadOnly(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def arrays(self):
        """(name, read-only array, its values as a writable copy, the file of a memmap or None):
        flags.writeable = False, and np.load(mmap_mode="r") of the same values (a strided view of
        the memmap for the strided layouts)."""
        out = []
        for name, a in layouts():
            ro = a.copy(order="K")
            if name in ("strided", "empty-strided"):  # a read-only view, strides and all
                base = a.base.copy()
                ro = base[:, ::2, ::-3] if name == "strided" else base[::2]
            ro.flags.writeable = False
            out.append((f"{name}/writeable=False", ro, a.copy(), None))
            path = os.path.join(self.dir.name, f"{name}.npy")
            if name == "strided":
                full = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4) + 0.5
                np.save(path, full)
                m = np.load(path, mmap_mode="r")[:, ::2, ::-3]
            elif name == "empty-strided":
                np.save(path, np.zeros((4, 0, 2)))
                m = np.load(path, mmap_mode="r")[::2]
            else:
                np.save(path, a)
                m = np.load(path, mmap_mode="r")
            self.assertFalse(m.flags.writeable)
            out.append((f"{name}/mmap", m, a.copy(), path))
        return out

    def test_layouts_are_what_they_say(self):
        for name, x, want, _ in self.arrays():
            with self.subTest(name):
                np.testing.assert_array_equal(x, want)
                self.assertEqual(x.shape, want.shape)
                if name.startswith("Fortran") and x.ndim > 1:
                    self.assertTrue(x.flags.f_contiguous and not x.flags.c_contiguous)
                if name.startswith("strided"):
                    self.assertFalse(x.flags.c_contiguous or x.flags.f_contiguous)
                    self.assertLess(min(x.strides), 0)
                if name.endswith("mmap"):
                    self.assertIn(type(x), (np.memmap, np.ndarray))

    def test_reading_functions_read_in_place(self):
        for name, x, want, _ in self.arrays():
            with self.subTest(name):
                refs = sys.getrefcount(x)
                reads = LIB._numpy_reads()
                self.assertEqual(LIB.total(x), float(want.sum()))  # exact: the same sums
                if x.size:
                    self.assertEqual(LIB.first_address(x), x.ctypes.data, "memory shared")
                self.assertEqual(LIB._numpy_reads() - reads, 2 if x.size else 1,
                                 "read in C, not through __dlpack__")
                with LIB.from_dlpack(x) as g:
                    self.assertTrue(g.readonly)
                    self.assertTrue(g.flags & FLAG_READ_ONLY)
                    self.assertEqual(g.shape, x.shape)
                    if x.size:
                        self.assertEqual(g.data_ptr, x.ctypes.data)
                        self.assertEqual(g.strides, x.strides)
                self.assertEqual(sys.getrefcount(x), refs)

    def test_writing_functions_raise_read_only(self):
        for name, x, want, path in self.arrays():
            with self.subTest(name):
                refs = sys.getrefcount(x)
                for _ in range(3):
                    with self.assertRaises(dlpackgo.GoValueError) as cm:
                        LIB.scale(x, 2.0)
                    self.assertIsInstance(cm.exception, ValueError)
                    self.assertIn("read-only", str(cm.exception))
                np.testing.assert_array_equal(x, want)  # unchanged
                if path is not None:
                    np.testing.assert_array_equal(np.load(path), np.load(path, mmap_mode="r"))
                    self.assertEqual(np.load(path).sum(), np.load(path, mmap_mode="r").sum())
                self.assertEqual(sys.getrefcount(x), refs)

    def test_writable_arrays_still_written(self):
        for name, a in layouts():
            with self.subTest(name):
                x = a.copy()
                LIB.scale(x, 2.0)
                np.testing.assert_array_equal(x, a * 2.0)
        path = os.path.join(self.dir.name, "rw.npy")
        np.save(path, np.arange(6.0).reshape(2, 3))
        m = np.load(path, mmap_mode="r+")  # a writable memmap: written in place, in the file
        LIB.scale(m[:, ::2], 10.0)
        m.flush()
        np.testing.assert_array_equal(np.load(path), [[0, 1, 20], [30, 4, 50]])

    def test_other_subclasses_are_not_read_in_c(self):
        # a masked array's fields do not say what it means: it takes __dlpack__ (NumPy 1.24
        # exports its data, as for any subclass), never the reader
        m = np.ma.masked_array(np.arange(3.0), mask=[0, 1, 0])
        reads = LIB._numpy_reads()
        try:
            LIB.total(m)
        except (BufferError, TypeError):
            pass
        self.assertEqual(LIB._numpy_reads(), reads)


class TorchNotWritable(unittest.TestCase):
    def test_requires_grad_goes_in_read_only(self):
        w = torch.arange(6.0, requires_grad=True)
        self.assertEqual(LIB.total(w), 15.0)  # torch's __dlpack__ alone refuses it
        self.assertEqual(LIB.first_address(w), w.data_ptr(), "memory shared (detached)")
        self.assertEqual(LIB.total(w[::2]), 6.0)
        with self.assertRaises(dlpackgo.GoValueError) as cm:
            LIB.scale(w, 2.0)
        self.assertIn("read-only", str(cm.exception))
        self.assertEqual(w.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
        self.assertTrue(w.requires_grad)
        d = w.detach()  # what the user writes to write it anyway
        LIB.scale(d, 2.0)
        self.assertEqual(w.tolist(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0])

    def test_inference_tensors_outside_inference_mode_are_read_only(self):
        with torch.inference_mode():
            t = torch.arange(4.0)
            LIB.scale(t, 2.0)  # inside inference mode it may be written
        self.assertEqual(t.tolist(), [0.0, 2.0, 4.0, 6.0])
        self.assertEqual(LIB.total(t), 12.0)
        with self.assertRaises(dlpackgo.GoValueError) as cm:
            LIB.scale(t, 2.0)
        self.assertIn("read-only", str(cm.exception))
        self.assertEqual(t.tolist(), [0.0, 2.0, 4.0, 6.0])

    def test_from_dlpack_imports_them_read_only(self):
        # Library.from_dlpack takes them as function arguments do: read-only, memory shared
        w = torch.arange(6.0, requires_grad=True)
        with torch.inference_mode():
            inf = torch.arange(4.0)
        for x in (w, w[1::2], inf):
            for kw in ({}, {"copy": False}, {"via": "dlpack"}, {"device": "cpu"}):
                with self.subTest(shape=tuple(x.shape), **kw):
                    g = LIB.from_dlpack(x, **kw)
                    self.assertTrue(g.readonly)
                    self.assertEqual(g.data_ptr, x.data_ptr(), "memory shared")
                    self.assertEqual(LIB.total(g), float(x.detach().sum()))
                    before = x.tolist()
                    with self.assertRaises(dlpackgo.GoValueError) as cm:
                        LIB.scale(g, 2.0)
                    self.assertIn("read-only", str(cm.exception))
                    self.assertEqual(x.tolist(), before, "unchanged")
                    g.release()
        self.assertTrue(w.requires_grad)
        with self.assertRaisesRegex(BufferError, "read-only"):
            LIB.from_dlpack(w, via="api")
        c = LIB.from_dlpack(w, copy=True)  # Go's own copy: writable
        self.assertFalse(c.readonly)
        self.assertNotEqual(c.data_ptr, w.data_ptr())
        LIB.scale(c, 2.0)
        self.assertEqual(w.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
        c.release()
        with torch.inference_mode():  # inside inference mode it may be written
            g = LIB.from_dlpack(inf)
            self.assertFalse(g.readonly)
            g.release()
        g = LIB.from_dlpack(torch.arange(3.0))
        self.assertFalse(g.readonly)
        g.release()

    def test_plain_tensors_are_written(self):
        t = torch.arange(3.0)
        LIB.scale(t, 3.0)
        self.assertEqual(t.tolist(), [0.0, 3.0, 6.0])


if __name__ == "__main__":
    unittest.main()
