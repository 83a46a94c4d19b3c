"""Tests of registered Go functions (pyexchange.Register) called from Python, with the real NumPy
and PyTorch, and of the Tensor's Python face (dtype names, strides, __array_interface__,
from_dlpack's copy and device).

Run by the Go test TestPythonFunctions in pyexchange, like test_dlpackgo.py:

    DLPACKGO_TESTLIB=/path/libdlpackgo_test.so python3 -m unittest -v test_functions
"""

import ctypes
import gc
import inspect
import pydoc
import sys
import threading
import time
import unittest

import numpy as np
import torch

import dlpackgo
from test_dlpackgo import (LIB, C, NP_VERSION, Base, ManagedVersioned, VersionedView, arange,
                           eventually, go_get)

BFLOAT = 4


class Signatures(unittest.TestCase):
    def test_dir_lists_functions(self):
        for name in ("noop", "scale", "add", "total", "echo", "split", "fail", "crash", "spin"):
            self.assertIn(name, dir(LIB))
            self.assertIs(getattr(LIB, name), LIB.functions[name])

    def test_signature_and_help(self):
        sig = inspect.signature(LIB.scale)
        self.assertEqual(list(sig.parameters), ["x", "factor"])
        self.assertTrue(all(p.kind is p.POSITIONAL_ONLY for p in sig.parameters.values()))
        self.assertIs(sig.parameters["x"].annotation, dlpackgo.Array)
        self.assertIs(sig.parameters["factor"].annotation, float)
        self.assertIsNone(sig.return_annotation)
        text = pydoc.render_doc(LIB.scale, renderer=pydoc.plaintext)
        self.assertIn("scale(x: dlpackgo.Array, factor: float, /) -> None", text)
        self.assertIn("Multiplies every element of x (float32 or float64) by factor, in place.", text)
        self.assertIn("Go: func scale(x *core.Tensor, factor float64) error", text)

    def test_results_and_returns_keyword(self):
        sig = inspect.signature(LIB.add)
        self.assertEqual(list(sig.parameters), ["a", "b", "returns"])
        self.assertIs(sig.parameters["returns"].kind, inspect.Parameter.KEYWORD_ONLY)
        self.assertEqual(inspect.signature(LIB.split).return_annotation, tuple[dlpackgo.Array, int, str])
        self.assertNotIn("returns", inspect.signature(LIB.total).parameters, "no tensor result")

    def test_unnamed_parameters(self):
        self.assertEqual(list(inspect.signature(LIB.unnamed).parameters), ["arg0", "arg1"])

    def test_parameters_named_as_the_generated_functions_own_names(self):
        # "shadowing(_lib, _handles, _legacy)": names the generated function uses itself; as
        # parameters they replaced the Library, the call's handles flag, the set of legacy types
        self.assertEqual(list(inspect.signature(LIB.shadowing).parameters), ["arg0", "arg1", "arg2", "returns"])
        for x in (np.arange(3.0), torch.arange(3.0)):
            r, n, m = LIB.shadowing(x, 7, 9)
            self.assertEqual((list(r), n, m), ([0.0, 1.0, 2.0], 7, 9))


class Calls(Base):
    def test_in_place_numpy_and_torch(self):
        a = np.arange(6.0).reshape(2, 3)
        self.assertIsNone(LIB.scale(a, 2.0))
        np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3) * 2)
        t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        LIB.scale(t.T, 3)  # a strided view, an int for a float parameter
        self.assertEqual(t.tolist(), [[0, 3, 6], [9, 12, 15]])
        v = a[:, ::2]
        LIB.scale(v, -1.0)
        self.assertEqual(a.tolist(), [[-0.0, 2, -4], [-6, 8, -10]])

    def test_arguments_zero_copy(self):
        a = np.arange(12.0)
        self.assertEqual(LIB.first_address(a), a.ctypes.data)
        self.assertEqual(LIB.first_address(a[3:]), a[3:].ctypes.data)
        t = torch.ones(5)
        self.assertEqual(LIB.first_address(t), t.data_ptr())
        g = LIB.from_dlpack(a)  # a dlpackgo.Tensor goes by its handle: Go has it already
        self.assertEqual(LIB.first_address(g), a.ctypes.data)
        LIB.scale(g, 2.0)
        self.assertEqual(a[3], 6.0)
        handles = LIB.live_handles()
        r = LIB.same(g, returns="tensor")
        self.assertEqual(r.data_ptr, a.ctypes.data)
        self.assertEqual(LIB.live_handles(), handles + 1, "the argument's handle is untouched")
        r.release()
        g.release()
        with self.assertRaises(ValueError):
            LIB.first_address(g)  # released: refused before Go runs

    def test_results_zero_copy(self):
        a = np.arange(6.0).reshape(2, 3)
        r = LIB.same(a)
        self.assertIsInstance(r, np.ndarray)
        self.assertEqual(r.ctypes.data, a.ctypes.data, "the result is the argument's memory")
        r[0, 0] = 42
        self.assertEqual(a[0, 0], 42)
        x = torch.zeros(4)
        y = LIB.same(x, returns="torch")
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual(y.data_ptr(), x.data_ptr())
        t = LIB.same(a, returns="tensor")
        self.assertIsInstance(t, dlpackgo.Tensor)
        self.assertEqual(t.data_ptr, a.ctypes.data)
        t.release()
        s = LIB.add(a, a)  # new Go memory, returned without a copy: Go's address is NumPy's
        self.assertEqual(s.tolist(), (a * 2).tolist())
        self.assertEqual(LIB.first_address(s), s.ctypes.data)
        c = LIB.same(a, returns=lambda x: np.from_dlpack(x))
        self.assertEqual(c.ctypes.data, a.ctypes.data)
        del r, y, s, c

    def test_results_that_cannot_be_shared_are_copied(self):
        a = np.arange(6.0).reshape(2, 3)
        r = LIB.reversed(a)
        self.assertEqual(r.tolist(), a[::-1].tolist())
        self.assertTrue(all(s > 0 for s in r.strides), "no negative strides reach a consumer")
        ro = LIB.readonly(a)
        self.assertEqual(ro.tolist(), a.tolist())
        self.assertNotEqual(ro.ctypes.data, a.ctypes.data, "read-only results are copies")

    def test_library_default_returns(self):
        lib = dlpackgo.Library(LIB.cdll, returns="torch")
        self.assertIsInstance(lib.add(np.ones(2), np.ones(2)), torch.Tensor)
        self.assertIsInstance(lib.add(np.ones(2), np.ones(2), returns="numpy"), np.ndarray)
        with self.assertRaises(ValueError):
            dlpackgo.Library(LIB.cdll, returns="jax")
        with self.assertRaises(ValueError):
            LIB.add(np.ones(2), np.ones(2), returns="pandas")

    def test_scalars_both_ways(self):
        got = LIB.echo(-128, -2**63, 255, 2**64 - 1, 1.5, 2.5, True, "héllo")
        self.assertEqual(got, (-128, -2**63, 255, 2**64 - 1, 1.5, 2.5, True, "héllo!"))
        got = LIB.echo(np.int8(3), np.int64(4), np.uint8(5), 6, np.float32(0.25), 7, False, "")
        self.assertEqual(got, (3, 4, 5, 6, 0.25, 7.0, False, "!"))

    def test_multiple_results(self):
        a = np.arange(6.0).reshape(2, 3)
        row, n, name = LIB.split(a)
        self.assertEqual((row.tolist(), n, name), ([0, 1, 2], 2, "float64"))
        self.assertEqual(row.ctypes.data, a.ctypes.data)
        self.assertEqual(LIB.total(a), 15.0)

    def test_wrong_arguments_raise_type_error_before_go_runs(self):
        a = np.arange(3.0)
        before = LIB.scale_calls()
        cases = [
            (lambda: LIB.scale(a), TypeError, "missing 1 required positional argument: 'factor'"),
            (lambda: LIB.scale(a, 1.0, 2.0), TypeError, "takes 2 positional arguments but 3 were given"),
            (lambda: LIB.scale(x=a, factor=1.0), TypeError, "positional-only"),
            (lambda: LIB.scale([1.0, 2.0], 1.0), TypeError, "argument 1 (x) must be an array with __dlpack__"),
            (lambda: LIB.scale(a, "2"), TypeError, "argument 2 (factor) must be float, not str"),
            (lambda: LIB.scale(a, None), TypeError, "argument 2 (factor) must be float, not NoneType"),
            (lambda: LIB.echo(1.5, 0, 0, 0, 0, 0, True, ""), TypeError, "argument 1 (i8) must be int, not float"),
            (lambda: LIB.echo(1, 0, 0, 0, 0, 0, 1, ""), TypeError, "argument 7 (b) must be bool, not int"),
            (lambda: LIB.echo(1, 0, 0, 0, 0, 0, True, b"x"), TypeError, "argument 8 (s) must be str, not bytes"),
            (lambda: LIB.echo(128, 0, 0, 0, 0, 0, True, ""), OverflowError, "128 does not fit in int8"),
            (lambda: LIB.echo(1, 2**63, 0, 0, 0, 0, True, ""), OverflowError, "argument 2 (i64) is out of range"),
            (lambda: LIB.echo(1, 0, -1, 0, 0, 0, True, ""), OverflowError, "argument 3 (u8) is out of range"),
            (lambda: LIB.echo(1, 0, 0, 0, 1e300, 0, True, ""), OverflowError, "does not fit in float32"),
        ]
        for fn, exc, msg in cases:
            with self.subTest(msg=msg):
                with self.assertRaises(exc) as cm:
                    fn()
                self.assertIn(msg, str(cm.exception))
        self.assertEqual(LIB.scale_calls(), before, "scale never ran")
        np.testing.assert_array_equal(a, np.arange(3.0))

    def test_go_errors_are_python_exceptions(self):
        for kind, exc in [("value", ValueError), ("type", TypeError), ("buffer", BufferError),
                          ("memory", MemoryError), ("odd", ValueError), ("other", RuntimeError)]:
            with self.subTest(kind=kind):
                with self.assertRaises(exc) as cm:
                    LIB.fail(kind)
                self.assertIsInstance(cm.exception, dlpackgo.GoError)
                self.assertIn("testlib: fail:", str(cm.exception), "the Go message")
        with self.assertRaises(dlpackgo.GoTypeError) as cm:
            LIB.scale(np.arange(3), 2.0)  # int64: scale refuses it
        self.assertIn("element type does not match dtype", str(cm.exception))
        with self.assertRaises(dlpackgo.GoValueError) as cm:
            LIB.add(np.ones(2), np.ones(3))
        self.assertIn("shapes [2] and [3] differ", str(cm.exception))
        with self.assertRaises(dlpackgo.GoValueError) as cm:
            LIB.nil_result()
        self.assertIn("returned a nil *core.Tensor", str(cm.exception))
        ro = np.ones(3)
        ro.flags.writeable = False
        # read in C as a READ_ONLY tensor, whatever NumPy's __dlpack__ would say: Go reads it,
        # and may not write it (test_readonly.py covers every layout)
        self.assertEqual(LIB.total(ro), 3.0)
        with self.assertRaises(dlpackgo.GoValueError) as cm:
            LIB.scale(ro, 2.0)
        self.assertIn("read-only", str(cm.exception))

    def test_panic_is_an_exception_and_the_library_lives_on(self):
        a = np.arange(4.0)
        for _ in range(3):
            with self.assertRaises(dlpackgo.GoPanic) as cm:
                LIB.crash(a)
            self.assertIn("index out of range [7] with length 0", str(cm.exception))
            self.assertIn("goroutine", str(cm.exception), "the Go stack")
        self.assertEqual(LIB.total(a), 6.0)

    def test_gil_released_while_go_runs(self):
        done = []
        th = threading.Thread(target=lambda: done.append(LIB.spin(1500)))
        ticks = []
        th.start()
        start = time.perf_counter()
        while th.is_alive():
            ticks.append(time.perf_counter())
            time.sleep(0.001)
        th.join()
        elapsed = time.perf_counter() - start
        self.assertGreater(done[0], 0)
        self.assertGreater(elapsed, 1.4, "spin ran its 1.5 s")
        gaps = [b - a for a, b in zip(ticks, ticks[1:])]
        # with the GIL held by the caller, this thread would not run at all for 1.5 s; the bound
        # is loose because the test machine is shared and its scheduler stalls at times
        self.assertGreater(len(ticks), 50, "this thread ran while Go spun")
        self.assertLess(max(gaps), 0.75, "no stall as long as the Go call: the GIL was free")

    def test_threads_call_concurrently(self):
        arrays = [np.full(1000, float(i)) for i in range(8)]
        errors = []

        def work(a, i):
            try:
                for _ in range(200):
                    self.assertEqual(LIB.total(a), 1000.0 * i)
                    LIB.scale(a, 1.0)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        ths = [threading.Thread(target=work, args=(a, i)) for i, a in enumerate(arrays)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        self.assertEqual(errors, [])

    def test_view_kept_beyond_the_call(self):
        foreign = LIB.live_foreign()
        a = np.arange(5.0)
        LIB.keep(a)
        self.assertEqual(LIB.live_foreign(), foreign + 1, "Go still holds a's memory")
        del a
        gc.collect()
        self.assertEqual(LIB.drop_kept(), 1)  # the producer's deleter runs now, taking the GIL
        self.assertEqual(LIB.live_foreign(), foreign)

    def test_many_calls_leave_nothing_behind(self):
        a = np.arange(100.0)
        t = torch.arange(100.0)
        for _ in range(2000):
            LIB.noop(a)
            LIB.noop(t)
            LIB.same(a)
        with self.assertRaises(TypeError):
            LIB.noop("nothing")


class CalledFromC(Base):
    """Registered functions are dlpackgo.GoFunction objects (call.c) that CPython calls through
    vectorcall; the generated Python function behind each (__wrapped__) takes every call C does
    not take as it is. Both paths must answer alike."""

    def setUp(self):
        if not dlpackgo._functions._C_CALLS:
            self.skipTest("this Python exports no PyObject_Vectorcall (< 3.11): registered "
                          "functions stay Python functions")
        super().setUp()

    def test_functions_are_go_functions(self):
        f = LIB.scale
        self.assertEqual(type(f).__name__, "GoFunction")
        self.assertEqual(type(f).__module__, "dlpackgo")
        w = f.__wrapped__
        self.assertTrue(inspect.isfunction(w))
        for a in ("__name__", "__qualname__", "__module__", "__doc__", "__annotations__"):
            self.assertEqual(getattr(f, a), getattr(w, a), a)
        self.assertEqual(inspect.signature(f), inspect.signature(w))
        self.assertTrue(inspect.isroutine(f))
        self.assertTrue(gc.is_tracked(f))  # the collector sees what it holds: cycles through
        self.assertIn(w, gc.get_referents(f))  # the Library are collectable
        self.assertEqual(pydoc.render_doc(f, renderer=pydoc.plaintext).split("\n", 2)[2],
                         pydoc.render_doc(w, renderer=pydoc.plaintext).split("\n", 2)[2])

        class Holder:
            g = LIB.first_address  # like a builtin: no binding to the instance

        a = np.arange(3.0)
        self.assertEqual(Holder().g(a), a.ctypes.data)
        if sys.version_info >= (3, 10):  # Py_TPFLAGS_DISALLOW_INSTANTIATION
            with self.assertRaises(TypeError):
                type(f)()  # made by the library only

    def test_c_and_python_paths_agree(self):
        a = np.arange(12.0).reshape(3, 4)
        live = LIB.from_dlpack(a)
        live.handle  # adopted: C passes its handle
        pending = LIB.from_dlpack(a[1:])  # not adopted yet: Python adopts it
        released = LIB.from_dlpack(a)
        released.release()

        class Sub(np.ndarray):
            pass

        cases = [
            (LIB.first_address, (a,)), (LIB.first_address, (a[:, ::-2],)),
            (LIB.first_address, (a.view(Sub),)), (LIB.first_address, (torch.ones(3),)),
            (LIB.first_address, (live,)), (LIB.first_address, (pending,)),
            (LIB.first_address, (released,)), (LIB.first_address, ([1.0],)),
            (LIB.first_address, ()), (LIB.first_address, (a, a)), (LIB.total, (a,)),
            (LIB.echo, (1, 2, 3, 4, 5.5, 6.5, True, "s")), (LIB.echo, (1.5, 0, 0, 0, 0, 0, True, "")),
            (LIB.echo, (128, 0, 0, 0, 0, 0, True, "")), (LIB.fail, ("value",)),
            (LIB.scale_calls, ()),
        ]
        for f, args in cases:
            with self.subTest(f=f.__name__, args=[type(x).__name__ for x in args]):
                got = want = None
                try:
                    got = ("ok", f(*args))
                except Exception as e:
                    got = (type(e), str(e))
                try:
                    want = ("ok", f.__wrapped__(*args))
                except Exception as e:
                    want = (type(e), str(e))
                self.assertEqual(got, want)
        with self.assertRaises(TypeError) as cm:
            LIB.first_address(x=a)
        self.assertIn("positional-only", str(cm.exception))
        live.release()
        pending.release()

    def test_many_dimensions(self):
        # up to 8 dimensions on call.c's stack, more in memory numpy.c allocates per call
        for nd in (0, 1, 8, 9, 32):  # 32: NumPy 1's most
            a = np.arange(3.0).reshape((1,) * (nd - 1) + (3,)) if nd else np.array(2.0)
            refs = sys.getrefcount(a)
            reads = LIB._numpy_reads()
            self.assertEqual(LIB.first_address(a), a.ctypes.data, nd)
            self.assertEqual(LIB._numpy_reads(), reads + 1, "read in C")
            self.assertEqual(LIB.total(a), float(a.sum()), nd)
            if nd:
                v = np.zeros((2,) * min(nd, 12))[(slice(None, None, -1),) * min(nd, 12)]
                v[...] = 1
                LIB.scale(v, 3.0)  # negative strides in every dimension
                self.assertTrue((v == 3).all(), nd)
            self.assertEqual(sys.getrefcount(a), refs, "let go once")
            LIB.keep(a)
            self.assertEqual(sys.getrefcount(a), refs + 1, "a view outlives the call")
            self.assertEqual(LIB.drop_kept(), 1)
            self.assertEqual(sys.getrefcount(a), refs)


class TensorFace(Base):
    def test_dtype_names(self):
        for code, bits, name in [(2, 64, "float64"), (2, 16, "float16"), (0, 8, "int8"),
                                 (1, 32, "uint32"), (5, 128, "complex128"), (6, 8, "bool"),
                                 (BFLOAT, 16, "bfloat16")]:
            with self.subTest(name=name):
                t = arange((2,), code, bits)
                self.assertEqual(t.dtype, name)
                self.assertEqual(t.dl_dtype, (code, bits, 1))
                t.release()
        self.assertEqual(dlpackgo.dtype_name(2, 32, 4), "float32x4")
        self.assertEqual(dlpackgo.dtype_name(12, 8), "float8_e5m2")

    def test_strides_repr_and_sizes(self):
        t = arange((3, 4))
        tt = LIB.tensor(C.dlpackgo_test_transpose(t.handle))
        self.assertEqual(tt.shape, (4, 3))
        self.assertEqual(tt.strides, (8, 32), "bytes, like NumPy")
        self.assertEqual(tt.element_strides, (1, 4), "elements, like DLPack")
        self.assertEqual((tt.size, tt.itemsize, tt.nbytes, tt.ndim, len(tt)), (12, 8, 96, 2, 4))
        self.assertEqual(tt.device, (dlpackgo.CPU, 0))
        self.assertEqual(repr(tt), "dlpackgo.Tensor(shape=(4, 3), dtype='float64', strides=(8, 32))")
        tt.release()
        self.assertEqual(repr(tt), "dlpackgo.Tensor(released)")
        t.release()

    def test_array_interface_shares_and_outlives_release(self):
        t = arange((2, 3))
        a = np.asarray(t)
        self.assertEqual(a.dtype, np.float64)
        self.assertEqual(a.ctypes.data, t.data_ptr)
        self.assertEqual(a.strides, t.strides)
        a[1, 1] = -5
        self.assertEqual(go_get(t, 1, 1), -5, "NumPy writes Go memory")
        t.release()
        gc.collect()
        LIB.collect()
        self.assertEqual(a[1, 1], -5, "the array keeps the memory after release()")
        self.assertEqual(a.sum(), 0 + 1 + 2 + 3 - 5 + 5)
        del a, t

    def test_array_interface_of_views_and_refusals(self):
        base = arange((3, 4))
        rev = LIB.tensor(C.dlpackgo_test_reverse(base.handle, 1))
        a = np.asarray(rev)
        self.assertEqual(a.tolist(), np.arange(12.0).reshape(3, 4)[:, ::-1].tolist())
        self.assertEqual(a.strides, (32, -8), "negative strides are fine for NumPy itself")
        ro = LIB.tensor(C.dlpackgo_test_readonly(base.handle))
        self.assertFalse(np.asarray(ro).flags.writeable)
        bf = arange((2,), BFLOAT, 16)
        with self.assertRaises(TypeError):
            np.asarray(bf)
        for t in (rev, ro, bf, base):
            t.release()
        del a

    def test_from_dlpack_copy_and_device(self):
        a = np.arange(6.0).reshape(2, 3)
        for copy in (None, False):
            g = LIB.from_dlpack(a, copy=copy)
            self.assertEqual(g.data_ptr, a.ctypes.data)
            self.assertFalse(g.flags & dlpackgo.FLAG_IS_COPIED)
            g.release()
        g = LIB.from_dlpack(a.T, copy=True)
        self.assertNotEqual(g.data_ptr, a.ctypes.data)
        self.assertTrue(g.flags & dlpackgo.FLAG_IS_COPIED)
        self.assertEqual(g.element_strides, (2, 1), "a C-order copy")
        self.assertEqual(np.from_dlpack(g).tolist(), a.T.tolist())
        g.release()
        for device in ("cpu", (1, 0)):
            LIB.from_dlpack(a, device=device).release()
        with self.assertRaises(BufferError):
            LIB.from_dlpack(a, device=(2, 0))

        class NoDevice:  # the device is the capsule's, then
            def __dlpack__(self, **kwargs):
                return a.__dlpack__()

        refs = sys.getrefcount(a)
        for copy in (None, True):
            with self.assertRaisesRegex(BufferError, r"on device \(1, 0\), not \(2, 0\)"):
                LIB.from_dlpack(NoDevice(), device=(2, 0), copy=copy)
        LIB.from_dlpack(NoDevice(), device="cpu").release()
        self.assertEqual(sys.getrefcount(a), refs, "the refused imports let go of the array")
        with self.assertRaises(ValueError):
            LIB.from_dlpack(a, copy="yes")
        with self.assertRaises(TypeError):
            LIB.from_dlpack([1, 2])


class NumPyReader(Base):
    """NumPy arrays read in C (numpy.c, _numpy.py): in calls and in from_dlpack."""

    DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]

    def test_the_reader_is_on(self):
        self.assertEqual(dlpackgo._numpy.ndarrays, (np.ndarray, np.memmap))

    def test_every_dtype_and_layout_in_a_call(self):
        base = np.arange(4 * 5 * 6).reshape(4, 5, 6)
        for dtype in self.DTYPES:
            full = base.astype(dtype)
            for arr in (full, full[::-1, 1:, ::2], full.transpose(2, 0, 1), full[2, 3],
                        full[0, 0, 0:0], full[1, 2, 3, ...]):
                t = LIB.same(arr, returns="tensor")
                self.assertEqual((t.dtype, t.shape, t.strides, t.data_ptr),
                                 (dtype, arr.shape, arr.strides, arr.ctypes.data), arr.shape)
                self.assertTrue(np.array_equal(np.from_dlpack(t), arr))
                t.release()

    def test_views_share_memory_both_ways(self):
        a = np.zeros((3, 4))
        LIB.scale(a[::-1, ::3], 5.0)  # writes nothing: zeros
        a[:] = 1
        LIB.scale(a[::-1, ::3], 5.0)
        self.assertEqual(a.tolist(), [[5, 1, 1, 5]] * 3)

    def test_the_argument_is_held_and_let_go(self):
        a = np.arange(10.0)
        refs = sys.getrefcount(a)
        for _ in range(1000):
            LIB.noop(a)
        self.assertEqual(sys.getrefcount(a), refs, "every call let go of its reference")
        LIB.keep(a)  # a view that outlives the call holds the array
        self.assertEqual(sys.getrefcount(a), refs + 1)
        self.assertEqual(LIB.drop_kept(), 1)
        self.assertEqual(sys.getrefcount(a), refs)

    def test_declined_arrays_take_dlpack(self):
        unaligned = np.frombuffer(bytearray(25), dtype=np.uint8)[1:].view(np.float64)
        swapped = np.arange(3, dtype=">f8")
        strided = np.zeros(6, np.uint8)[1:].view(np.int8)[::1]
        for x in (unaligned, swapped, np.zeros(2, "U3"), np.zeros(2, object)):
            self.assertIsNone(LIB._pend(x), x.dtype)
            try:
                want = np.from_dlpack(x)  # what NumPy's own __dlpack__ makes of it
            except (BufferError, TypeError, RuntimeError) as e:
                with self.assertRaises(type(e)):
                    LIB.noop(x)
                continue
            self.assertEqual(LIB.first_address(x), want.ctypes.data)
        self.assertIsNotNone(LIB._pend(strided))
        self.assertEqual(LIB.first_address(strided), strided.ctypes.data)

    def test_from_dlpack_waits_for_go(self):
        a = np.arange(12.0).reshape(3, 4)[:, 1:]
        refs = sys.getrefcount(a)
        t = LIB.from_dlpack(a)
        self.assertIsNotNone(t._pending, "not in Go yet")
        self.assertEqual(LIB.live_foreign(), self.foreign, "Go has not seen it")
        self.assertEqual(sys.getrefcount(a), refs + 1, "the pending import holds the array")
        self.assertEqual((t.shape, t.strides, t.dtype, t.data_ptr, t.device, t.readonly),
                         (a.shape, a.strides, "float64", a.ctypes.data, (1, 0), False))
        self.assertEqual(repr(t), "dlpackgo.Tensor(shape=(3, 3), dtype='float64', strides=(32, 8))")
        self.assertEqual(LIB.live_foreign(), self.foreign, "describing it did not enter Go")
        del a
        gc.collect()
        self.assertEqual(go_get(t, 2, 2), 11.0, "Go adopts it on first use; the array lived on")
        self.assertIsNone(t._pending)
        self.assertEqual(LIB.live_foreign(), self.foreign + 1)
        LIB.scale(t, 2.0)
        self.assertEqual(np.from_dlpack(t)[2].tolist(), [18.0, 20.0, 22.0])
        t.release()

    def test_adopting_twice_answers_the_same_handle(self):
        # two threads asking one Tensor for its handle at once both adopt its pending import
        t = LIB.from_dlpack(np.arange(3.0))
        p = t._pending
        h = t.handle
        self.assertEqual(LIB._adopt(p), h)
        self.assertEqual(LIB.live_handles(), self.handles + 1, "one Go tensor")
        t.release()

    def test_pending_release_and_collection_let_go(self):
        a = np.arange(4.0)
        refs = sys.getrefcount(a)
        t = LIB.from_dlpack(a)
        t.release()
        self.assertEqual(sys.getrefcount(a), refs)
        self.assertEqual(repr(t), "dlpackgo.Tensor(released)")
        with self.assertRaises(ValueError):
            t.handle
        with self.assertRaises(ValueError):
            LIB.noop(t)
        LIB.from_dlpack(a)  # dropped at once
        self.assertEqual(sys.getrefcount(a), refs)
        t = LIB.from_dlpack(a)
        self.assertEqual(torch.from_dlpack(t).data_ptr(), a.ctypes.data)  # exported: adopted
        t.release()
        self.assertEqual(sys.getrefcount(a), refs)

    def test_paths_still_chosen_by_the_caller(self):
        a = np.arange(3.0)
        reads = LIB.exchange_counts()["numpy_reader"]
        LIB.from_dlpack(a).release()
        self.assertEqual(LIB.exchange_counts()["numpy_reader"], reads + 1)
        for kw in ({"via": "dlpack"}, {"copy": False}, {"device": "cpu"}):
            t = LIB.from_dlpack(a, **kw)
            self.assertEqual(LIB.exchange_counts()["numpy_reader"], reads + 1, f"{kw}: __dlpack__")
            self.assertEqual(t.data_ptr, a.ctypes.data)
            t.release()


class ProtocolInC(Base):
    """Tensor.__dlpack__ and __dlpack_device__ are the library's C methods (exchange_api.c)."""

    def test_they_are_c_methods(self):
        for name in ("__dlpack__", "__dlpack_device__"):
            self.assertEqual(type(vars(dlpackgo.Tensor)[name]).__name__, "method_descriptor")
        self.assertIn("max_version=None", str(inspect.signature(dlpackgo.Tensor.__dlpack__)))

    def test_common_case_and_the_rest(self):
        t = arange((2, 3))
        self.assertEqual(t.__dlpack_device__(), (1, 0))
        for kw, name in (({}, "dltensor"), ({"max_version": (1, 3)}, "dltensor_versioned"),
                         ({"max_version": (0, 8)}, "dltensor"), ({"copy": False}, "dltensor"),
                         ({"copy": True}, "dltensor"), ({"dl_device": (1, 0)}, "dltensor")):
            c = t.__dlpack__(**kw)
            self.assertIn(f'"{name}"', repr(c), kw)
            del c
        with self.assertRaises(TypeError):
            t.__dlpack__(1)
        with self.assertRaises(TypeError):
            t.__dlpack__(stream=None, colour="red")
        with self.assertRaises(TypeError):
            t.__dlpack__(max_version="x")  # the Python half says what is wrong
        with self.assertRaises(BufferError):
            t.__dlpack__(stream=7)
        with self.assertRaises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        self.assertEqual(np.from_dlpack(t).tolist(), [[0, 1, 2], [3, 4, 5]])
        t.release()
        with self.assertRaises(ValueError):
            t.__dlpack__()


_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


class DeviceStreams(Base):
    """The stream argument of device tensors goes to the library's StreamSync
    (pyexchange.SetStreamSync); the test library has one for its test device, kDLExtDev (12)."""

    def test_every_export_synchronizes_with_the_consumers_stream(self):
        t = LIB.ext_tensor(6, returns="tensor")
        self.assertEqual(t.device, (12, 0))
        n, _ = LIB.ext_syncs()
        for stream, want in ((7, 7), (None, 1), (-1, -1), (0x7f00deadbeef, 0x7f00deadbeef)):
            c = t.__dlpack__(stream=stream, max_version=(1, 3))
            m = ManagedVersioned.from_address(_capsule_pointer(c, b"dltensor_versioned"))
            self.assertEqual((m.dl_tensor.device_type, m.dl_tensor.ndim), (12, 1))
            n += 1
            self.assertEqual(LIB.ext_syncs(), (n, want), f"stream={stream}")
            del c
        c = t.__dlpack__()  # legacy, stream None: synchronized too, never the C fast path
        n += 1
        self.assertEqual(LIB.ext_syncs(), (n, 1))
        del c
        with self.assertRaises(BufferError) as e:
            t.__dlpack__(stream=0)
        self.assertIn("stream 0 refused", str(e.exception))
        with self.assertRaises(TypeError):
            t.__dlpack__(stream="side")
        for stream in (2**64 + 7, 2**63, -(2**63) - 1):  # never wrapped into another stream
            with self.assertRaises(BufferError):
                t.__dlpack__(stream=stream, max_version=(1, 3))
        self.assertEqual(LIB.ext_syncs()[0], n, "refused before or by the StreamSync")
        t.release()

    def test_host_tensors_take_no_stream(self):
        t = arange((3,))
        for stream in (1, -1, 5):
            with self.assertRaises(BufferError):
                t.__dlpack__(stream=stream)
        t.release()

    def test_function_results_synchronize_too(self):
        # a device tensor a function returns to a consumer (returns= a callable, or torch) is
        # exported with the consumer's stream like any other: it was shared as it was, its stream
        # ignored (0, which the StreamSync refuses, accepted)
        def consumer(stream):
            def take(x):
                self.assertEqual(x.__dlpack_device__(), (12, 0))
                c = x.__dlpack__(stream=stream, max_version=(1, 3))
                return ManagedVersioned.from_address(_capsule_pointer(c, b"dltensor_versioned")).dl_tensor.ndim
            return take

        n, _ = LIB.ext_syncs()
        for stream, want in ((7, 7), (None, 1), (-1, -1)):
            self.assertEqual(LIB.ext_tensor(6, returns=consumer(stream)), 1)
            n += 1
            self.assertEqual(LIB.ext_syncs(), (n, want), f"stream={stream}")
        with self.assertRaisesRegex(BufferError, "stream 0 refused"):
            LIB.ext_tensor(6, returns=consumer(0))
        self.assertEqual(LIB.ext_syncs()[0], n)
        a = np.arange(3.0)  # a host result takes only None, as a host Tensor does
        for stream in (1, -1, 5):
            with self.assertRaises(BufferError):
                LIB.same(a, returns=lambda x: x.__dlpack__(stream=stream))
        self.assertEqual(LIB.same(a, returns=lambda x: x.__dlpack__(stream=None)).__class__.__name__, "PyCapsule")


class _Capsule:
    """A producer that hands over one capsule made beforehand: how NumPy 1.24, whose from_dlpack
    passes no copy= nor dl_device=, imports a capsule of __dlpack__(copy=...)."""

    def __init__(self, capsule, device=(dlpackgo.CPU, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kw):
        c, self.capsule = self.capsule, None
        return c

    def __dlpack_device__(self):
        return self.device


def _as_tensor(f, *args):
    return f(*args, returns="tensor")


def _as_result(f, *args):
    return f(*args, returns=lambda x: x)  # the object a function result reaches a consumer as


class CopyProtocol(Base):
    """copy= and dl_device= of __dlpack__, as the Python array API standard says, for both
    exporters: a dlpackgo.Tensor and a function's result (what a returns= callable gets). copy=True
    always exports a fresh copy the consumer owns (IS_COPIED in a versioned capsule), False never
    copies, None copies only what cannot be shared; dl_device may name the tensor's own device."""

    EXPORTERS = (("Tensor", _as_tensor), ("result", _as_result))

    def test_copy_true_exports_a_fresh_copy(self):
        for name, make in self.EXPORTERS:
            with self.subTest(name):
                released = LIB.counted_releases()
                x = make(LIB.counted, 5)  # 0, 1, 2, 3, 4 in C memory whose release is counted
                orig = torch.utils.dlpack.from_dlpack(x.__dlpack__())  # the Go memory, shared
                # legacy capsules (NumPy 1.24, PyTorch 1.13): the flag cannot show, the copy can
                c = torch.utils.dlpack.from_dlpack(x.__dlpack__(copy=True))
                self.assertEqual(c.tolist(), [0, 1, 2, 3, 4])
                self.assertNotEqual(c.data_ptr(), orig.data_ptr(), "a new buffer")
                c[0] = -1
                orig[1] = 11
                self.assertEqual((orig[0].item(), c[1].item()), (0, 1), "no aliasing either way")
                n = np.from_dlpack(_Capsule(x.__dlpack__(copy=True, dl_device=(dlpackgo.CPU, 0))))
                self.assertEqual(n.tolist(), [0, 11, 2, 3, 4])
                self.assertNotEqual(n.ctypes.data, orig.data_ptr())
                # a versioned capsule says it is a copy
                v = VersionedView(x.__dlpack__(copy=True, max_version=(1, 3)))
                self.assertEqual(v.flags & dlpackgo.FLAG_IS_COPIED, dlpackgo.FLAG_IS_COPIED)
                self.assertFalse(v.flags & dlpackgo.FLAG_READ_ONLY, "the consumer's to write")
                self.assertNotEqual(v.data, orig.data_ptr())
                self.assertEqual([v.f64(i).value for i in range(5)], [0, 11, 2, 3, 4])
                v.f64(2).value = -2
                self.assertEqual(orig[2].item(), 2)
                v.delete()
                if NP_VERSION >= (2, 1):  # a consumer that passes copy= itself
                    m = np.from_dlpack(x, copy=True)
                    self.assertNotEqual(m.ctypes.data, orig.data_ptr())
                    del m
                self.assertEqual(LIB.counted_releases(), released, "copies never free the original")
                self.assertEqual(orig.tolist(), [0, 11, 2, 3, 4])
                del x, orig, c, n
                eventually(lambda: LIB.counted_releases() == released + 1, "the memory let go")
                for _ in range(3):
                    gc.collect()
                    LIB.collect()
                self.assertEqual(LIB.counted_releases(), released + 1, "exactly once")

    def test_copy_false_and_none_share(self):
        for name, make in self.EXPORTERS:
            for copy in (False, None):
                with self.subTest(name, copy=copy):
                    released = LIB.counted_releases()
                    x = make(LIB.counted, 4)
                    orig = torch.utils.dlpack.from_dlpack(x.__dlpack__())
                    s = torch.utils.dlpack.from_dlpack(x.__dlpack__(copy=copy, dl_device=(1, 0)))
                    self.assertEqual(s.data_ptr(), orig.data_ptr())
                    s[3] = 42
                    self.assertEqual(orig[3].item(), 42, "the consumer writes the Go memory")
                    v = VersionedView(x.__dlpack__(copy=copy, max_version=(1, 3)))
                    self.assertEqual((v.data, v.flags), (orig.data_ptr(), 0), "shared, not copied")
                    self.assertEqual(v.f64(3).value, 42)
                    v.delete()
                    del x, orig, s
                    eventually(lambda: LIB.counted_releases() == released + 1, "the memory let go")

    def test_device_and_argument_checks_are_the_same(self):
        for name, make in self.EXPORTERS:
            with self.subTest(name):
                x = make(LIB.add, np.ones(3), np.ones(3))
                for own in ((1, 0), [1, 0], (np.int32(1), np.int64(0))):
                    for copy in (None, False, True):
                        a = torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=own, copy=copy))
                        self.assertEqual(a.tolist(), [2, 2, 2], (own, copy))
                with self.assertRaisesRegex(BufferError, r"device \(2, 0\).* never moved"):
                    x.__dlpack__(dl_device=(2, 0), copy=True)
                with self.assertRaisesRegex(ValueError, "dl_device must be"):
                    x.__dlpack__(dl_device="cpu")
                with self.assertRaisesRegex(ValueError, "copy must be"):
                    x.__dlpack__(copy="yes")
                with self.assertRaisesRegex(ValueError, "copy must be"):
                    x.__dlpack__(copy=1)
                with self.assertRaisesRegex(BufferError, "only None on CPU"):
                    x.__dlpack__(stream=1, copy=True)
                del x

    def test_device_tensors_share_and_do_not_copy(self):
        # a device without a StreamSync (kDLVulkan over C memory): shared for copy None and
        # False, stream None and -1, dl_device None and its own; no copy of device memory here
        for name, make in self.EXPORTERS:
            with self.subTest(name):
                x = make(LIB.vk_tensor, 4)
                self.assertEqual(x.__dlpack_device__(), (7, 0))
                data = set()
                for kw in ({}, {"copy": False}, {"dl_device": (7, 0)}, {"stream": -1},
                           {"copy": False, "stream": -1, "dl_device": (7, 0)}):
                    v = VersionedView(x.__dlpack__(max_version=(1, 3), **kw))
                    self.assertEqual((v.device, v.flags), ((7, 0), 0), kw)
                    data.add(v.data)
                    v.delete()
                self.assertEqual(len(data), 1, "one memory, shared")
                for mv in (None, (1, 3)):
                    with self.assertRaisesRegex(BufferError, "(not host-accessible: vulkan|on vulkan:0, not in host memory)"):
                        x.__dlpack__(copy=True, max_version=mv)
                with self.assertRaises(BufferError):
                    x.__dlpack__(dl_device=(1, 0))
                with self.assertRaisesRegex(BufferError, "only None and -1"):
                    x.__dlpack__(stream=7)
                del x

    def test_read_only_results(self):
        # a read-only tensor is never shared; a function's read-only result reaches the consumer
        # as the copy Go made of it when the function returned, which copy=False shares and
        # copy=True copies again
        a = np.arange(4.0)
        t = LIB.readonly(a, returns="tensor")
        with self.assertRaises(BufferError):
            t.__dlpack__(copy=False)
        c = VersionedView(t.__dlpack__(copy=True, max_version=(1, 3)))
        self.assertEqual(c.flags, dlpackgo.FLAG_IS_COPIED)
        self.assertNotEqual(c.data, a.ctypes.data)
        c.delete()
        t.release()
        r = LIB.readonly(a, returns=lambda x: x)
        s = torch.utils.dlpack.from_dlpack(r.__dlpack__(copy=False))
        self.assertNotEqual(s.data_ptr(), a.ctypes.data)
        c = torch.utils.dlpack.from_dlpack(r.__dlpack__(copy=True))
        self.assertNotEqual(c.data_ptr(), s.data_ptr(), "a copy of its own")
        self.assertEqual(c.tolist(), [0, 1, 2, 3])
        del r, s, c


# A float64 result this long is copied by Go into memory mapped outside its heap (memory.NewUninit
# from memory.DefaultAllocation's MappedMin, 4 MiB, on): foreign memory, which LIB.live_foreign()
# counts until it is released.
MAPPED = (4 << 20) // 8 + 1


class CopiedResults(Base):
    """A function result Go must copy when it returns (read-only, or with negative strides) is
    copied once, and every copy=None/False __dlpack__ of it shares that one copy: the consumers
    alias each other, so none of them may be told it owns the memory alone (IS_COPIED). copy=True
    still exports a fresh copy of its own, IS_COPIED. The copy belongs to the exports of it: it is
    released exactly once, when the last of them is deleted, not later by Go's collector."""

    def _shares(self, r):
        """Three shares of result r: two versioned capsules (one with copy=False) read with
        ctypes, and a legacy one in PyTorch 1.13."""
        return (VersionedView(r.__dlpack__(max_version=(1, 3))),
                VersionedView(r.__dlpack__(max_version=(1, 3), copy=False)),
                torch.utils.dlpack.from_dlpack(r.__dlpack__()))

    def test_shares_of_a_copy_are_not_copies(self):
        cases = (("read-only", LIB.readonly, np.arange(4.0), [0, 1, 2, 3]),
                 ("reversed", LIB.reversed, np.arange(4.0), [3, 2, 1, 0]))
        for name, fn, a, want in cases:
            with self.subTest(name):
                r = fn(a, returns=lambda x: x)
                v1, v2, s = self._shares(r)
                self.assertNotEqual(v1.data, a.ctypes.data, "Go copied the result")
                self.assertEqual((v2.data, s.data_ptr()), (v1.data, v1.data), "one copy, shared")
                self.assertFalse(v1.flags & v2.flags & dlpackgo.FLAG_IS_COPIED,
                                 "two consumers of one buffer both told they own it")
                self.assertEqual((v1.flags, v2.flags), (0, 0), "a shared copy is no consumer's own")
                # the consumers alias: what one writes, the others see (NumPy 1.24 and PyTorch
                # 1.13 read legacy capsules, without flags, and share the same copy)
                n = np.from_dlpack(r)
                self.assertEqual(n.ctypes.data, v1.data)
                v1.f64(0).value = -1
                self.assertEqual((v2.f64(0).value, s[0].item(), n[0]), (-1, -1, -1))
                s[1] = -2
                self.assertEqual((v1.f64(1).value, v2.f64(1).value, n[1]), (-2, -2, -2))
                self.assertEqual(a.tolist(), [0, 1, 2, 3], "the argument is not the copy")
                # so do repeated shares from the C fast path (the share builtin)
                v3 = VersionedView(r.__dlpack__(max_version=(1, 3)))
                self.assertEqual((v3.data, v3.flags), (v1.data, 0))
                # copy=True: a fresh buffer the consumer owns alone
                c = VersionedView(r.__dlpack__(copy=True, max_version=(1, 3)))
                self.assertEqual(c.flags, dlpackgo.FLAG_IS_COPIED)
                self.assertNotEqual(c.data, v1.data)
                self.assertEqual([c.f64(i).value for i in range(4)], [-1, -2] + want[2:])
                c.f64(2).value = 99
                self.assertEqual(v1.f64(2).value, want[2], "the copy=True copy is not shared")
                for v in (v1, v2, v3, c):
                    v.delete()
                del r, s, n

    def test_the_copy_is_released_by_the_last_deleter(self):
        # The argument is a Go tensor (mapped too: foreign memory held by its handle), so the call
        # leaves nothing for the collector and no collection is needed to see the copy go: the
        # first round runs none between the call and the last deleter, the second collects
        # garbage while consumers hold the copy, which must then stay.
        x = arange((MAPPED,))
        eventually(lambda: LIB.live_foreign() == self.foreign + 1, "the argument, mapped")
        base = LIB.live_foreign()
        for collect in (False, True):
            # the last consumer to let go: a versioned one (ctypes), or PyTorch 1.13 (legacy)
            for last in ("versioned", "torch"):
                with self.subTest(collect=collect, last=last):
                    r = LIB.readonly(x, returns=lambda y: y)
                    self.assertEqual(LIB.live_foreign(), base + 1, "one copy, mapped")
                    v = VersionedView(r.__dlpack__(max_version=(1, 3)))
                    s = torch.utils.dlpack.from_dlpack(r.__dlpack__())
                    n = np.from_dlpack(r)
                    # copy=True: another mapped copy, its export's own
                    c = VersionedView(r.__dlpack__(copy=True, max_version=(1, 3)))
                    self.assertEqual(c.flags, dlpackgo.FLAG_IS_COPIED)
                    self.assertEqual(LIB.live_foreign(), base + 2)
                    del r  # the result itself: only the consumers hold its copy now
                    if collect:
                        for _ in range(3):
                            gc.collect()
                            LIB.collect()
                            time.sleep(0.01)
                        self.assertEqual(LIB.live_foreign(), base + 2, "released under live exports")
                    self.assertEqual((v.f64(MAPPED - 1).value, s[-1].item(), n[-1], c.f64(1).value),
                                     (MAPPED - 1,) * 3 + (1,))
                    del n
                    if last == "versioned":
                        del s
                        self.assertEqual(LIB.live_foreign(), base + 2, "released under a live export")
                        v.delete()  # the last consumer: its deleter releases the copy, at once
                    else:
                        v.delete()
                        self.assertEqual(LIB.live_foreign(), base + 2, "released under a live export")
                        del s
                    self.assertEqual(LIB.live_foreign(), base + 1,
                                     "the result's copy outlived its last consumer")
                    c.delete()
                    self.assertEqual(LIB.live_foreign(), base, "the copy=True copy outlived its deleter")
                    for _ in range(3):
                        gc.collect()
                        LIB.collect()
                        time.sleep(0.01)
                    self.assertEqual(LIB.live_foreign(), base, "exactly once")
        x.release()

if __name__ == "__main__":
    unittest.main()


class CachedCapsule:
    """A producer whose __dlpack__ answers the same capsule every time (one managed tensor)."""

    def __init__(self, x):
        self.capsule = x.__dlpack__()

    def __dlpack__(self, *args, **kwargs):
        return self.capsule


class Review(Base):
    """The adversarial review of the call path (call.c, numpy.c, call.go, core.ImportExplicitWith):
    arguments kept, viewed, repeated, released by the function, converted with errors midway, and
    calls from many threads. Every case checks the arguments' reference counts: each call takes
    what it needs and lets go of exactly that."""

    def tearDown(self):
        LIB.drop_kept()
        super().tearDown()

    def test_a_kept_argument_is_released_after_the_call(self):
        # the doc: the function may keep views; the argument itself is released after the call
        a = np.arange(4.0)
        refs = sys.getrefcount(a)
        LIB.keep_raw(a)
        self.assertEqual(LIB.raw_state(), "released")
        self.assertEqual(sys.getrefcount(a), refs, "nothing holds the array on")
        LIB.keep_raw(torch.arange(3.0))  # a producer's capsule (call.c's guard)
        self.assertEqual(LIB.raw_state(), "released")

    def test_views_of_arguments_outlive_the_call_and_the_array(self):
        # Slice and Transpose of an argument whose managed tensor (and, above 8 dimensions, its
        # shape) lay on the call's stack or in memory freed after the call
        for shape in ((6,), (4, 3), (2,) * 9, (1,) * 31 + (3,)):
            with self.subTest(shape=shape):
                a = np.arange(float(np.prod(shape))).reshape(shape)
                want = 2 * a.sum() if a.ndim > 1 else a[::2].sum() + a.sum()
                if a.ndim > 1:
                    want = a[::2].sum() + a.sum()
                refs = sys.getrefcount(a)
                LIB.keep_views(a)
                self.assertEqual(sys.getrefcount(a), refs + 1, "the views hold the array")
                del a
                gc.collect()
                junk = [np.full((64,), 7.0) for _ in range(1000)]  # reuse freed memory if any
                for _ in range(50):
                    LIB.noop(np.zeros((3,) * 9))  # overwrite the stack and heap of a call
                self.assertEqual(LIB.kept_total(), want)
                del junk
                self.assertEqual(LIB.drop_kept(), 2)

    def test_views_of_producer_arguments_outlive_the_call(self):
        # a PyTorch tensor comes as its capsule, behind call.c's guard (heap, not stack)
        t = torch.arange(12.0).reshape(3, 4)
        want = float(t[::2].sum() + t.sum())
        LIB.keep_views(t)
        del t
        gc.collect()
        junk = [torch.full((12,), 7.0) for _ in range(1000)]
        self.assertEqual(LIB.kept_total(), want)
        del junk
        self.assertEqual(LIB.drop_kept(), 2)

    def test_dlpack_that_raises_midway(self):
        a, b = np.arange(3.0), np.zeros((2,) * 9)
        refs = (sys.getrefcount(a), sys.getrefcount(b))

        class Broken:
            def __dlpack__(self, *args, **kwargs):
                raise ValueError("no capsule today")

        for _ in range(100):
            with self.assertRaises(ValueError):
                LIB.tensor_and_float(a, 1.0, Broken())
            with self.assertRaises(ValueError):
                LIB.pair(b, Broken())
        self.assertEqual((sys.getrefcount(a), sys.getrefcount(b)), refs)

    def test_the_same_array_twice(self):
        a = np.arange(5.0)
        t = torch.arange(5.0)
        refs = sys.getrefcount(a)
        for _ in range(100):
            self.assertEqual(LIB.pair(a, a), 10)
            self.assertEqual(LIB.pair(t, t), 10)
            self.assertEqual(LIB.add(a, a).tolist(), (2 * a).tolist())
        self.assertEqual(sys.getrefcount(a), refs)
        LIB.keep_pair(a, a)
        self.assertEqual(sys.getrefcount(a), refs + 2)
        self.assertEqual(LIB.drop_kept(), 2)
        self.assertEqual(sys.getrefcount(a), refs)

    def test_the_same_capsule_twice_is_refused(self):
        # a producer whose __dlpack__ answers the same capsule every time: handing its one
        # managed tensor to Go twice would run its deleter twice
        a = np.arange(5.0)

        refs = sys.getrefcount(a)
        c = CachedCapsule(a)
        self.assertEqual(sys.getrefcount(a), refs + 1)
        for f in (LIB.pair, LIB.add):
            with self.subTest(f=f.__name__), self.assertRaises(TypeError) as cm:
                f(c, c)
            self.assertIn("capsule", str(cm.exception))
        self.assertEqual(LIB.pair(c, a), 10)  # the capsule is still unused: one use is fine
        del c
        gc.collect()
        self.assertEqual(sys.getrefcount(a), refs, "the capsule's tensor let go once")

    def test_a_capsule_consumed_while_arguments_convert(self):
        # Python code runs in the middle of the conversion (__float__): if it hands a capsule
        # the call checked already to another consumer, the call must not import it too
        a = np.arange(5.0)

        refs = sys.getrefcount(a)
        c = CachedCapsule(a)

        class Thief:
            def __float__(self):
                self.got = np.from_dlpack(c)  # NumPy takes the capsule's tensor
                return 1.0

        thief = Thief()
        with self.assertRaises(TypeError) as cm:
            LIB.tensor_and_float(c, thief, np.zeros(2))
        self.assertIn("capsule", str(cm.exception))
        self.assertEqual(thief.got.tolist(), a.tolist())
        del thief, c
        gc.collect()
        self.assertEqual(sys.getrefcount(a), refs, "the tensor let go once, by NumPy")

    def test_many_views_released_in_one_call(self):
        # more releases during one call than call.c defers (64): the rest take the GIL from Go
        arrays = [np.arange(3.0), np.zeros((2,) * 9), torch.arange(3.0)]
        refs = [sys.getrefcount(a) for a in arrays]
        for x in arrays:
            LIB.keep_many(x, 100)
        self.assertEqual(LIB.drop_kept(), 300)
        del x
        self.assertEqual([sys.getrefcount(a) for a in arrays], refs)

    def test_views_dropped_without_release(self):
        # the views' collector cleanups release them, from a goroutine, taking the GIL
        a = np.arange(3.0)
        refs = sys.getrefcount(a)
        LIB.keep_many(a, 10)
        self.assertEqual(LIB.forget_kept(), 10)
        self.assertTrue(eventually_equal(lambda: (LIB.collect(), sys.getrefcount(a))[1], refs))

    def test_the_same_tensor_handle_twice(self):
        a = np.arange(4.0)
        live = LIB.from_dlpack(a)
        h = live.handle  # adopted: C passes its handle
        refs = (sys.getrefcount(live), sys.getrefcount(h), sys.getrefcount(LIB.pair))
        s = "a string argument"
        srefs = sys.getrefcount(s)
        for _ in range(100):
            self.assertEqual(LIB.pair(live, live), 8)
            self.assertEqual(LIB.pair(live, a), 8)
            self.assertEqual(LIB.echo(1, 2, 3, 4, 5.0, 6.0, True, s)[-1], s + "!")
        self.assertEqual((sys.getrefcount(live), sys.getrefcount(h), sys.getrefcount(LIB.pair)), refs)
        self.assertEqual(sys.getrefcount(s), srefs)
        LIB.keep_pair(live, live)
        live.release()
        self.assertEqual(LIB.kept_total(), 12.0, "views of a handle's tensor outlive its release")
        self.assertEqual(LIB.drop_kept(), 2)

    def test_dlpack_must_answer_a_capsule(self):
        # an int from __dlpack__ is not the handle of a dlpackgo.Tensor
        a = np.arange(3.0)
        live = LIB.from_dlpack(a)

        class Liar:
            def __dlpack__(self, *args, **kwargs):
                return live.handle

        with self.assertRaises(TypeError):
            LIB.first_address(Liar())
        live.release()

    def test_errors_midway_let_go_of_every_argument_once(self):
        a, b = np.arange(3.0), np.zeros((2,) * 10)  # on the stack, and with heap dimensions
        t = torch.arange(3.0)
        ra, rb, rt = sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(t)

        class BadFloat:
            def __float__(self):
                raise ZeroDivisionError("from __float__")

        class Reentrant:
            def __float__(self):
                LIB.keep_pair(a, b)  # a call inside the conversion of another
                return 1.0

        for _ in range(200):
            with self.assertRaises(TypeError):
                LIB.tensor_and_float(a, "x", b)
            with self.assertRaises(ZeroDivisionError):
                LIB.tensor_and_float(a, BadFloat(), t)
            with self.assertRaises(TypeError):
                LIB.tensor_and_float(b, 1.0, [1.0])
            with self.assertRaises(TypeError):
                LIB.tensor_and_float(t, 1.0, object())
            with self.assertRaises(TypeError):
                LIB.scale(a, 1.0, 2.0)  # wrong count
            with self.assertRaises(TypeError):
                LIB.scale(a)
            with self.assertRaises(TypeError):
                LIB.scale(a, factor=1.0)  # keyword
            with self.assertRaises(OverflowError):
                LIB.echo(1, 2, 3, -4, 5.0, 6.0, True, "s")
            with self.assertRaises(OverflowError):
                LIB.echo(1000, 2, 3, 4, 5.0, 6.0, True, "s")  # Go refuses int8 1000
        self.assertIsNone(LIB.tensor_and_float(a, Reentrant(), b))
        self.assertEqual(LIB.drop_kept(), 2)
        self.assertEqual((sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(t)), (ra, rb, rt))

    def test_a_failing_argument_after_a_string_of_three_bytes(self):
        # a string argument's length (3 here) is not a NumPy argument to let go of (call.c's
        # error path took it for one: free() of stack garbage, an abort)
        for s in ("", "ab", "abc", "abcd", "x" * 100):
            for bad in ("x", None, object()):
                with self.assertRaises(TypeError):
                    LIB.string_and_float(s, bad)
        self.assertIsNone(LIB.string_and_float("abc", 1.0))

    def test_a_function_that_releases_its_argument(self):
        for a in (np.arange(4.0), np.arange(6.0).reshape((1,) * 9 + (6,)), torch.arange(4.0)):
            refs = sys.getrefcount(a)
            for _ in range(100):
                self.assertEqual(LIB.release_arg(a), a.numel() if hasattr(a, "numel") else a.size)
            self.assertEqual(sys.getrefcount(a), refs)

    def test_odd_arrays(self):
        class Sub(np.ndarray):
            pass

        unaligned = np.frombuffer(bytearray(25), dtype=np.uint8)[1:].view(np.float64)
        for a in (np.array(2.0), np.arange(3.0).view(Sub), unaligned,
                  np.zeros((1,) * 32), np.zeros((2,) * 9)[..., ::-1], np.zeros((0, 3))):
            with self.subTest(shape=a.shape, type=type(a).__name__):
                refs = sys.getrefcount(a)
                try:  # asked as calls ask (NumPy 2.x exports read-only arrays only versioned)
                    try:
                        a.__dlpack__(max_version=dlpackgo.DLPACK_VERSION)
                    except TypeError:  # NumPy < 2.1: no max_version
                        a.__dlpack__()
                except BufferError:  # NumPy < 1.25 exports no read-only array: neither do calls
                    for _ in range(100):
                        with self.assertRaises(BufferError):
                            LIB.pair(a, np.zeros(1))
                        with self.assertRaises(BufferError):
                            LIB.pair(np.zeros(1), a)
                    self.assertEqual(sys.getrefcount(a), refs)
                    continue
                gc.collect()
                self.assertEqual(sys.getrefcount(a), refs)
                for _ in range(100):
                    LIB.noop(a)
                    LIB.pair(a, a)
                self.assertEqual(LIB.total(a), float(a.sum()))
                self.assertEqual(sys.getrefcount(a), refs)
                LIB.keep_views(a)
                self.assertGreater(sys.getrefcount(a), refs)
                LIB.drop_kept()
                gc.collect()
                self.assertEqual(sys.getrefcount(a), refs)

    def test_a_released_result(self):
        a = np.arange(3.0)
        refs = sys.getrefcount(a)
        for returns in ("numpy", "torch", "tensor"):
            with self.subTest(returns=returns), self.assertRaises(dlpackgo.GoError) as cm:
                LIB.released_result(a, returns=returns)
            self.assertIn("released", str(cm.exception))
        self.assertEqual(sys.getrefcount(a), refs)

    def test_panics_let_go(self):
        a = np.arange(3.0)
        refs = sys.getrefcount(a)
        for _ in range(20):
            with self.assertRaises(dlpackgo.GoPanic):
                LIB.crash(a)
        self.assertEqual(sys.getrefcount(a), refs)

    def test_views_released_by_goroutines(self):
        # the deleters run on threads Go made, taking the GIL while Python threads call
        arrays = [np.arange(float(n + 1)) for n in range(16)]
        refs = [sys.getrefcount(a) for a in arrays]
        for a in arrays:
            LIB.keep_async(a, 5)
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:  # hold the GIL, call, hold it again
            for a in arrays:
                LIB.noop(a)
        del a
        self.assertEqual(LIB.async_done(), 16)
        self.assertEqual([sys.getrefcount(a) for a in arrays], refs)

    def test_many_threads_at_once(self):
        shared = np.arange(10.0)
        refs = sys.getrefcount(shared)
        errors = []

        def work(k):
            try:
                own = np.arange(float(k + 1)).reshape((1,) * (k % 12) + (k + 1,))
                own_refs = sys.getrefcount(own)
                for i in range(2000):
                    LIB.noop(shared)
                    LIB.pair(own, shared)
                    if i % 100 == 0:
                        LIB.keep_async(own, 1)
                        LIB.tensor_and_float(shared, i, own)
                    if i % 500 == 0:
                        with self.assertRaises(TypeError):
                            LIB.tensor_and_float(own, "x", shared)
                self.assertTrue(eventually_equal(lambda: sys.getrefcount(own), own_refs))
            except Exception as e:  # reported by the main thread
                errors.append(e)

        ths = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        LIB.async_done()
        self.assertEqual(errors, [])
        self.assertEqual(sys.getrefcount(shared), refs)

    def test_a_function_that_releases_a_handles_tensor(self):
        # the tensor a handle argument gives the function is the function's, not the registry's
        a = np.arange(4.0)
        live = LIB.from_dlpack(a)
        for _ in range(3):
            self.assertEqual(LIB.release_arg(live), 4)
            self.assertEqual(LIB.total(live), 6.0, "the handle lives on")
        live.release()

    def test_handles_released_by_other_threads_during_calls(self):
        # a dlpackgo.Tensor released while calls that pass it run without the GIL: each call
        # sees the tensor or a ValueError, never freed memory
        a = np.arange(1000.0)
        refs = sys.getrefcount(a)
        errors = []
        for _ in range(50):
            live = LIB.from_dlpack(a)
            live.handle
            stop = threading.Event()

            def caller():
                try:
                    while not stop.is_set():
                        try:
                            self.assertEqual(LIB.total(live), 499500.0)
                            LIB.keep_pair(live, a)
                        except (ValueError, BufferError):  # released before the call took
                            pass  # it: ValueError in Python, BufferError (ErrReleased) in Go
                except Exception as e:
                    errors.append(e)

            ths = [threading.Thread(target=caller) for _ in range(3)]
            for t in ths:
                t.start()
            time.sleep(0.002)
            live.release()
            stop.set()
            for t in ths:
                t.join()
            self.assertEqual(LIB.kept_total() % 499500.0, 0.0)
            LIB.drop_kept()
        del live
        self.assertEqual(errors, [])
        self.assertTrue(eventually_equal(lambda: sys.getrefcount(a), refs))

    def test_no_growth_over_100k_calls(self):
        import resource
        import tracemalloc
        a = np.arange(1000.0)
        b = np.zeros((2,) * 10)
        refs = (sys.getrefcount(a), sys.getrefcount(b))

        def calls(n):
            for _ in range(n):
                LIB.noop(a)
                LIB.pair(a, b)

        calls(20000)  # warm up: caches, arenas
        gc.collect()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        calls(100000)
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
        self.assertLess(grown, 64 << 10, "Python memory grew over 100k calls")
        self.assertLess(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss, 32 << 10,
                        "RSS grew over 100k calls (KiB)")
        self.assertEqual((sys.getrefcount(a), sys.getrefcount(b)), refs)


def eventually_equal(get, want):
    for _ in range(300):
        if get() == want:
            return True
        time.sleep(0.01)
    return False
