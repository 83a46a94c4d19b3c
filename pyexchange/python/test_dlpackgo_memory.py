"""Resident memory stays flat over 100 000 round trips between Go, NumPy and PyTorch.

Run by the Go test TestPythonMemoryFlat (see test_dlpackgo.py for the environment).
"""

import gc
import os
import unittest

import numpy as np
import torch

from test_dlpackgo import LIB, arange, eventually

ROUND_TRIPS = 100_000
SLACK = 16 << 20  # bytes; a leak of the 1 KiB tensors alone would be 100 MB per direction
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class MemoryFlat(unittest.TestCase):
    def test_round_trips(self):
        t = arange((128,))  # 1 KiB of float64 in Go memory
        x = np.arange(128.0)
        y = torch.arange(128.0, dtype=torch.float64)

        def run(n):
            for _ in range(n):
                a = np.from_dlpack(t)                # Go -> NumPy
                g = LIB.from_dlpack(x)               # NumPy -> Go
                g.release()
                z = torch.from_dlpack(t)             # Go -> PyTorch -> Go
                g = LIB.from_dlpack(z)
                g.release()
                g = LIB.from_dlpack(y)               # PyTorch -> Go
                g.release()
                del a, z

        def settle():
            gc.collect()
            LIB.collect()

        counts = lambda: (LIB.live_exports(), LIB.live_handles(), LIB.live_foreign())
        run(10_000)  # warm up: interpreter caches, Go heap, thread states
        settle()
        base, live = rss(), counts()
        run(ROUND_TRIPS)
        settle()
        eventually(lambda: counts() == live, "live counts back to baseline")
        grown = rss() - base
        print(f"\n{ROUND_TRIPS} round trips: resident memory {base >> 20} MiB -> {rss() >> 20} MiB "
              f"({grown / 1024:+.0f} KiB)")
        self.assertLess(grown, SLACK, f"resident memory grew by {grown} bytes")
        self.assertEqual(np.from_dlpack(t).sum(), sum(range(128)))

    def test_registered_calls(self):
        """100 000 calls of registered functions: NumPy and torch arguments, a Go tensor by
        handle, tensor results back to NumPy and torch, errors and panics."""
        x = np.arange(128.0)
        y = torch.arange(128.0, dtype=torch.float64)
        g = LIB.from_dlpack(np.arange(128.0))

        def run(n):
            for i in range(n):
                LIB.scale(x, 1.0)
                LIB.noop(y)
                LIB.noop(g)
                a = LIB.add(x, y)
                b = LIB.same(y, returns="torch")
                if i % 10 == 0:
                    try:
                        LIB.fail("value")
                    except ValueError:
                        pass
                    try:
                        LIB.crash(x)
                    except RuntimeError:
                        pass
                del a, b

        counts = lambda: (LIB.live_exports(), LIB.live_handles(), LIB.live_foreign())
        run(10_000)
        gc.collect()
        LIB.collect()
        base, live = rss(), counts()
        run(ROUND_TRIPS)
        gc.collect()
        LIB.collect()
        eventually(lambda: counts() == live, "live counts back to baseline")
        grown = rss() - base
        print(f"\n{ROUND_TRIPS} rounds of calls: resident memory {base >> 20} MiB -> {rss() >> 20} MiB "
              f"({grown / 1024:+.0f} KiB)")
        self.assertLess(grown, SLACK, f"resident memory grew by {grown} bytes")
        g.release()


if __name__ == "__main__":
    unittest.main(verbosity=2)
