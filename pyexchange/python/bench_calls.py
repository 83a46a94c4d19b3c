"""Times registered-function calls and the import of NumPy arrays into Go against their peers.

Run by BenchmarkPythonCalls in pyexchange; prints one JSON line:

    DLPACKGO_TESTLIB=/path/libdlpackgo_test.so python3 bench_calls.py

Each pair is timed in the same process, interleaved, best of several repeats, per call, on a
float64 array of 1000 elements:

* import: ``lib.from_dlpack(x).release()`` (take the capsule, validate it, register the Go
  tensor under a handle, release it) against ``torch.from_dlpack(x)`` (the torch tensor is
  dropped at once, which runs NumPy's deleter);
* export: ``numpy.from_dlpack(t)`` of a Go tensor against ``numpy.from_dlpack(x)``;
* call: ``lib.noop(x)`` (a registered ``func(*core.Tensor) error`` on a NumPy array: capsule,
  import, hold, call, release) against a ctypes call of an //export'ed Go function taking the
  handle of a tensor Go already has (``dlpackgo_test_noop``: look the handle up, hold, return);
* call_handle: ``lib.noop(g)`` on a dlpackgo.Tensor ``g`` (passed by its handle: look up, hold,
  call) against the same ctypes call: the same work on both sides.

and, on a 4x4 float64 array ``sq`` (a 1000x1000 one ``big`` for ``large``), what a call returning
a new array costs next to one returning an int on the same inputs (goal: 3x at most):

* none: ``lib.noop(sq)`` (returns nothing) against ``lib.size_of(sq)`` (an int);
* small: ``lib.zeros_like(sq)`` (a new 4x4 NumPy array over Go memory) against ``lib.size_of(sq)``;
* small_torch: ``tlib.zeros_like(sq)`` against ``lib.size_of(sq)``, where ``tlib`` is the same
  library opened with ``returns="torch"`` (a torch tensor over Go memory);
* matmul: ``lib.matmul(sq, sq)`` against ``numpy.matmul(sq, sq)`` (goal: 3x at most);
* large: ``lib.same(big)`` (the 8 MB argument returned as a new NumPy array over the same memory:
  zero-copy, so it costs what a small result does) against ``lib.size_of(big)``.
"""

import argparse
import ctypes
import json
import time
import timeit

import numpy as np
import torch

import dlpackgo
from test_dlpackgo import LIB, C, arange


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--number", type=int, default=20_000, help="calls per repeat")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--timer", choices=("wall", "cpu"), default="wall",
                   help="wall: time.perf_counter; cpu: time.process_time (all of this process's "
                        "threads, Go's included), steadier on a loaded machine")
    a = p.parse_args()
    timer = time.perf_counter if a.timer == "wall" else time.process_time

    x = np.arange(1000, dtype=np.float64)
    t = arange((1000,))
    g = LIB.from_dlpack(x)
    noop_c = C.dlpackgo_test_noop
    noop_c.argtypes, noop_c.restype = [ctypes.c_void_p], ctypes.c_int
    h = g.handle
    assert noop_c(h) == 0
    noop, take, tfrom, nfrom = LIB.noop, LIB.from_dlpack, torch.from_dlpack, np.from_dlpack
    assert take(x).data_ptr == x.ctypes.data and tfrom(x).data_ptr() == x.ctypes.data
    sq = np.arange(16.0).reshape(4, 4)
    big = np.zeros((1000, 1000))
    size_of, zeros_like, matmul, same = LIB.size_of, LIB.zeros_like, LIB.matmul, LIB.same
    assert np.array_equal(matmul(sq, sq), np.matmul(sq, sq))
    assert same(big).ctypes.data == big.ctypes.data  # zero-copy
    tlib = dlpackgo.Library(LIB.cdll, returns="torch")
    tzeros_like = tlib.zeros_like
    assert type(tzeros_like(sq)) is torch.Tensor
    pairs = {
        "import": (lambda: take(x).release(), lambda: tfrom(x)),
        "export": (lambda: nfrom(t), lambda: nfrom(x)),
        "call": (lambda: noop(x), lambda: noop_c(h)),
        "call_handle": (lambda: noop(g), lambda: noop_c(h)),
        "none": (lambda: noop(sq), lambda: size_of(sq)),
        "small": (lambda: zeros_like(sq), lambda: size_of(sq)),
        "small_torch": (lambda: tzeros_like(sq), lambda: size_of(sq)),
        "matmul": (lambda: matmul(sq, sq), lambda: np.matmul(sq, sq)),
        "large": (lambda: same(big), lambda: size_of(big)),
    }
    best = {k: [float("inf"), float("inf")] for k in pairs}
    for _ in range(a.repeat):
        for k, (ours, peer) in pairs.items():
            for i, f in enumerate((ours, peer)):
                s = timeit.timeit(f, number=a.number, timer=timer) / a.number * 1e9
                best[k][i] = min(best[k][i], s)
    out = {}
    for k, (ours, peer) in best.items():
        out[k + "_ns"], out[k + "_peer_ns"], out[k + "_ratio"] = ours, peer, ours / peer
    g.release()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
