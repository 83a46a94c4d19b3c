"""Times DLPack 1.3's C exchange API against __dlpack__ capsules, both directions, one process.

Run by BenchmarkExchangeAPI in pyexchange; prints one JSON line (ns per tensor, best of
several repeats):

    DLPACKGO_TESTLIB=/path/lib.so XHARNESS_DIR=/dir python3 bench_exchange_api.py

import_*: Library.from_dlpack of an xharness tensor (a C framework type with an exchange API and
__dlpack__), through the API and through __dlpack__, the Go Tensor released each time (Python
level, timeit). export_*, view_api and to_py: timed in C by xharness: the harness consuming a Go
tensor through dlpackgo.Tensor's API (managed tensor + deleter; borrowed DLTensor) and through
__dlpack__(max_version=(1, 3)) with the capsule taken and its deleter run; and a harness tensor
handed to dlpackgo.Tensor's managed_tensor_to_py_object_no_sync and the Tensor dropped.
torch_*: Library.from_dlpack of a torch tensor (Debian's PyTorch 1.13 has no exchange API: the
automatic path looks for one and falls back) against via="dlpack".
"""

import json
import os
import sys
import timeit

sys.path.insert(0, os.environ.get("XHARNESS_DIR", ""))
import xharness  # noqa: E402

import dlpackgo  # noqa: E402
from test_dlpackgo import FLOAT, LIB, arange  # noqa: E402


def best(fns, number, repeat=9):
    """ns per call of each of fns, interleaved repeat by repeat (a loaded machine slows them
    alike), best of repeat."""
    out = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            out[i] = min(out[i], timeit.timeit(fn, number=number) / number * 1e9)
    return out


def main():
    n = 10_000
    h = xharness.make(FLOAT, 64, 1, (1000,))
    t = arange((1000,))
    take = LIB.from_dlpack
    assert take(h).data_ptr == h.data_ptr == take(h, via="dlpack").data_ptr  # zero-copy both ways
    imp_api, imp_dl = best([lambda: take(h).release(), lambda: take(h, via="dlpack").release()], n)
    assert xharness.consume(t).data_ptr == t.data_ptr
    exp_api = min(xharness.bench_api(t, n) for _ in range(7))
    view = min(xharness.bench_view(t, n) for _ in range(7))
    exp_cap = min(xharness.bench_capsule(t, n) for _ in range(7))
    to_py = min(xharness.bench_to_py(dlpackgo.Tensor, h, n) for _ in range(7))
    # Debian's torch 1.13 has no exchange API: from_dlpack looks, falls back on __dlpack__
    import torch
    x = torch.arange(1000, dtype=torch.float64)
    assert not hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    torch_auto, torch_dl = best([lambda: take(x).release(), lambda: take(x, via="dlpack").release()], n)
    c = LIB.exchange_counts()
    assert c["import_api"] >= 9 * n and c["export_api"] >= 7 * n and c["import_fallback"] >= 9 * n, c
    print(json.dumps({"import_api_ns": imp_api, "import_dlpack_ns": imp_dl, "export_api_ns": exp_api,
                      "view_api_ns": view, "export_capsule_ns": exp_cap, "to_py_ns": to_py,
                      "torch_auto_ns": torch_auto, "torch_dlpack_ns": torch_dl}))


if __name__ == "__main__":
    main()
