"""Times numpy.from_dlpack of a Go tensor against numpy.from_dlpack of a NumPy array.

Run by BenchmarkNumPyFromDLPack in pyexchange; prints one JSON line:

    DLPACKGO_TESTLIB=/path/libdlpackgo_test.so python3 bench_dlpackgo.py --size 1000

Both are timed in the same process, interleaved, best of several repeats, per call. The Go
tensor's first export (which enters Go once to make the tensor's sharer) is timed apart, over
fresh handles of the same memory: first_ns. The other direction is timed too: a NumPy array
handed to Go and released (import_ns), next to NumPy importing its own array (numpy_ns).
"""

import argparse
import json
import timeit

import numpy as np

from test_dlpackgo import LIB, C, arange, go_view


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, required=True, help="float64 elements")
    p.add_argument("--number", type=int, default=20_000, help="calls per repeat")
    p.add_argument("--repeat", type=int, default=7)
    a = p.parse_args()

    t = arange((a.size,))
    x = np.arange(a.size, dtype=np.float64)
    assert np.from_dlpack(t).ctypes.data == t.data_ptr  # zero-copy, or the timing means nothing
    from_dlpack = np.from_dlpack
    take = LIB.from_dlpack
    go, py, imp = [], [], []
    for _ in range(a.repeat):
        go.append(timeit.timeit(lambda: from_dlpack(t), number=a.number) / a.number)
        py.append(timeit.timeit(lambda: from_dlpack(x), number=a.number) / a.number)
        imp.append(timeit.timeit(lambda: take(x).release(), number=a.number) / a.number)
    first = []
    for _ in range(3):
        fresh = [go_view(C.dlpackgo_test_slice, t, 0, 0, a.size, 1) for _ in range(2000)]
        it = iter(fresh)  # the tensors outlive the timing: their release is not counted
        first.append(timeit.timeit(lambda: from_dlpack(next(it)), number=len(fresh)) / len(fresh))
        del fresh
    g, n, f, i = min(go) * 1e9, min(py) * 1e9, min(first) * 1e9, min(imp) * 1e9
    print(json.dumps({"size": a.size, "go_ns": g, "numpy_ns": n, "ratio": g / n, "first_ns": f,
                      "import_ns": i}))


if __name__ == "__main__":
    main()
