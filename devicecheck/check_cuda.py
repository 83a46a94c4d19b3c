#!/usr/bin/env python3
"""Device check of dlpack-go's CUDA tensors against PyTorch and CuPy, through the product's Python
exchange: the dlpackgo package (pyexchange/python) and a Go library built on pyexchange.

It loads the C shared library built from devicecheck/cudalib (.devicebuild/libdlpackgpu.so,
or $DLPACK_GPU_LIB) with dlpackgo.Library: Go tensors come back as dlpackgo.Tensor, whose
__dlpack__ exports them (the stream argument honoured by the library's StreamSync, gpu.ReadyFor),
and Library.from_dlpack takes torch and CuPy tensors. It checks:

  * the exchange on host memory (runs without a GPU);
  * torch.from_dlpack and cupy.from_dlpack of Go CUDA tensors: values, zero-copy (same device
    address), mutation visible both ways, versioned and legacy capsules, the stream argument
    (Go fills on its own non-blocking stream; the consumer's stream waits for it), -1 and the
    refusal of stream 0, and that every export's deleter runs;
  * the reverse: PyTorch and CuPy CUDA tensors (contiguous and strided) taken by
    Library.from_dlpack, read and written by Go;
  * H2D/D2H bandwidth of Go's copies from/to pinned memory next to torch's own (goal >= 0.8x).

Prints PASS/FAIL lines and a summary. Exit status: 0 all passed, 1 a failure, 2 no GPU (only the
host checks ran: "NO GPU: device checks not run").
"""

import ctypes
import gc
import os
import statistics
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB_PATH = os.environ.get("DLPACK_GPU_LIB", os.path.join(ROOT, ".devicebuild", "libdlpackgpu.so"))
sys.path.insert(0, os.path.join(ROOT, "pyexchange", "python"))

import numpy as np  # noqa: E402

import dlpackgo  # noqa: E402

lib = None


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class ManagedVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))


def capsule_name(cap):
    for name in ("dltensor_versioned", "dltensor", "used_dltensor_versioned", "used_dltensor"):
        if _is_valid(cap, name.encode()):
            return name
    return "?"


def write(t, values):
    """Write values (a flat list) into Go tensor t, through Go (gpu.Copy from a NumPy array)."""
    lib.copy(t, np.asarray(values, dtype=np.float32).reshape(t.shape))


def read(t):
    """Go tensor t's values, as a flat list, through Go (gpu.Copy into a NumPy array)."""
    host = np.empty(t.shape, dtype=np.float32)
    lib.copy(host, t)
    return host.reshape(-1).tolist()


class Spy:
    """Serves a Go tensor through the protocol and records how consumers call __dlpack__."""

    def __init__(self, t):
        self.t, self.calls = t, []

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, **kw):
        self.calls.append({k: kw.get(k) for k in ("stream", "max_version")})
        return self.t.__dlpack__(**kw)


# ---- checks ----

results = []


class Skip(Exception):
    pass


def check(name, fn):
    try:
        detail = fn()
        results.append((name, "PASS"))
        print("PASS %s%s" % (name, ": " + detail if detail else ""), flush=True)
    except Skip as e:
        results.append((name, "SKIP"))
        print("SKIP %s: %s" % (name, e), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        results.append((name, "FAIL"))
        print("FAIL %s: %s: %s" % (name, type(e).__name__, e), flush=True)
        traceback.print_exc(limit=4)


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def settle_exports(base, what):
    for _ in range(50):
        gc.collect()
        if lib.live_exports() == base:
            return
        time.sleep(0.02)
    raise AssertionError("%s: %d exports still live, want %d" % (what, lib.live_exports(), base))


def host_selftest(torch):
    """The exchange on Go host memory, with whatever torch is installed (no GPU)."""
    base = lib.live_exports()

    def go_to_torch():
        t = lib.new(2, 3, 4)
        try:
            write(t, [float(i) for i in range(12)])
            x = torch.from_dlpack(t)
            expect(x.tolist() == [[float(4 * r + c) for c in range(4)] for r in range(3)], "values %s" % x)
            expect(x.data_ptr() == t.data_ptr, "not zero-copy")
            x.add_(100)
            expect(read(t)[5] == 105.0, "Go does not see torch's write")
            write(t, [-1.0] * 12)
            expect(float(x[2, 3]) == -1.0, "torch does not see Go's write")
            del x
        finally:
            t.release()
        settle_exports(base, "host export")
        return "zero-copy, mutation both ways"

    def capsule_destructor():
        t = lib.new(2, 2, 2)
        try:
            cap = t.__dlpack__(max_version=(1, 3))
            expect(capsule_name(cap) == "dltensor_versioned", "name %s" % capsule_name(cap))
            m = ManagedVersioned.from_address(_get_pointer(cap, b"dltensor_versioned"))
            expect((m.major, m.minor) == (1, 3), "version %d.%d" % (m.major, m.minor))
            d = m.dl_tensor
            expect(d.ndim == 2 and d.shape[1] == 2 and d.strides[0] == 2, "descriptor")
            expect(lib.live_exports() > base, "export not counted")
            del cap, d, m  # never consumed: the destructor calls the deleter
            settle_exports(base, "unconsumed versioned capsule")
            cap = t.__dlpack__()
            expect(capsule_name(cap) == "dltensor", "legacy name %s" % capsule_name(cap))
            del cap
            settle_exports(base, "unconsumed legacy capsule")
            # our own versioned capsule consumed by Go's importer: a round trip
            write(t, [1.0, 2.0, 3.0, 4.0])
            cap = t.__dlpack__(max_version=(1, 3))
            back = lib.from_capsule(cap)
            expect(capsule_name(cap) == "used_dltensor_versioned", "not renamed")
            del cap  # used: the destructor must not delete
            expect(read(back) == [1.0, 2.0, 3.0, 4.0], "round trip values")
            back.release()
        finally:
            t.release()
        settle_exports(base, "re-imported capsule")
        return "deleter runs once for unconsumed capsules, never for used ones"

    def torch_to_go():
        x = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()  # strided
        g = lib.from_dlpack(x)
        try:
            expect(g.data_ptr == x.data_ptr() and g.element_strides == (1, 4),
                   "data %#x strides %s" % (g.data_ptr, g.element_strides))
            expect(read(g) == x.contiguous().reshape(-1).tolist(), "values")
            write(g, [float(-k) for k in range(12)])
            expect(x.contiguous().reshape(-1).tolist() == [float(-k) for k in range(12)],
                   "torch does not see Go's write")
        finally:
            g.release()
        return "Library.from_dlpack, strides %s" % (g.element_strides,)

    check("host: Go tensor -> torch.from_dlpack", go_to_torch)
    check("host: capsule destructor and versioned capsule", capsule_destructor)
    check("host: torch tensor -> Go import", torch_to_go)


def gpu_checks(torch, cupy):
    base = lib.live_exports()

    def torch_from_go():
        t = lib.new(0, 64, 33)
        try:
            n = 64 * 33
            write(t, [float(i) for i in range(n)])
            spy = Spy(t)
            x = torch.from_dlpack(spy)
            expect(x.device.type == "cuda" and x.device.index == 0, "device %s" % x.device)
            expect(x.data_ptr() == t.data_ptr, "not zero-copy")
            want = torch.arange(n, dtype=torch.float32, device="cuda").reshape(64, 33)
            expect(torch.equal(x, want), "values")
            x.mul_(2)
            torch.cuda.synchronize()
            expect(read(t)[100] == 200.0, "Go does not see torch's write")
            write(t, [7.0] * n)
            expect(bool((x == 7).all()), "torch does not see Go's write")
            call = spy.calls[-1]
            del x
        finally:
            t.release()
        settle_exports(base, "torch consumer")
        return "zero-copy, mutation both ways; torch called __dlpack__(%s)" % ", ".join(
            "%s=%r" % kv for kv in call.items())

    def torch_versioned_capsule():
        t = lib.new(0, 4, 4)
        try:
            write(t, [float(i) for i in range(16)])
            s = torch.cuda.current_stream().cuda_stream or 1
            cap = t.__dlpack__(stream=s, max_version=(1, 3))
            expect(capsule_name(cap) == "dltensor_versioned", "name")
            try:
                x = torch.utils.dlpack.from_dlpack(cap)
            except Exception as e:  # noqa: BLE001
                raise Skip("torch %s does not read versioned capsules (%s: %s)" % (torch.__version__, type(e).__name__, e))
            expect(capsule_name(cap) == "used_dltensor_versioned", "torch did not rename the capsule")
            expect(x.data_ptr() == t.data_ptr and x.sum().item() == 120.0, "values")
            del x, cap
        finally:
            t.release()
        settle_exports(base, "versioned capsule")
        return "torch %s consumed a dltensor_versioned capsule" % torch.__version__

    def torch_legacy_capsule():
        t = lib.new(0, 4, 4)
        try:
            write(t, [1.0] * 16)
            cap = t.__dlpack__(stream=1)
            expect(capsule_name(cap) == "dltensor", "name")
            x = torch.utils.dlpack.from_dlpack(cap)
            expect(x.sum().item() == 16.0, "values")
            del x, cap
        finally:
            t.release()
        settle_exports(base, "legacy capsule")

    def stream_semantics():
        rows = cols = 4096  # 64 MiB; values up to 2**24 are exact in float32
        t = lib.new(0, rows, cols)
        try:
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                lib.fill_async(t, 1.0)  # queued on Go's own non-blocking stream
                spy = Spy(t)
                x = torch.from_dlpack(spy)  # torch passes its current stream: side
                want = torch.arange(1, rows * cols + 1, dtype=torch.float32, device="cuda").reshape(rows, cols)
                same = bool(torch.equal(x, want))
            side.synchronize()
            lib.producer_sync()
            passed = spy.calls[-1]["stream"]
            expect(passed == side.cuda_stream, "torch passed stream %r, its stream is %#x" % (passed, side.cuda_stream))
            expect(same, "torch saw the tensor before Go's stream finished filling it")
            del x
            # -1: no synchronisation asked; 0: refused as the protocol says.
            cap = t.__dlpack__(stream=-1, max_version=(1, 3))
            del cap
            try:
                t.__dlpack__(stream=0)
                raise AssertionError("stream=0 was accepted")
            except BufferError as e:
                expect("stream 0" in str(e), "error %s" % e)
        finally:
            t.release()
        settle_exports(base, "stream test")
        return "consumer stream %#x waited for Go's producer stream; -1 accepted, 0 refused" % side.cuda_stream

    def cupy_from_go():
        if cupy is None:
            raise AssertionError("CuPy is not installed")
        t = lib.new(0, 16, 16)
        try:
            write(t, [float(i) for i in range(256)])
            spy = Spy(t)
            a = cupy.from_dlpack(spy)
            expect(a.data.ptr == t.data_ptr, "not zero-copy")
            expect(float(a.sum()) == float(sum(range(256))), "values")
            a *= 3
            cupy.cuda.runtime.deviceSynchronize()
            expect(read(t)[10] == 30.0, "Go does not see CuPy's write")
            write(t, [2.0] * 256)
            expect(float(a.sum()) == 512.0, "CuPy does not see Go's write")
            call = spy.calls[-1]
            del a
        finally:
            t.release()
        settle_exports(base, "cupy consumer")
        return "zero-copy, mutation both ways; CuPy %s called __dlpack__(%s)" % (
            cupy.__version__, ", ".join("%s=%r" % kv for kv in call.items()))

    def go_from_torch():
        out = []
        for label, x in (("contiguous", torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6)),
                         ("transposed", torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6).t()),
                         ("sliced", torch.arange(48, dtype=torch.float32, device="cuda").reshape(8, 6)[::2, 1:5])):
            live = lib.live_foreign()
            g = lib.from_dlpack(x)  # __dlpack__(max_version=(1, 3)): Go reads on the legacy default stream
            expect(g.device == (2, 0) and g.data_ptr == x.data_ptr(), "%s: device %s data %#x" % (label, g.device, g.data_ptr))
            expect(g.element_strides == tuple(x.stride()), "%s: strides %s vs %s" % (label, g.element_strides, x.stride()))
            n = x.numel()
            expect(read(g) == x.cpu().reshape(-1).tolist(), "%s: values" % label)
            write(g, [float(-k) for k in range(n)])
            torch.cuda.synchronize()
            expect(x.cpu().reshape(-1).tolist() == [float(-k) for k in range(n)], "%s: torch does not see Go's write" % label)
            g.release()
            expect(lib.live_foreign() == live, "%s: import not released" % label)
            out.append(label)
        return "Library.from_dlpack: " + ", ".join(out)

    def go_from_cupy():
        if cupy is None:
            raise AssertionError("CuPy is not installed")
        a = cupy.arange(30, dtype=cupy.float32).reshape(5, 6)[:, ::2]
        g = lib.from_dlpack(a)
        expect(g.data_ptr == a.data.ptr, "data %#x" % g.data_ptr)
        expect(read(g) == cupy.asnumpy(a).reshape(-1).tolist(), "values")
        write(g, [5.0] * a.size)
        cupy.cuda.runtime.deviceSynchronize()
        expect(bool((a == 5).all()), "CuPy does not see Go's write")
        strides = g.element_strides
        g.release()
        return "Library.from_dlpack, strides %s" % (strides,)

    check("gpu: torch.from_dlpack(Go CUDA tensor)", torch_from_go)
    check("gpu: torch reads a versioned capsule", torch_versioned_capsule)
    check("gpu: torch reads a legacy capsule", torch_legacy_capsule)
    check("gpu: stream argument", stream_semantics)
    check("gpu: cupy.from_dlpack(Go CUDA tensor)", cupy_from_go)
    check("gpu: torch CUDA tensors -> Go", go_from_torch)
    check("gpu: CuPy CUDA array -> Go", go_from_cupy)
    check("gpu: every export deleted", lambda: settle_exports(base, "end"))


def bandwidth(torch):
    nbytes = 256 << 20
    iters = 10

    def timed(f):
        f()
        f()
        ts = []
        for _ in range(iters):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        return nbytes / statistics.median(ts) / 1e9

    hp, hd = lib.bytes(1, nbytes), lib.bytes(0, nbytes)
    try:
        go_h2d = timed(lambda: lib.copy(hd, hp))
        go_d2h = timed(lambda: lib.copy(hp, hd))
    finally:
        hp.release()
        hd.release()
    xp = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    xd = torch.empty(nbytes, dtype=torch.uint8, device="cuda")

    def t_h2d():
        y = xp.to("cuda")
        torch.cuda.synchronize()
        return y

    def t_d2h():
        xp.copy_(xd)
        torch.cuda.synchronize()

    def t_cpu():
        xd.cpu()

    th2d, td2h, tcpu = timed(t_h2d), timed(t_d2h), timed(t_cpu)
    rows = [("H2D pinned", go_h2d, th2d, "x.to('cuda') from pinned"),
            ("D2H pinned", go_d2h, td2h, "pinned.copy_(x_cuda)")]
    print("\n| 256 MiB copy | dlpack-go GB/s | torch GB/s | ratio | torch call |")
    print("|---|---:|---:|---:|---|")
    for name, g, t, how in rows:
        print("| %s | %.1f | %.1f | %.2f | %s |" % (name, g, t, g / t, how))
    print("| D2H pageable (torch only) | - | %.1f | - | x_cuda.cpu() |\n" % tcpu)
    worst = min(g / t for _, g, t, _ in rows)
    expect(worst >= 0.8, "ratio %.2f below the 0.8 goal" % worst)
    return "worst ratio %.2f (goal >= 0.8)" % worst


def main():
    global lib
    try:
        lib = dlpackgo.Library(LIB_PATH, returns="tensor")
    except OSError as e:
        print("FAIL load %s: %s (build it with devicecheck/devicebuild.sh)" % (LIB_PATH, e))
        return 1
    try:
        import torch
    except ImportError as e:
        print("FAIL import torch: %s" % e)
        return 1
    print("python %s, numpy %s, torch %s, library %s" % (sys.version.split()[0], np.__version__,
                                                        torch.__version__, LIB_PATH), flush=True)
    host_selftest(torch)
    why = lib.no_device()
    if why:
        print("NO GPU: device checks not run (%s)" % why)
        failed = [n for n, r in results if r == "FAIL"]
        print("SUMMARY: host self-test %s; GPU checks not run" % ("FAILED: " + ", ".join(failed) if failed else "passed"))
        return 1 if failed else 2
    try:
        import cupy
    except ImportError as e:
        print("FAIL import cupy: %s" % e)
        cupy = None
    print("device 0: %s; cupy %s" % (lib.device_name(), cupy.__version__ if cupy else "missing"), flush=True)
    gpu_checks(torch, cupy)
    check("bandwidth: Go vs torch, pinned memory", lambda: bandwidth(torch))
    gc.collect()
    failed = [n for n, r in results if r == "FAIL"]
    skipped = [n for n, r in results if r == "SKIP"]
    print("SUMMARY: %d passed, %d failed, %d skipped%s" % (
        sum(r == "PASS" for _, r in results), len(failed), len(skipped),
        (" — FAILED: " + "; ".join(failed)) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
