"""The pyarrow side of the interoperability matrix (arrowx/internal/interop).

python pyarrow_matrix.py write|read MANIFEST

write: writes every cell's file with pyarrow (FixedShapeTensorArray for fixed_shape cells with
nullable children; the storage with the extension's field metadata otherwise, as pyarrow 26 has no
arrow.variable_shape_tensor and its fixed_shape_tensor type always declares nullable children).
read: reads every cell's file (written by dlpack-go) with pyarrow and checks the extension name
and metadata, the storage, and every value. Prints {cell name: "ok" or what was wrong} as JSON.
Values follow the formula of spec_test.go.
"""
import ctypes
import json
import struct
import sys
import traceback

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MUL, ADD = 0x9E3779B97F4A7C15, 12345
NP = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8,
      "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
      "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool8": np.int8,
      "bool": np.bool_}
ARROW = {"float16": pa.float16(), "float32": pa.float32(), "float64": pa.float64(),
         "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
         "uint8": pa.uint8(), "uint16": pa.uint16(), "uint32": pa.uint32(),
         "uint64": pa.uint64(), "bool8": pa.bool8(), "bool": pa.bool_()}
EXT_NAME, EXT_META = b"ARROW:extension:name", b"ARROW:extension:metadata"


def values(dtype, k0, n):
    """Values k0 .. k0+n-1 of dtype, as numpy (bool8 as its int8 storage)."""
    ks = range(k0, k0 + n)
    if dtype in ("bool8", "bool"):
        return np.array([0 if k % 3 == 1 else 1 for k in ks], NP[dtype])
    if dtype.startswith("float"):
        return np.array([((37 * k) % 101 - 50) / 8 for k in ks], np.float64).astype(NP[dtype])
    w = np.dtype(NP[dtype]).itemsize * 8
    u = [(k * MUL + ADD) % (1 << w) for k in ks]
    if dtype.startswith("int"):
        u = [x - (1 << w) if x >= 1 << (w - 1) else x for x in u]
    return np.array(u, NP[dtype])


def value_array(dtype, k0, n):
    v = pa.array(values(dtype, k0, n), pa.int8() if dtype == "bool8" else ARROW[dtype])
    if dtype == "bool8":
        v = pa.ExtensionArray.from_storage(pa.bool8(), v)
    return v


class _ArrowSchema(ctypes.Structure):
    """The C Data Interface's ArrowSchema."""
    _fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_void_p),
                ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
                ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


def ext_metadata(typ):
    """The serialized metadata of an extension type that pyarrow's Python layer does not expose
    (arrow.variable_shape_tensor is implemented in Arrow C++ only): exported through the C Data
    Interface, whose ArrowSchema carries it."""
    s = _ArrowSchema()
    typ._export_to_c(ctypes.addressof(s))
    try:
        md = {}
        if s.metadata:
            raw = ctypes.string_at(s.metadata, 4)
            (n,) = struct.unpack("<i", raw)
            at = 4
            for _ in range(n):
                kl = struct.unpack("<i", ctypes.string_at(s.metadata + at, 4))[0]
                k = ctypes.string_at(s.metadata + at + 4, kl)
                at += 4 + kl
                vl = struct.unpack("<i", ctypes.string_at(s.metadata + at, 4))[0]
                md[k] = ctypes.string_at(s.metadata + at + 4, vl)
                at += 4 + vl
        return md[EXT_NAME].decode(), json.loads(md[EXT_META] or b"{}")
    finally:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(s.release)(ctypes.addressof(s))


def fixed_meta(spec):
    f = spec["fixed"]
    return {"shape": f["shape"], "dim_names": f["dim_names"], "permutation": f["permutation"]}


def variable_meta(spec):
    v = spec["variable"]
    return {"dim_names": v["dim_names"], "uniform_shape": v["uniform_shape"]}


def field_md(name, meta):
    return {EXT_NAME: name.encode(), EXT_META: json.dumps(meta).encode()}


def fixed_column(spec, c):
    f = spec["fixed"]
    size = int(np.prod(f["shape"]))
    vt = ARROW[c["dtype"]]
    child = value_array(c["dtype"], 0, f["rows"] * size)
    if c["nullable"]:
        typ = pa.fixed_shape_tensor(vt, f["shape"], dim_names=f["dim_names"], permutation=f["permutation"])
        storage = pa.FixedSizeListArray.from_arrays(child, size)
        arr = pa.ExtensionArray.from_storage(typ, storage)
        assert isinstance(arr, pa.FixedShapeTensorArray)
        return pa.field("tensor", typ), arr
    st = pa.list_(pa.field("item", vt, nullable=False), size)
    storage = pa.FixedSizeListArray.from_arrays(child, type=st)
    return pa.field("tensor", st, metadata=field_md("arrow.fixed_shape_tensor", fixed_meta(spec))), storage


def variable_column(spec, c):
    v = spec["variable"]
    shapes = v["shapes"]
    ndim = len(shapes[0])
    vt = ARROW[c["dtype"]]
    sizes = [int(np.prod(s)) for s in shapes]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    child = value_array(c["dtype"], 0, int(offsets[-1]))
    n = c["nullable"]
    dt = pa.list_(pa.field("item", vt, nullable=n))
    shp = pa.list_(pa.field("item", pa.int32(), nullable=n), ndim)
    data = pa.ListArray.from_arrays(pa.array(offsets), child, type=dt)
    shape = pa.FixedSizeListArray.from_arrays(pa.array(np.array(shapes, np.int32).ravel()), type=shp)
    st = pa.struct([pa.field("data", dt), pa.field("shape", shp)])
    storage = pa.StructArray.from_arrays([data, shape], fields=list(st))
    return pa.field("tensor", st, metadata=field_md("arrow.variable_shape_tensor", variable_meta(spec))), storage


def write(spec, c):
    field, arr = (fixed_column if c["kind"] == "fixed_shape" else variable_column)(spec, c)
    schema = pa.schema([field])
    batch = pa.record_batch([arr], schema=schema)
    if c["format"] == "parquet":
        pq.write_table(pa.Table.from_batches([batch]), c["path"])
        return
    opener = pa.ipc.new_stream if c["format"] == "ipc_stream" else pa.ipc.new_file
    with pa.OSFile(c["path"], "wb") as sink, opener(sink, schema) as w:
        w.write_batch(batch)


def read_table(c):
    if c["format"] == "parquet":
        return pq.read_table(c["path"])
    with pa.memory_map(c["path"]) as src:
        if c["format"] == "ipc_stream":
            return pa.ipc.open_stream(src).read_all()
        return pa.ipc.open_file(src).read_all()


def same(got, want, what):
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        raise AssertionError(f"{what}: {got.dtype}{list(got.shape)} {got.ravel()[:8]}..., want "
                             f"{want.dtype}{list(want.shape)} {want.ravel()[:8]}...")


def flat_values(arr, dtype):
    """The values under a list array (offset and length respected), as numpy."""
    v = arr.flatten()
    if isinstance(v, pa.ExtensionArray):
        if v.type.extension_name != "arrow.bool8" or dtype != "bool8":
            raise AssertionError(f"values of type {v.type}, want {ARROW[dtype]}")
        v = v.storage
    elif v.type != ARROW[dtype]:
        raise AssertionError(f"values of type {v.type}, want {ARROW[dtype]}")
    return v.to_numpy(zero_copy_only=False)


def check(spec, c):
    table = read_table(c)
    if table.num_columns != 1 or table.column_names != ["tensor"]:
        raise AssertionError(f"columns {table.column_names}")
    field = table.schema.field(0)
    arr = table.column(0).combine_chunks()
    if c["kind"] == "matrix":
        raise AssertionError("no matrix cells for pyarrow")
    want_name = "arrow." + c["kind"] + "_tensor"
    if isinstance(field.type, pa.BaseExtensionType):
        typ = field.type
        name = typ.extension_name
        if isinstance(typ, pa.FixedShapeTensorType):
            meta = {"shape": list(typ.shape)}
            if typ.dim_names is not None:
                meta["dim_names"] = list(typ.dim_names)
            if typ.permutation is not None:
                meta["permutation"] = list(typ.permutation)
        else:
            name, meta = ext_metadata(typ)
        storage = arr.storage
        declared = None  # pyarrow's tensor types declare nullable children whatever was stored
    else:
        md = field.metadata or {}
        if EXT_NAME not in md:
            raise AssertionError(f"read as {field.type} without extension metadata ({md})")
        name, meta = md[EXT_NAME].decode(), json.loads(md[EXT_META])
        storage = arr
        declared = c["nullable"]
    if name != want_name:
        raise AssertionError(f"extension {name}, want {want_name}")
    want_meta = fixed_meta(spec) if c["kind"] == "fixed_shape" else variable_meta(spec)
    if meta != want_meta:
        raise AssertionError(f"metadata {meta}, want {want_meta}")
    dtype = c["dtype"]
    if c["kind"] == "fixed_shape":
        f = spec["fixed"]
        size = int(np.prod(f["shape"]))
        if not pa.types.is_fixed_size_list(storage.type) or storage.type.list_size != size:
            raise AssertionError(f"storage {storage.type}")
        if declared is not None and storage.type.value_field.nullable != declared:
            raise AssertionError(f"storage {storage.type}: child nullable {storage.type.value_field.nullable}")
        if len(storage) != f["rows"]:
            raise AssertionError(f"{len(storage)} tensors")
        phys = values(dtype, 0, f["rows"] * size)
        same(flat_values(storage, dtype), phys, "values")
        if isinstance(arr, pa.FixedShapeTensorArray) and dtype != "bool8":
            # the logical shape: logical dimension i is physical dimension permutation[i]. Only
            # the shape: pyarrow 26's to_numpy_ndarray() of a permuted type has strides that do not
            # follow the specification (dimensions overlap), whoever wrote the array
            want = phys.reshape([f["rows"]] + f["shape"]).transpose([0] + [p + 1 for p in f["permutation"]])
            got = arr.to_numpy_ndarray()
            if got.shape != want.shape:
                raise AssertionError(f"to_numpy_ndarray() of shape {got.shape}, want {want.shape}")
        return
    v = spec["variable"]
    if not pa.types.is_struct(storage.type):
        raise AssertionError(f"storage {storage.type}")
    data, shape = storage.field("data"), storage.field("shape")
    for what, a in (("data", data), ("shape", shape)):
        if declared is not None and a.type.value_field.nullable != declared:
            raise AssertionError(f"{what} {a.type}: child nullable {a.type.value_field.nullable}")
    if shape.type.list_size != len(v["shapes"][0]) or shape.type.value_type != pa.int32():
        raise AssertionError(f"shape {shape.type}")
    if len(storage) != len(v["shapes"]):
        raise AssertionError(f"{len(storage)} tensors")
    k = 0
    for i, s in enumerate(v["shapes"]):
        if shape[i].as_py() != s:
            raise AssertionError(f"tensor {i} has shape {shape[i].as_py()}, want {s}")
        n = int(np.prod(s))
        same(flat_values(data.slice(i, 1), dtype), values(dtype, k, n), f"tensor {i}")
        k += n


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        m = json.load(f)
    out = {}
    for c in m["cells"]:
        try:
            (write if mode == "write" else check)(m["spec"], c)
            out[c["name"]] = "ok"
        except Exception as e:  # one cell's failure is that cell's
            out[c["name"]] = f"{type(e).__name__}: {e}" + ("" if isinstance(e, AssertionError) else
                                                          "\n" + traceback.format_exc(limit=3))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
