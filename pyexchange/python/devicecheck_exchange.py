#!/usr/bin/env python3
"""Device check of dlpackgo's DLPack 1.3 C exchange API against PyTorch's own (torch >= 2.10).

Run by devicecheck/devicecheck.sh on the GPU machine, from pyexchange/python:

    DLPACKGO_TESTLIB=.devicebuild/libdlpackgo_test.so [XHARNESS_DIR=dir] python3 devicecheck_exchange.py

Checks, with torch.Tensor.__dlpack_c_exchange_api__ (read with ctypes, version printed):
  * import, CPU: Library.from_dlpack of torch tensors (contiguous, transposed, stepped, 0-d,
    empty, int/float/bool dtypes) takes torch's API (exchange_counts), zero-copy, mutation visible
    both ways; torch tensors outlive nothing they should not (live counts settle);
  * export, CPU: Library.to_framework(t, torch.Tensor) makes a torch tensor over a Go tensor through
    torch's managed_tensor_to_py_object_no_sync (pointer identity, mutation visible, read-only Go
    tensors arrive as copies); and whether torch.from_dlpack(go_tensor) uses dlpackgo.Tensor's
    API (reported, not required);
  * CUDA: from_dlpack of a CUDA tensor falls back on __dlpack__ (the API does not synchronize
    streams); via="api" takes it through torch's API (same device address, device (2, i));
    current_work_stream is torch.cuda.current_stream() on the default and on a side stream;
    the Go tensor goes back to torch through torch's API and equals the original;
  * torch's allocator (called with ctypes, set_error counted, and through Library.allocate): CPU
    and CUDA tensors taken by Go and handed back to torch over torch's own memory;
  * timings (best of 5): import via the API vs via __dlpack__ (Python level, Tensor released);
    and, when XHARNESS_DIR holds xharness built for this Python (devicecheck.sh builds it if gcc
    and Python.h are there), torch's own API from_py_object + deleter and to_py_object in C, next
    to dlpackgo.Tensor's.

Prints PASS/FAIL lines and a JSON line of timings. Exit status 0 all passed, 1 a failure,
2 torch has no exchange API (nothing to check: "NO TORCH EXCHANGE API").
"""

import ctypes
import gc
import json
import os
import sys
import timeit
import traceback
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p, py_object

import torch

import dlpackgo
from test_dlpackgo import LIB, C, arange, go_get, go_set, go_view

results = []


def check(name):
    def deco(fn):
        try:
            fn()
            results.append(("PASS", name))
            print("PASS", name, flush=True)
        except Exception:
            results.append(("FAIL", name))
            print("FAIL", name, flush=True)
            traceback.print_exc()
        return fn
    return deco


class Header(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32), ("prev_api", c_void_p)]


class ExchangeAPI(Structure):
    _fields_ = [("header", Header), ("allocator", c_void_p), ("from_py", c_void_p), ("to_py", c_void_p),
                ("dltensor_from_py", c_void_p), ("stream", c_void_p)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device_type", c_int32), ("device_id", c_int32), ("ndim", c_int32),
                ("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


_get_pointer = ctypes.PYFUNCTYPE(c_void_p, py_object, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_new = ctypes.PYFUNCTYPE(py_object, c_void_p, c_void_p, c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_NAME_V = ctypes.create_string_buffer(b"dltensor_versioned")
SET_ERROR = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p)
ALLOCATOR = ctypes.PYFUNCTYPE(c_int, POINTER(DLTensor), POINTER(c_void_p), c_void_p, SET_ERROR)


def torch_api():
    cap = getattr(torch.Tensor, "__dlpack_c_exchange_api__", None)
    if cap is None:
        return None
    return ExchangeAPI.from_address(_get_pointer(cap, b"dlpack_exchange_api"))


def settle(base):
    for _ in range(200):
        gc.collect()
        LIB.collect()
        if (LIB.live_exports(), LIB.live_handles(), LIB.live_foreign()) == base:
            return
        torch.cuda.synchronize() if torch.cuda.is_available() else None
    raise AssertionError(f"live counts {(LIB.live_exports(), LIB.live_handles(), LIB.live_foreign())} != {base}")


def counts():
    return LIB.exchange_counts()


def main():
    api = torch_api()
    print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}")
    if api is None:
        print("NO TORCH EXCHANGE API: torch.Tensor has no __dlpack_c_exchange_api__")
        return 2
    print(f"torch exchange API {api.header.major}.{api.header.minor}, prev_api={api.header.prev_api}, "
          f"dltensor_from_py_object={'set' if api.dltensor_from_py else 'NULL'}")
    base = (LIB.live_exports(), LIB.live_handles(), LIB.live_foreign())

    @check("CPU import of torch tensors through torch's API: zero-copy, every layout and dtype")
    def _():
        before = counts()["import_api"]
        x = torch.arange(12, dtype=torch.float64).reshape(3, 4)
        views = {"contiguous": x, "transposed": x.t(), "stepped": x[:, ::2], "0-d": x[1, 2],
                 "empty": x[:0], "int32": torch.arange(6, dtype=torch.int32), "bool": torch.ones(3, dtype=torch.bool),
                 "float16": torch.ones(4, dtype=torch.float16), "bfloat16": torch.ones(4, dtype=torch.bfloat16)}
        for name, v in views.items():
            g = LIB.from_dlpack(v)
            assert g.shape == tuple(v.shape), (name, g.shape)
            if v.numel():
                assert g.data_ptr == v.data_ptr(), name
                assert g.element_strides == tuple(v.stride()), (name, g.element_strides, v.stride())
            g.release()
        assert counts()["import_api"] - before == len(views), counts()
        g = LIB.from_dlpack(x)
        assert go_set(g, 42.0, 2, 3) and x[2, 3].item() == 42.0
        x[0, 1] = -5
        assert go_get(g, 0, 1) == -5
        del x
        gc.collect()
        assert go_get(g, 2, 3) == 42.0, "Go's import holds torch's memory"
        g.release()
        settle(base)

    @check("CPU export of Go tensors into torch through torch's API (to_framework)")
    def _():
        t = arange((2, 3))
        y = LIB.to_framework(t, torch.Tensor)
        assert isinstance(y, torch.Tensor) and y.data_ptr() == t.data_ptr and tuple(y.shape) == (2, 3)
        y[1, 1] = 77
        assert go_get(t, 1, 1) == 77
        ro = go_view(C.dlpackgo_test_readonly, t)
        z = LIB.to_framework(ro, torch.Tensor)
        assert z.data_ptr() != t.data_ptr and z[1, 1].item() == 77, "read-only Go tensors arrive as copies"
        t.release()
        assert y.sum().item() == sum([0, 1, 2, 3, 77, 5])
        del y, z, ro
        settle(base)
        before = counts()["export_api"]
        t = arange((4,))
        w = torch.from_dlpack(t)
        used = counts()["export_api"] - before
        print(f"  torch.from_dlpack(dlpackgo.Tensor) used dlpackgo's exchange API: {bool(used)}")
        assert w.data_ptr() == t.data_ptr
        del w, t
        settle(base)

    @check("torch's allocator (CPU) feeds Go; set_error on a bad prototype")
    def _():
        alloc = ALLOCATOR(api.allocator)
        errors = []
        set_error = SET_ERROR(lambda ctx, kind, msg: errors.append((kind, msg)))
        devices = [(1, 0)] + ([(2, torch.cuda.current_device())] if torch.cuda.is_available() else [])
        for dt, di in devices:
            shape = (c_int64 * 2)(2, 3)
            proto = DLTensor(None, dt, di, 2, 2, 32, 1, shape, None, 0)
            out = c_void_p()
            assert alloc(ctypes.byref(proto), ctypes.byref(out), None, set_error) == 0 and out.value, errors
            g = LIB.from_capsule(_capsule_new(out.value, ctypes.addressof(_NAME_V), None))
            assert g.shape == (2, 3) and g.dl_dtype == (2, 32, 1) and g.__dlpack_device__() == (dt, di)
            g.release()
            # the product path: Library.allocate, then back to torch over torch's own memory
            g = LIB.allocate(torch.Tensor, (2, 3), (2, 32, 1), (dt, di))
            assert g.shape == (2, 3) and g.__dlpack_device__() == (dt, di)
            if dt == 1:
                assert go_set(g, 2.5, 1, 2)
            y = LIB.to_framework(g, torch.Tensor)
            assert y.data_ptr() == g.data_ptr and tuple(y.shape) == (2, 3) and y.dtype == torch.float32
            if dt == 1:
                assert y[1, 2].item() == 2.5
            g.release()
            del y
        settle(base)

    if torch.cuda.is_available():
        @check("CUDA: fallback on __dlpack__ by default, torch's API with via='api', streams")
        def _():
            x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
            c0 = counts()
            g = LIB.from_dlpack(x)
            c1 = counts()
            assert c1["import_fallback"] - c0["import_fallback"] == 1 and c1["import_api"] == c0["import_api"], c1
            assert g.data_ptr == x.data_ptr() and g.__dlpack_device__() == (2, x.device.index)
            g.release()
            g = LIB.from_dlpack(x, via="api")
            assert counts()["import_api"] - c1["import_api"] == 1
            assert g.data_ptr == x.data_ptr() and g.__dlpack_device__() == (2, x.device.index)
            s = LIB.current_work_stream(torch.Tensor, (2, x.device.index))
            assert s == (torch.cuda.current_stream().cuda_stream or 0), (s, torch.cuda.current_stream())
            side = torch.cuda.Stream()
            torch.cuda.synchronize()  # x was made on the default stream; y is read on side
            with torch.cuda.stream(side):
                s2 = LIB.current_work_stream(torch.Tensor, (2, x.device.index))
                assert s2 == side.cuda_stream, (s2, side.cuda_stream)
                y = LIB.to_framework(g, torch.Tensor)  # back to torch, through torch's API
                assert y.data_ptr() == x.data_ptr() and y.device == x.device
                assert torch.equal(y, x)
            torch.cuda.synchronize()
            g.release()
            del y, x
            torch.cuda.synchronize()
            settle(base)

    timings = {}

    @check("timings: import via torch's API vs __dlpack__ (CPU, Python level)")
    def _():
        x = torch.arange(1000, dtype=torch.float64)
        take = LIB.from_dlpack
        n = 20000
        timings["import_api_ns"] = min(timeit.timeit(lambda: take(x).release(), number=n) / n for _ in range(5)) * 1e9
        timings["import_dlpack_ns"] = min(timeit.timeit(lambda: take(x, via="dlpack").release(), number=n) / n
                                          for _ in range(5)) * 1e9
        # the import alone: torch's table called, the tensor validated in C and kept as a pending
        # import (Go adopts it on first use), then dropped (torch's deleter)
        take_api = LIB._take_api
        timings["import_api_builtin_ns"] = min(timeit.timeit(lambda: take_api(x), number=n) / n
                                               for _ in range(5)) * 1e9
        t = arange((1000,))
        timings["torch_from_dlpack_go_ns"] = min(timeit.timeit(lambda: torch.from_dlpack(t), number=n) / n
                                                 for _ in range(5)) * 1e9
        timings["to_framework_torch_ns"] = min(timeit.timeit(lambda: LIB.to_framework(t, torch.Tensor), number=n) / n
                                               for _ in range(5)) * 1e9
        if torch.cuda.is_available():
            xc = torch.arange(1000, dtype=torch.float32, device="cuda")
            timings["import_api_cuda_ns"] = min(timeit.timeit(lambda: take(xc, via="api").release(), number=n) / n
                                                for _ in range(5)) * 1e9
            timings["import_dlpack_cuda_ns"] = min(timeit.timeit(lambda: take(xc, via="dlpack").release(), number=n) / n
                                                   for _ in range(5)) * 1e9
        hd = os.environ.get("XHARNESS_DIR")
        if hd:
            sys.path.insert(0, hd)
            import xharness
            timings["torch_api_from_py_ns"] = min(xharness.bench_api(x, n) for _ in range(5))
            timings["go_api_from_py_ns"] = min(xharness.bench_api(t, n) for _ in range(5))
            timings["go_capsule_ns"] = min(xharness.bench_capsule(t, n) for _ in range(5))
            h = xharness.make(2, 64, 1, (1000,))
            timings["torch_api_to_py_ns"] = min(xharness.bench_to_py(torch.Tensor, h, n) for _ in range(5))
            timings["go_api_to_py_ns"] = min(xharness.bench_to_py(dlpackgo.Tensor, h, n) for _ in range(5))
            if api.dltensor_from_py:
                timings["torch_api_view_ns"] = min(xharness.bench_view(x, n) for _ in range(5))
            timings["go_api_view_ns"] = min(xharness.bench_view(t, n) for _ in range(5))
        else:
            print("  no XHARNESS_DIR: C-level timings of torch's own API not taken (needs gcc and Python.h)")
        del t
        settle(base)

    print(json.dumps({k: round(v, 1) for k, v in timings.items()}))

    @check("torch's allocator reports a bad prototype through set_error (last: a crash here loses nothing)")
    def _():
        errors = []
        set_error = SET_ERROR(lambda ctx, kind, msg: errors.append((kind, msg)))
        bad = DLTensor(None, 1, 0, 1, 2, 32, 1, (c_int64 * 1)(-3), None, 0)
        out = c_void_p()
        rc = ALLOCATOR(api.allocator)(ctypes.byref(bad), ctypes.byref(out), None, set_error)
        print(f"  torch allocator with shape (-3,): rc={rc}, set_error calls={errors}")
        assert rc != 0 and not out.value and len(errors) == 1, (rc, out.value, errors)

    failed = [n for s, n in results if s == "FAIL"]
    print(f"exchange API device check: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
