"""Writes fuzz seeds made by other writers than ours into the packages' testdata/fuzz/ folders.

Each seed is one file in Go's corpus format ("go test fuzz v1", then one []byte(...) line),
named after its writer and what it holds, so that `go test` runs it beside the fuzzer's own
seeds:

  numpyx/testdata/fuzz/FuzzRead/         .npy files written by numpy.save and
                                         numpy.lib.format.write_array (format 1.0, 2.0, 3.0)
  numpyx/testdata/fuzz/FuzzParseHeader/  the header dicts of those files, as NumPy wrote them
  numpyx/testdata/fuzz/FuzzReadNPZ/      .npz archives written by numpy.savez and
                                         numpy.savez_compressed
  safetensorsx/testdata/fuzz/FuzzRead/, FuzzReadMapped/
                                         .safetensors files written by the safetensors package
  safetensorsx/testdata/fuzz/FuzzParseHeader/, FuzzParseHeaderJSON/
                                         their JSON headers, as that package wrote them

Run it through scripts/fuzzseeds.sh, which runs it with Debian's NumPy (1.24) and with the
project's virtualenv (scripts/pyvenv.sh: NumPy 2.x and safetensors), each writing the seeds its
packages can make. Usage: python fuzzseeds.py REPO_ROOT
"""

import io
import os
import sys

import numpy as np

ROOT = sys.argv[1]
NUMPY = "numpy" + ".".join(np.__version__.split(".")[:2])


def corpus(data):
    """data as a Go corpus file: every byte outside printable ASCII, and '"' and '\\', escaped."""
    out = []
    for b in data:
        if b in (0x22, 0x5C) or b < 0x20 or b > 0x7E:
            out.append("\\x%02x" % b)
        else:
            out.append(chr(b))
    return ("go test fuzz v1\n[]byte(\"%s\")\n" % "".join(out)).encode("ascii")


def seed(pkg, fuzzer, name, data):
    d = os.path.join(ROOT, pkg, "testdata", "fuzz", fuzzer)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(corpus(data))


def arrays():
    """Small arrays of the dtypes, orders and shapes numpyx reads."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    return {
        "f4-c": a,
        "f8-fortran": np.asfortranarray(np.arange(6, dtype=np.float64).reshape(3, 2) / 3),
        "i4-big-endian": np.arange(4, dtype=">i4") - 2,
        "bool": np.array([True, False, True]),
        "c8": (np.arange(3) + 1j * np.arange(3)).astype(np.complex64),
        "f2": np.array([0.5, -1, 65504], dtype=np.float16),
        "u8-0d": np.array(7, dtype=np.uint64),
        "i2-empty": np.zeros((0, 3), dtype=np.int16),
        "u1-3d": np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    }


def npy(arr, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, arr)
    else:
        np.lib.format.write_array(b, arr, version=version)
    return b.getvalue()


def header_dict(data):
    """The header dict of a .npy file: what follows the magic, version and length."""
    major = data[6]
    n = int.from_bytes(data[8:10] if major == 1 else data[8:12], "little")
    start = 10 if major == 1 else 12
    return data[start:start + n].rstrip(b" \n")


def numpy_seeds():
    for name, arr in arrays().items():
        data = npy(arr)
        seed("numpyx", "FuzzRead", "%s-%s" % (NUMPY, name), data)
        seed("numpyx", "FuzzParseHeader", "%s-%s" % (NUMPY, name), header_dict(data))
    for version in ((2, 0), (3, 0)):
        data = npy(arrays()["f4-c"], version)
        seed("numpyx", "FuzzRead", "%s-f4-c-v%d" % (NUMPY, version[0]), data)
    for how, save in (("savez", np.savez), ("savez_compressed", np.savez_compressed)):
        b = io.BytesIO()
        save(b, a=arrays()["f4-c"], b=arrays()["bool"], c=arrays()["u8-0d"])
        seed("numpyx", "FuzzReadNPZ", "%s-%s" % (NUMPY, how), b.getvalue())


def safetensors_seeds():
    try:
        import safetensors
        from safetensors.numpy import save
    except ImportError:
        return
    who = "safetensors" + safetensors.__version__
    files = {
        "f32-i64": {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "ids": np.arange(3, dtype=np.int64)},
        "f16-u8-bool": {"h": np.array([1, -2], dtype=np.float16), "b": np.array([1, 2, 3], dtype=np.uint8),
                        "m": np.array([True, False])},
        "0d-empty": {"s": np.array(1.5, dtype=np.float64), "e": np.zeros((0, 4), dtype=np.int32)},
    }
    for name, tensors in files.items():
        meta = {"format": "np", "note": "written by %s" % who} if name == "f32-i64" else None
        data = save(tensors, metadata=meta)
        n = int.from_bytes(data[:8], "little")
        for fuzzer in ("FuzzRead", "FuzzReadMapped"):
            seed("safetensorsx", fuzzer, "%s-%s" % (who, name), data)
        for fuzzer in ("FuzzParseHeader", "FuzzParseHeaderJSON"):
            seed("safetensorsx", fuzzer, "%s-%s" % (who, name), data[8:8 + n])


numpy_seeds()
safetensors_seeds()
