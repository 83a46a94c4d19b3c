"""DLPack conformance of dlpackgo against the array libraries installed in this interpreter.

Run by the Go test TestDLPackConformance (pyexchange) with three interpreters: the project's virtual
environment (scripts/pyvenv.sh: NumPy 2, array-api-strict, JAX on CPU, apache-tvm-ffi, ml_dtypes),
its PyTorch one (scripts/pyvenv.sh torch: PyTorch 2.15 from PyPI, with the DLPack 1.3 C exchange
API) and Debian's python3 (NumPy 1.24 and PyTorch 1.13, the oldest releases dlpackgo supports):

    DLPACKGO_TESTLIB=/path/libdlpackgo_test.so python3 conformance_dlpack.py [max_examples]

Each framework that imports runs every case below; a case draws its inputs with Hypothesis the way
the array API's own DLPack tests (data-apis/array-api-tests, test_dlpack.py) do: every dtype the
framework exports (bool, signed and unsigned integers, float16/32/64, complex, bfloat16 through
ml_dtypes), 0-d to 5-d shapes, strided and offset views, the from_dlpack keywords ``copy`` and
``device``, the ``__dlpack__`` keywords ``max_version``, ``dl_device``, ``stream`` and ``copy``, both
capsule versions, and read-only tensors. Values are compared bit for bit (NaN payloads included).

It prints one JSON object per framework on a line of its own:
{"framework", "version", "cases": [{"case", "outcome": "passed"|"failed"|"skipped", "reason"}]}.
A skip names what the framework lacks (a keyword it does not take); a failure carries the
falsifying example. The Go test turns every case into a subtest, so `go test -json` counts them.
"""

import importlib
import json
import os
import sys
import traceback

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dlpackgo

MAX_EXAMPLES = int(sys.argv[1]) if len(sys.argv) > 1 else 25
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))

NP_VERSION = tuple(int(x) for x in np.__version__.split(".")[:2])

# The dtypes NumPy itself exports through DLPack (bool from NumPy 1.25 on).
NUMPY_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"]
if NP_VERSION >= (1, 25):
    NUMPY_DTYPES.insert(0, "bool")


try:
    import ml_dtypes  # noqa: F401: bfloat16 for NumPy
    HAVE_ML_DTYPES = True
except ImportError:
    HAVE_ML_DTYPES = False


class Skip(Exception):
    """A case the framework cannot run: the reason names what it lacks."""


def np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def bits_equal(a, b):
    """a and b (NumPy arrays) have the same shape, dtype and bytes, element for element."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return a.tobytes() == b.tobytes()


def arrays_of(dtypes, views=True):
    """A strategy of NumPy arrays: a dtype of dtypes, 0-d to 5-d, and (views) a strided or offset
    view of a larger array, as array-api-tests draws them."""
    @st.composite
    def draw_array(draw):
        name = draw(st.sampled_from(dtypes), label="dtype")
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4),
                          label="shape")
        base_dt = np.dtype("float32") if name == "bfloat16" else np_dtype(name)
        if views and shape:
            # a parent twice as large along each axis, sliced with a step and an offset
            steps = draw(st.lists(st.sampled_from([1, 2, -1]), min_size=len(shape),
                                       max_size=len(shape)), label="steps")
            parent = tuple(2 * n + 1 for n in shape)
            a = draw(hnp.arrays(base_dt, parent), label="parent")
            index = []
            for n, step in zip(shape, steps):
                if step > 0:
                    index.append(slice(1, 1 + n * step, step) if n else slice(1, 1))
                else:
                    index.append(slice(n, 0, -1) if n else slice(0, 0))
            a = a[tuple(index)]
            if draw(st.booleans(), label="transpose") and a.ndim > 1:
                a = a.T
        else:
            a = draw(hnp.arrays(base_dt, shape), label="array")
        if name == "bfloat16":
            a = a.astype(np_dtype("bfloat16"))
        return a
    return draw_array()


# -- the frameworks -------------------------------------------------------------------------

class Framework:
    """One array library: how to make its arrays, read them and call its from_dlpack."""

    name = ""
    module = ""
    dtypes = NUMPY_DTYPES
    views = True            # its arrays can be strided views (JAX's cannot)
    keywords = ("copy", "device")  # from_dlpack keywords it takes

    def __init__(self):
        self.mod = importlib.import_module(self.module)
        self.version = getattr(self.mod, "__version__", "?")

    def make(self, a):
        """An array of this framework holding a's values (a view of them where it can)."""
        raise NotImplementedError

    def to_numpy(self, x):
        return np.from_dlpack(x)

    def from_dlpack(self, obj, **kw):
        return self.mod.from_dlpack(obj, **kw)

    def address(self, x):
        """The address of x's first element, or None where the framework does not say."""
        return None


class NumPy(Framework):
    name, module = "numpy", "numpy"

    def __init__(self):
        super().__init__()
        if NP_VERSION < (2, 1):
            self.keywords = ()  # copy= and device= came with NumPy 2.1

    def make(self, a):
        return a

    def to_numpy(self, x):
        return np.asarray(x)

    def address(self, x):
        return x.ctypes.data if x.size else None


class ArrayAPIStrict(Framework):
    name, module = "array-api-strict", "array_api_strict"
    dtypes = [d for d in NUMPY_DTYPES if d != "float16"]  # the array API has no float16

    def make(self, a):
        return self.mod.asarray(a, copy=False)

    def address(self, x):
        # the array API has no address: NumPy's own view of x tells it (x's __dlpack__)
        n = np.from_dlpack(x)
        return n.ctypes.data if n.size else None


class JAX(Framework):
    name, module = "jax", "jax"
    views = False
    dtypes = NUMPY_DTYPES + ["bfloat16"]

    def __init__(self):
        super().__init__()
        self.mod.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        self.jnp = jnp
        self.dtypes = [d for d in self.dtypes if d != "bool" or NP_VERSION >= (1, 25)]

    def make(self, a):
        return self.jnp.asarray(a)

    def to_numpy(self, x):
        return np.asarray(x)

    def from_dlpack(self, obj, **kw):
        return self.jnp.from_dlpack(obj, **kw)


class Torch(Framework):
    name, module = "torch", "torch"
    dtypes = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
              "complex64", "complex128", "bfloat16"]
    keywords = ()

    def __init__(self):
        super().__init__()
        self.version = self.mod.__version__.split("+")[0]
        self.release = tuple(int(v) for v in self.version.split(".")[:2])
        if self.release >= (2, 9):
            self.keywords = ("copy", "device")  # torch.from_dlpack's, from 2.9
        if not HAVE_ML_DTYPES:  # NumPy cannot hold bfloat16 values to compare without ml_dtypes
            self.dtypes = [d for d in self.dtypes if d != "bfloat16"]
        if self.release < (2, 0):
            self.dtypes = [d for d in self.dtypes if d != "bool"]  # 1.x exports no bool

    def make(self, a):
        if a.dtype.name == "bfloat16":
            return self.mod.from_numpy(a.astype(np.float32)).to(self.mod.bfloat16)
        if any(s < 0 for s in a.strides):
            return self.mod.from_numpy(a.copy(order="C"))  # torch has no negative strides
        return self.mod.from_numpy(a)

    def to_numpy(self, x):
        if x.dtype == self.mod.bfloat16 and HAVE_ML_DTYPES:
            return x.float().numpy().astype(np_dtype("bfloat16"))
        return x.resolve_conj().numpy()

    def from_dlpack(self, obj, **kw):
        if kw:
            return self.mod.from_dlpack(obj, **kw)
        from torch.utils import dlpack
        return dlpack.from_dlpack(obj)

    def address(self, x):
        return x.data_ptr() if x.numel() else None


class TVMFFI(Framework):
    """apache-tvm-ffi: a consumer and producer of DLPack and of its 1.3 C exchange API that is not
    ours (tvm_ffi.from_dlpack takes dlpackgo.Tensor through its __dlpack_c_exchange_api__)."""
    name, module = "apache-tvm-ffi", "tvm_ffi"
    keywords = ()
    views = False

    def make(self, a):
        return self.mod.from_dlpack(np.ascontiguousarray(a))

    def address(self, x):
        return x.data_ptr if not callable(x.data_ptr) else x.data_ptr()


FRAMEWORKS = [NumPy, ArrayAPIStrict, JAX, Torch, TVMFFI]


# -- the cases ------------------------------------------------------------------------------

def case_import(lib, fw):
    """framework → Go: lib.from_dlpack(x) shares x's memory (same first address), with x's shape,
    dtype and values."""
    @SETTINGS
    @given(arrays_of(fw.dtypes, fw.views))
    def run(a):
        x = fw.make(a)
        t = lib.from_dlpack(x)
        assert t.shape == tuple(x.shape), (t.shape, x.shape)
        assert np_dtype(t.dtype) == a.dtype, (t.dtype, a.dtype)
        addr = fw.address(x)
        if addr is not None and a.size:
            assert t.data_ptr == addr, "the import copied"
        assert bits_equal(go_values(fw, t), fw.to_numpy(x))
        t.release()
    run()


def case_import_copy(lib, fw):
    """framework → Go with copy=True: Go's own C-order copy (another address), equal values."""
    @SETTINGS
    @given(arrays_of(fw.dtypes, fw.views))
    def run(a):
        x = fw.make(a)
        t = lib.from_dlpack(x, copy=True)
        addr = fw.address(x)
        if addr is not None and a.size:
            assert t.data_ptr != addr, "copy=True shared"
        assert bits_equal(go_values(fw, t), fw.to_numpy(x))
        t.release()
    run()


def case_go_function(lib, fw):
    """framework → a registered Go function → NumPy: lib.same(x) returns x's memory itself."""
    @SETTINGS
    @given(arrays_of(fw.dtypes, fw.views))
    def run(a):
        x = fw.make(a)
        if fw.name == "torch":
            y = fw.to_numpy(lib.same(x, returns="torch"))
        else:
            y = lib.same(x)  # bfloat16 comes back as ml_dtypes' type
        assert bits_equal(y, fw.to_numpy(x))
    run()


def go_tensor(lib, fw, a):
    """A tensor in Go's own memory holding a's values (copied from the framework's array, since
    NumPy exports no bfloat16)."""
    return lib.from_dlpack(fw.make(np.ascontiguousarray(a)), copy=True)


def go_values(fw, t):
    """The Go tensor t's values as a NumPy array: through NumPy's from_dlpack, or the framework's
    for the dtypes NumPy cannot import (bfloat16)."""
    if t.dtype == "bfloat16":
        return fw.to_numpy(fw.from_dlpack(t))
    return np.from_dlpack(t)


def case_export(lib, fw):
    """Go → framework: fw.from_dlpack(t) of a Go tensor gives its values and dtype, sharing Go's
    memory where the framework says where its data is."""
    @SETTINGS
    @given(arrays_of(fw.dtypes, views=False))
    def run(a):
        t = go_tensor(lib, fw, a)
        y = fw.from_dlpack(t)
        assert bits_equal(fw.to_numpy(y), a)
        addr = fw.address(y)
        if addr is not None and a.size and fw.name != "jax":  # JAX copies what it cannot align
            assert addr == t.data_ptr, "the export copied"
    run()


def case_export_keywords(lib, fw):
    """Go → framework with from_dlpack's copy and device keywords."""
    if not fw.keywords:
        raise Skip(f"{fw.name} {fw.version}'s from_dlpack takes neither copy nor device")

    @SETTINGS
    @given(arrays_of(fw.dtypes, views=False), st.sampled_from([None, True, False]),
           st.sampled_from([None, "cpu"]))
    def run(a, copy, device):
        t = go_tensor(lib, fw, a)
        kw = {"copy": copy}
        if device == "cpu":
            kw["device"] = fw_cpu_device(fw, t)
        try:
            y = fw.from_dlpack(t, **kw)
        except (BufferError, ValueError) as e:
            if copy is False and fw.name == "jax":
                return  # JAX may refuse to share memory it cannot align: a documented refusal
            raise AssertionError(f"from_dlpack(copy={copy}, device={device}) refused: {e}")
        assert bits_equal(fw.to_numpy(y), a)
        addr = fw.address(y)
        if addr is not None and a.size:
            if copy is True:
                assert addr != t.data_ptr, "copy=True shared Go's memory"
            elif copy is False:
                assert addr == t.data_ptr, "copy=False copied"
    run()


def fw_cpu_device(fw, t):
    if fw.name == "numpy":
        return "cpu"
    if fw.name == "torch":
        return fw.mod.device("cpu")
    if fw.name == "jax":
        import jax
        return jax.devices("cpu")[0]
    if fw.name == "array-api-strict":
        return fw.mod.Device("CPU_DEVICE")
    return t.__dlpack_device__()


class Capsule:
    """An object whose __dlpack__ hands out one prepared capsule (of the version asked for)."""

    def __init__(self, t, **kw):
        self.t, self.kw = t, kw

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.t.__dlpack__(**self.kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def case_capsule_versions(lib, fw):
    """Go's __dlpack__ with max_version None (a legacy capsule) and (1, x) (a versioned one), and
    the dl_device, stream and copy keywords, consumed by the framework."""
    if fw.name not in ("numpy", "torch", "apache-tvm-ffi"):
        raise Skip(f"{fw.name} asks __dlpack__ itself; the capsule versions are checked with NumPy")
    versions = [None, (1, 0), (1, 3)]
    if fw.name == "numpy" and NP_VERSION < (2, 1):
        versions = [None]  # NumPy < 2.1 reads legacy capsules only
    if fw.name == "torch" and fw.release < (2, 9):
        versions = [None]  # PyTorch < 2.9 reads legacy capsules only
    if fw.name == "apache-tvm-ffi":
        versions = [None]  # tvm_ffi.from_dlpack asks for a legacy capsule (no max_version)

    @SETTINGS
    @given(arrays_of(fw.dtypes, views=False), st.sampled_from(versions),
           st.sampled_from([None, (1, 0)]), st.sampled_from([None, False, True]))
    def run(a, version, dl_device, copy):
        t = go_tensor(lib, fw, a)
        kw = {"max_version": version, "dl_device": dl_device, "stream": None, "copy": copy}
        if version is None:
            kw = {}  # the legacy call: no keyword at all
        y = fw.from_dlpack(Capsule(t, **kw))
        assert bits_equal(fw.to_numpy(y), a)
        # a stream other than None has no meaning on the CPU: refused, as NumPy refuses it
        for stream in (-1, 1):
            try:
                t.__dlpack__(stream=stream, max_version=version)
            except BufferError:
                continue
            raise AssertionError(f"__dlpack__(stream={stream}) of a CPU tensor was not refused")
    run()


def case_readonly(lib, fw):
    """A read-only Go tensor: the framework sees its values, and writing what it got never writes
    Go's memory (a versioned consumer gets READ_ONLY, a legacy one a copy)."""
    @SETTINGS
    @given(arrays_of([d for d in fw.dtypes if d != "bool"], views=False))
    def run(a):
        src = fw.make(np.ascontiguousarray(a).copy())
        t = lib.readonly(src, returns="tensor")
        assert t.readonly
        y = fw.from_dlpack(t)
        assert bits_equal(fw.to_numpy(y), a)
        if fw.name == "numpy" and a.size:
            if y.flags.writeable:
                y.reshape(-1)[0] = y.reshape(-1)[-1] + np.ones((), y.dtype)
            assert bits_equal(fw.to_numpy(src), a), "a consumer wrote a read-only tensor's memory"
    run()


def case_exchange_api(lib, fw):
    """DLPack 1.3's C exchange API both ways, with a peer that is not ours: the peer's
    __dlpack_c_exchange_api__ produces for lib.from_dlpack(via="api"), ours produces for the
    peer's from_dlpack, and lib.to_framework hands a Go tensor to the peer's to_py_object.
    The peers: apache-tvm-ffi (its DLTensorTestWrapper carries the API) and PyTorch >= 2.10."""
    if fw.name == "apache-tvm-ffi":
        cls = fw.mod.core.DLTensorTestWrapper
        wrap = cls
    elif fw.name == "torch" and hasattr(fw.mod.Tensor, "__dlpack_c_exchange_api__"):
        cls, wrap = fw.mod.Tensor, (lambda x: x)
    else:
        raise Skip(f"{fw.name} {fw.version} publishes no __dlpack_c_exchange_api__")

    @SETTINGS
    @given(arrays_of(fw.dtypes, views=False))
    def run(a):
        before = lib.exchange_counts()
        peer = fw.make(np.ascontiguousarray(a))
        t = lib.from_dlpack(wrap(peer), via="api")      # the peer's API produces
        assert bits_equal(go_values(fw, t), fw.to_numpy(peer))
        if a.size:
            assert t.data_ptr == fw.address(peer), "the API import copied"
        g = go_tensor(lib, fw, a)
        y = fw.from_dlpack(g)                           # our API (or __dlpack__) produces for the peer
        assert bits_equal(fw.to_numpy(y), a)
        z = lib.to_framework(g, cls)                    # the peer's API adopts our export
        assert bits_equal(fw.to_numpy(z if fw.name == "torch" else fw.mod.from_dlpack(z)), a)
        after = lib.exchange_counts()
        assert after["import_api"] > before["import_api"], (before, after)
        assert after["to_py"] + after["export_api"] > before["to_py"] + before["export_api"], (before, after)
    run()


CASES = [case_import, case_import_copy, case_go_function, case_export, case_export_keywords,
         case_capsule_versions, case_readonly, case_exchange_api]


def main():
    path = os.environ.get("DLPACKGO_TESTLIB")
    if not path:
        raise SystemExit("DLPACKGO_TESTLIB must name the test library (see the module docstring)")
    lib = dlpackgo.Library(path)
    failed = False
    for cls in FRAMEWORKS:
        try:
            fw = cls()
        except ImportError:
            continue  # not installed in this interpreter: the Go test says which it expects
        report = {"framework": fw.name, "version": fw.version, "python": sys.version.split()[0],
                  "numpy": np.__version__, "dtypes": fw.dtypes, "cases": []}
        for case in CASES:
            name = case.__name__[len("case_"):]
            try:
                case(lib, fw)
                report["cases"].append({"case": name, "outcome": "passed"})
            except Skip as e:
                report["cases"].append({"case": name, "outcome": "skipped", "reason": str(e)})
            except Exception as e:  # noqa: BLE001: every failure is reported, with its example
                failed = True
                report["cases"].append({"case": name, "outcome": "failed",
                                        "reason": "".join(traceback.format_exception(e))[-4000:]})
        print(json.dumps(report), flush=True)
    lib.collect()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
