#!/usr/bin/env python3
"""Device check of dlpack-go's CUDA tensors against PyTorch and CuPy, with ctypes only.

It loads the C shared library built from gpu/cuda/internal/pyexport (.devicebuild/libdlpackgpu.so,
or $DLPACK_GPU_LIB), wraps the DLPack managed tensors Go exports in PyCapsules, serves them
through __dlpack__/__dlpack_device__, and checks:

  * a self-test of the capsule plumbing on host memory (runs without a GPU);
  * torch.from_dlpack and cupy.from_dlpack of Go CUDA tensors: values, zero-copy (same device
    address), mutation visible both ways, versioned and legacy capsules, the stream argument
    (Go fills on its own non-blocking stream; the consumer's stream waits for it), -1 and the
    refusal of stream 0, and that every export's deleter runs;
  * the reverse: PyTorch and CuPy CUDA tensors (contiguous and strided) consumed by Go through
    __dlpack__(max_version=(1, 3), stream=1) (legacy capsules when the producer refuses
    max_version), read and written by Go;
  * H2D/D2H bandwidth of Go's copies from/to pinned memory next to torch's own (goal >= 0.8x).

Prints PASS/FAIL lines and a summary. Exit status: 0 all passed, 1 a failure, 2 no GPU (only the
host self-test ran: "NO GPU: device checks not run").

A small capsule class like this one will also live in the Python exchange package
(numpyx/python); this copy is deliberately self-contained.
"""

import ctypes
import gc
import os
import statistics
import sys
import time
import traceback
from ctypes import (CFUNCTYPE, POINTER, PYFUNCTYPE, Structure, addressof, c_char_p, c_float,
                    c_int, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p,
                    create_string_buffer, py_object, pythonapi, sizeof)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB_PATH = os.environ.get("DLPACK_GPU_LIB", os.path.join(ROOT, ".devicebuild", "libdlpackgpu.so"))


# ---- DLPack ABI (dlpack.h v1.3) ----

class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


assert sizeof(DLTensor) == 48 and sizeof(DLManagedTensorVersioned) == 80 and sizeof(DLManagedTensor) == 64

# ---- PyCapsule through the C API ----

# Capsule names must outlive the capsules: static buffers with stable addresses.
NAME_V = create_string_buffer(b"dltensor_versioned")
NAME_L = create_string_buffer(b"dltensor")
USED_V = create_string_buffer(b"used_dltensor_versioned")
USED_L = create_string_buffer(b"used_dltensor")

DELETER = CFUNCTYPE(None, c_void_p)
DESTRUCTOR = CFUNCTYPE(None, c_void_p)
_capsule_new = PYFUNCTYPE(py_object, c_void_p, c_void_p, DESTRUCTOR)(("PyCapsule_New", pythonapi))
# On a dying capsule (inside its destructor) only raw pointers: no reference counting.
_raw_is_valid = PYFUNCTYPE(c_int, c_void_p, c_void_p)(("PyCapsule_IsValid", pythonapi))
_raw_get_pointer = PYFUNCTYPE(c_void_p, c_void_p, c_void_p)(("PyCapsule_GetPointer", pythonapi))
_is_valid = PYFUNCTYPE(c_int, py_object, c_void_p)(("PyCapsule_IsValid", pythonapi))
_get_pointer = PYFUNCTYPE(c_void_p, py_object, c_void_p)(("PyCapsule_GetPointer", pythonapi))
_set_name = PYFUNCTYPE(c_int, py_object, c_void_p)(("PyCapsule_SetName", pythonapi))


@DESTRUCTOR
def _capsule_destructor(cap):
    # Call the deleter only if no consumer took the tensor (the name is still the unused one).
    try:
        for name, kind in ((NAME_V, DLManagedTensorVersioned), (NAME_L, DLManagedTensor)):
            if _raw_is_valid(cap, addressof(name)):
                p = _raw_get_pointer(cap, addressof(name))
                m = kind.from_address(p)
                if m.deleter:
                    DELETER(m.deleter)(p)
                return
    except BaseException:  # a destructor must not raise
        pass


def make_capsule(ptr, versioned):
    return _capsule_new(ptr, addressof(NAME_V if versioned else NAME_L), _capsule_destructor)


def capsule_name(cap):
    for name in (NAME_V, NAME_L, USED_V, USED_L):
        if _is_valid(cap, addressof(name)):
            return name.value.decode()
    return "?"


def take(cap):
    """Consume a DLPack capsule: rename it used and return (pointer, versioned)."""
    for name, used, versioned in ((NAME_V, USED_V, True), (NAME_L, USED_L, False)):
        if _is_valid(cap, addressof(name)):
            p = _get_pointer(cap, addressof(name))
            if _set_name(cap, addressof(used)) != 0:
                raise RuntimeError("PyCapsule_SetName failed")
            return p, versioned
    raise ValueError("not an unused DLPack capsule: %r" % (cap,))


# ---- the Go library ----

lib = None


def load_lib():
    global lib
    lib = ctypes.CDLL(LIB_PATH)
    lib.dg_last_error.restype = c_char_p
    lib.dg_init.restype = c_int
    lib.dg_device_name.argtypes = [c_char_p, c_int]
    lib.dg_new.argtypes = [c_int, c_int64, c_int64]
    lib.dg_new.restype = c_void_p
    lib.dg_bytes.argtypes = [c_int, c_int64]
    lib.dg_bytes.restype = c_void_p
    for f in (lib.dg_write, lib.dg_read):
        f.argtypes = [c_void_p, POINTER(c_float), c_int64]
        f.restype = c_int
    lib.dg_copy.argtypes = [c_void_p, c_void_p]
    lib.dg_fill_async.argtypes = [c_void_p, c_float]
    lib.dg_export.argtypes = [c_void_p, c_int64, c_int, c_int]
    lib.dg_export.restype = c_void_p
    lib.dg_import.argtypes = [c_void_p, c_int]
    lib.dg_import.restype = c_void_p
    lib.dg_info.argtypes = [c_void_p, POINTER(c_int64)]
    lib.dg_release.argtypes = [c_void_p]
    lib.dg_release.restype = None
    lib.dg_live_exports.restype = c_int64
    lib.dg_live_foreign.restype = c_int64


def err():
    e = lib.dg_last_error()
    return e.decode() if e else "unknown error"


def ok(rc):
    if rc != 0:
        raise RuntimeError(err())


def new(kind, rows, cols):
    h = lib.dg_new(kind, rows, cols)
    if not h:
        raise RuntimeError(err())
    return h


def info(h):
    out = (c_int64 * 21)()
    ok(lib.dg_info(h, out))
    nd = out[2]
    return {"device": (out[0], out[1]), "ndim": nd, "data": out[3] & (2**64 - 1), "flags": out[4],
            "shape": tuple(out[5:5 + nd]), "strides": tuple(out[5 + nd:5 + 2 * nd])}


def write(h, values):
    arr = (c_float * len(values))(*values)
    ok(lib.dg_write(h, arr, len(values)))


def read(h, n):
    arr = (c_float * n)()
    ok(lib.dg_read(h, arr, n))
    return list(arr)


class GoTensor:
    """A Go tensor served through the Python DLPack protocol."""

    def __init__(self, h, device, from_producer=False):
        self.h, self.device, self.from_producer, self.calls = h, device, from_producer, []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append({"stream": stream, "max_version": max_version})
        if copy:
            raise BufferError("copy=True is not supported by this producer")
        if dl_device is not None and tuple(dl_device) != tuple(self.device):
            raise BufferError("cannot export to another device")
        versioned = max_version is not None and max_version[0] >= 1
        s = 1 if stream is None else int(stream)
        p = lib.dg_export(self.h, s, int(versioned), int(self.from_producer))
        if not p:
            raise BufferError(err())
        return make_capsule(p, versioned)


def producer_capsule(x, stream):
    """x.__dlpack__ asking for a versioned capsule, falling back to legacy (old producers)."""
    try:
        return x.__dlpack__(stream=stream, max_version=(1, 3)), "versioned asked"
    except TypeError:
        return x.__dlpack__(stream=stream), "legacy (producer refused max_version)"


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
        if lib.dg_live_exports() == base:
            return
        time.sleep(0.02)
    raise AssertionError("%s: %d exports still live, want %d" % (what, lib.dg_live_exports(), base))


def host_selftest(torch):
    """The capsule plumbing on Go host memory, with whatever torch is installed (no GPU)."""
    base = lib.dg_live_exports()

    def go_to_torch():
        h = new(2, 3, 4)
        try:
            write(h, [float(i) for i in range(12)])
            t = torch.from_dlpack(GoTensor(h, (1, 0)))
            expect(t.tolist() == [[float(4 * r + c) for c in range(4)] for r in range(3)], "values %s" % t)
            expect(t.data_ptr() == info(h)["data"], "not zero-copy")
            t.add_(100)
            expect(read(h, 12)[5] == 105.0, "Go does not see torch's write")
            write(h, [-1.0] * 12)
            expect(float(t[2, 3]) == -1.0, "torch does not see Go's write")
            del t
        finally:
            lib.dg_release(h)
        settle_exports(base, "host export")
        return "zero-copy, mutation both ways"

    def capsule_destructor():
        h = new(2, 2, 2)
        try:
            g = GoTensor(h, (1, 0))
            cap = g.__dlpack__(max_version=(1, 3))
            expect(capsule_name(cap) == "dltensor_versioned", "name %s" % capsule_name(cap))
            p, versioned = _get_pointer(cap, addressof(NAME_V)), True
            m = DLManagedTensorVersioned.from_address(p)
            expect((m.version.major, m.version.minor) == (1, 3), "version %d.%d" % (m.version.major, m.version.minor))
            expect(m.dl_tensor.ndim == 2 and m.dl_tensor.shape[1] == 2 and m.dl_tensor.strides[0] == 2, "descriptor")
            expect(lib.dg_live_exports() == base + 1, "export not counted")
            del cap  # never consumed: the destructor calls the deleter
            settle_exports(base, "unconsumed versioned capsule")
            cap = g.__dlpack__()
            expect(capsule_name(cap) == "dltensor", "legacy name %s" % capsule_name(cap))
            del cap
            settle_exports(base, "unconsumed legacy capsule")
            # Our own versioned capsule consumed by Go's importer: a round trip.
            write(h, [1.0, 2.0, 3.0, 4.0])
            cap = g.__dlpack__(max_version=(1, 3))
            p, versioned = take(cap)
            h2 = lib.dg_import(p, int(versioned))
            expect(h2, err())
            expect(capsule_name(cap) == "used_dltensor_versioned", "not renamed")
            del cap  # used: the destructor must not delete
            expect(read(h2, 4) == [1.0, 2.0, 3.0, 4.0], "round trip values")
            lib.dg_release(h2)
            settle_exports(base, "re-imported capsule")
        finally:
            lib.dg_release(h)
        return "deleter runs once for unconsumed capsules, never for used ones"

    def torch_to_go():
        x = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()  # strided
        cap, how = producer_capsule(x, None)
        p, versioned = take(cap)
        h = lib.dg_import(p, int(versioned))
        expect(h, err())
        try:
            i = info(h)
            expect(i["data"] == x.data_ptr() and i["strides"] == (1, 4), "info %s" % i)
            expect(read(h, 12) == x.contiguous().reshape(-1).tolist(), "values")
            write(h, [float(-k) for k in range(12)])
            expect(x.contiguous().reshape(-1).tolist() == [float(-k) for k in range(12)], "torch does not see Go's write")
        finally:
            lib.dg_release(h)
        return "%s, %s capsule, strides %s" % (how, "versioned" if versioned else "legacy", i["strides"])

    check("host: Go tensor -> torch.from_dlpack", go_to_torch)
    check("host: capsule destructor and versioned capsule", capsule_destructor)
    check("host: torch tensor -> Go import", torch_to_go)


def gpu_checks(torch, cupy):
    base = lib.dg_live_exports()
    dev_addr = {}

    def torch_from_go():
        h = new(0, 64, 33)
        try:
            n = 64 * 33
            write(h, [float(i) for i in range(n)])
            g = GoTensor(h, (2, 0))
            t = torch.from_dlpack(g)
            expect(t.device.type == "cuda" and t.device.index == 0, "device %s" % t.device)
            expect(t.data_ptr() == info(h)["data"], "not zero-copy")
            want = torch.arange(n, dtype=torch.float32, device="cuda").reshape(64, 33)
            expect(torch.equal(t, want), "values")
            t.mul_(2)
            torch.cuda.synchronize()
            expect(read(h, n)[100] == 200.0, "Go does not see torch's write")
            write(h, [7.0] * n)
            expect(bool((t == 7).all()), "torch does not see Go's write")
            call = g.calls[-1]
            del t
            dev_addr["torch"] = call
        finally:
            lib.dg_release(h)
        settle_exports(base, "torch consumer")
        return "zero-copy, mutation both ways; torch called __dlpack__(%s)" % ", ".join(
            "%s=%r" % kv for kv in call.items())

    def torch_versioned_capsule():
        h = new(0, 4, 4)
        try:
            write(h, [float(i) for i in range(16)])
            g = GoTensor(h, (2, 0))
            s = torch.cuda.current_stream().cuda_stream or 1
            cap = g.__dlpack__(stream=s, max_version=(1, 3))
            expect(capsule_name(cap) == "dltensor_versioned", "name")
            try:
                t = torch.utils.dlpack.from_dlpack(cap)
            except Exception as e:  # noqa: BLE001
                raise Skip("torch %s does not read versioned capsules (%s: %s)" % (torch.__version__, type(e).__name__, e))
            expect(capsule_name(cap) == "used_dltensor_versioned", "torch did not rename the capsule")
            expect(t.data_ptr() == info(h)["data"] and t.sum().item() == 120.0, "values")
            del t, cap
        finally:
            lib.dg_release(h)
        settle_exports(base, "versioned capsule")
        return "torch %s consumed a dltensor_versioned capsule" % torch.__version__

    def torch_legacy_capsule():
        h = new(0, 4, 4)
        try:
            write(h, [1.0] * 16)
            cap = GoTensor(h, (2, 0)).__dlpack__(stream=1)
            expect(capsule_name(cap) == "dltensor", "name")
            t = torch.utils.dlpack.from_dlpack(cap)
            expect(t.sum().item() == 16.0, "values")
            del t, cap
        finally:
            lib.dg_release(h)
        settle_exports(base, "legacy capsule")

    def stream_semantics():
        rows = cols = 4096  # 64 MiB; values up to 2**24 are exact in float32
        h = new(0, rows, cols)
        try:
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                ok(lib.dg_fill_async(h, 1.0))  # queued on Go's own non-blocking stream
                g = GoTensor(h, (2, 0), from_producer=True)
                t = torch.from_dlpack(g)  # torch passes its current stream: side
                want = torch.arange(1, rows * cols + 1, dtype=torch.float32, device="cuda").reshape(rows, cols)
                same = bool(torch.equal(t, want))
            side.synchronize()
            ok(lib.dg_producer_sync())
            passed = g.calls[-1]["stream"]
            expect(passed == side.cuda_stream, "torch passed stream %r, its stream is %#x" % (passed, side.cuda_stream))
            expect(same, "torch saw the tensor before Go's stream finished filling it")
            del t
            # -1: no synchronisation asked; 0: refused as the protocol says.
            cap = g.__dlpack__(stream=-1, max_version=(1, 3))
            del cap
            try:
                g.__dlpack__(stream=0)
                raise AssertionError("stream=0 was accepted")
            except BufferError as e:
                expect("stream 0" in str(e), "error %s" % e)
        finally:
            lib.dg_release(h)
        settle_exports(base, "stream test")
        return "consumer stream %#x waited for Go's producer stream; -1 accepted, 0 refused" % side.cuda_stream

    def cupy_from_go():
        if cupy is None:
            raise AssertionError("CuPy is not installed")
        h = new(0, 16, 16)
        try:
            write(h, [float(i) for i in range(256)])
            g = GoTensor(h, (2, 0))
            a = cupy.from_dlpack(g)
            expect(a.data.ptr == info(h)["data"], "not zero-copy")
            expect(float(a.sum()) == float(sum(range(256))), "values")
            a *= 3
            cupy.cuda.runtime.deviceSynchronize()
            expect(read(h, 256)[10] == 30.0, "Go does not see CuPy's write")
            write(h, [2.0] * 256)
            expect(float(a.sum()) == 512.0, "CuPy does not see Go's write")
            call = g.calls[-1]
            del a
        finally:
            lib.dg_release(h)
        settle_exports(base, "cupy consumer")
        return "zero-copy, mutation both ways; CuPy %s called __dlpack__(%s)" % (
            cupy.__version__, ", ".join("%s=%r" % kv for kv in call.items()))

    def go_from_torch():
        out = []
        for label, x in (("contiguous", torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6)),
                         ("transposed", torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6).t()),
                         ("sliced", torch.arange(48, dtype=torch.float32, device="cuda").reshape(8, 6)[::2, 1:5])):
            live = lib.dg_live_foreign()
            cap, how = producer_capsule(x, 1)  # Go reads on the legacy default stream
            p, versioned = take(cap)
            h = lib.dg_import(p, int(versioned))
            expect(h, err())
            i = info(h)
            expect(i["device"] == (2, 0) and i["data"] == x.data_ptr(), "%s: info %s" % (label, i))
            expect(tuple(i["strides"]) == tuple(x.stride()), "%s: strides %s vs %s" % (label, i["strides"], x.stride()))
            n = x.numel()
            expect(read(h, n) == x.cpu().reshape(-1).tolist(), "%s: values" % label)
            write(h, [float(-k) for k in range(n)])
            torch.cuda.synchronize()
            expect(x.cpu().reshape(-1).tolist() == [float(-k) for k in range(n)], "%s: torch does not see Go's write" % label)
            lib.dg_release(h)
            expect(lib.dg_live_foreign() == live, "%s: import not released" % label)
            out.append("%s %s" % (label, "versioned" if versioned else "legacy"))
        return "%s; %s" % (how, ", ".join(out))

    def go_from_cupy():
        if cupy is None:
            raise AssertionError("CuPy is not installed")
        a = cupy.arange(30, dtype=cupy.float32).reshape(5, 6)[:, ::2]
        cap, how = producer_capsule(a, 1)
        p, versioned = take(cap)
        h = lib.dg_import(p, int(versioned))
        expect(h, err())
        i = info(h)
        expect(i["data"] == a.data.ptr, "info %s" % i)
        expect(read(h, a.size) == cupy.asnumpy(a).reshape(-1).tolist(), "values")
        write(h, [5.0] * a.size)
        cupy.cuda.runtime.deviceSynchronize()
        expect(bool((a == 5).all()), "CuPy does not see Go's write")
        lib.dg_release(h)
        return "%s, %s capsule, strides %s" % (how, "versioned" if versioned else "legacy", i["strides"])

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

    hp, hd = lib.dg_bytes(1, nbytes), lib.dg_bytes(0, nbytes)
    expect(hp and hd, err())
    try:
        go_h2d = timed(lambda: ok(lib.dg_copy(hd, hp)))
        go_d2h = timed(lambda: ok(lib.dg_copy(hp, hd)))
    finally:
        lib.dg_release(hp)
        lib.dg_release(hd)
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
    try:
        load_lib()
    except OSError as e:
        print("FAIL load %s: %s (build it with gpu/cuda/devicebuild.sh)" % (LIB_PATH, e))
        return 1
    try:
        import torch
    except ImportError as e:
        print("FAIL import torch: %s" % e)
        return 1
    print("python %s, torch %s, library %s" % (sys.version.split()[0], torch.__version__, LIB_PATH), flush=True)
    host_selftest(torch)
    rc = lib.dg_init()
    if rc != 0:
        print("NO GPU: device checks not run (%s)" % err())
        failed = [n for n, r in results if r == "FAIL"]
        print("SUMMARY: host self-test %s; GPU checks not run" % ("FAILED: " + ", ".join(failed) if failed else "passed"))
        return 1 if failed else 2
    name = create_string_buffer(256)
    ok(lib.dg_device_name(name, 256))
    try:
        import cupy
    except ImportError as e:
        print("FAIL import cupy: %s" % e)
        cupy = None
    import numpy
    print("device 0: %s; numpy %s, cupy %s" % (name.value.decode(), numpy.__version__,
                                                 cupy.__version__ if cupy else "missing"), flush=True)
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
