"""The NumPy side of BenchmarkNumPyCopies (adapters/numpy_bench_test.go).

Usage: numpy_bench.py DTYPE ROWS COLS NPY

Builds the same arrays as the Go side (a = arange(ROWS*COLS) as DTYPE in a ROWS x COLS array,
b the same with 2*COLS columns for the stepped view) and then reads "CASE CPU" lines from stdin.
For each it binds itself to processor CPU (unless it is -1), as the Go side binds its thread,
runs the operation once, frees the result, and prints "NS RSS" on one line:
the nanoseconds the operation took and by how many bytes the peak resident set grew over the
resident set before it (the peak is reset first, through /proc/self/clear_refs).
"""
import os
import sys
import time

import numpy as np


def rss_fields():
    rss = hwm = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
    return rss, hwm


def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def main():
    dtype, rows, cols, npy = np.dtype(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    a = np.arange(rows * cols, dtype=dtype).reshape(rows, cols)
    b = np.arange(rows * 2 * cols, dtype=dtype).reshape(rows, 2 * cols)
    cases = {
        "contiguous": lambda: a.copy(),
        "reversed": lambda: a[::-1].copy(),
        "stepped": lambda: b[:, ::2].copy(),
        "transposed": lambda: a.T.copy(),
        "permuted": lambda: a.reshape(16, rows // 16, 32, cols // 32).transpose(0, 3, 1, 2).copy(),
        "cast-float32": lambda: a.astype(np.float32),
        "cast-float16": lambda: a.astype(np.float16),
        "load": lambda: np.load(npy),
    }
    np.seterr(all="ignore")  # float32 -> float16 overflows to inf, as it does in Go
    print("ready", flush=True)
    for line in sys.stdin:
        name, cpu = line.split()
        f = cases[name]
        if int(cpu) >= 0:
            os.sched_setaffinity(0, {int(cpu)})
        rss0, _ = rss_fields()
        reset_peak()
        t0 = time.perf_counter_ns()
        r = f()
        t1 = time.perf_counter_ns()
        del r
        _, hwm = rss_fields()
        print(t1 - t0, max(hwm - rss0, 0), flush=True)


main()
