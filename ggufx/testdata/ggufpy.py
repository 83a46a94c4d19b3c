"""GGUF files made and read by llama.cpp's own Python package, gguf (PyPI, pinned in
scripts/peers-requirements.txt), for ggufx's tests against a reference that is not ours.

Run with the project's virtualenv python (scripts/pyvenv.sh prints it):

  python ggufx/testdata/ggufpy.py write OUT.gguf
      GGUFWriter writes OUT.gguf: metadata of every value type (scalars, arrays of each, arrays of
      arrays), tensors of every plain type, of every quantized type gguf quantizes (from float32
      rows, with gguf.quants.quantize) and of every other type it knows (random blocks). Prints a
      JSON manifest of what it asked for (floats as the hex of their little-endian bits, 64-bit
      integers as strings) and writes each tensor's bytes beside the file (OUT.gguf.<i>.raw).
  python ggufx/testdata/ggufpy.py read FILE.gguf
      GGUFReader reads FILE.gguf; prints every field (its types and contents) and every tensor info
      (type, shape, elements, bytes, data offset, SHA-256 of its data) as JSON.
  python ggufx/testdata/ggufpy.py seeds ggufx/testdata/fuzz
      Regenerates the fuzz seeds of FuzzParseHeader and FuzzOpen made by GGUFWriter (py-*): small
      files of every metadata type and of every type gguf writes, then the same patched to hold a
      type number ggml does not have (157), a removed one (31) and a fork's Q2_0 layout under
      ggml's number 42 (128 elements in 34 bytes; ggml's Q2_0 is 64 in 18).
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np
import gguf
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as Q, GGUFValueType as V

rng = np.random.default_rng(52)

# (key, value type, value, element type of an array); arrays of arrays give nested lists
META = [
    ("u8", V.UINT8, 255, None), ("i8", V.INT8, -128, None), ("u16", V.UINT16, 65535, None),
    ("i16", V.INT16, -32768, None), ("u32", V.UINT32, 2**32 - 1, None), ("i32", V.INT32, -2**31, None),
    ("f32", V.FLOAT32, 3.14159, None), ("bool", V.BOOL, True, None), ("bool.f", V.BOOL, False, None),
    ("str", V.STRING, "r\u00e9f \u2603 \n", None), ("empty", V.STRING, "", None),
    ("u64", V.UINT64, 2**64 - 1, None), ("i64", V.INT64, -2**63, None), ("f64", V.FLOAT64, -1e-300, None),
    ("a.u8", V.ARRAY, [0, 255], V.UINT8), ("a.i8", V.ARRAY, [-1, 127], V.INT8),
    ("a.u16", V.ARRAY, [3, 65535], V.UINT16), ("a.i16", V.ARRAY, [-4, 5], V.INT16),
    ("a.u32", V.ARRAY, [6], V.UINT32), ("a.i32", V.ARRAY, [-7, 2**31 - 1], V.INT32),
    ("a.f32", V.ARRAY, [1.5, float("-inf"), -0.0], V.FLOAT32), ("a.bool", V.ARRAY, [True, False], V.BOOL),
    ("a.str", V.ARRAY, ["<s>", "", "\u2581the"], V.STRING), ("a.u64", V.ARRAY, [2**64 - 1], V.UINT64),
    ("a.i64", V.ARRAY, [-9, -2**63], V.INT64), ("a.f64", V.ARRAY, [2.5, 1e300], V.FLOAT64),
    ("a.nested", V.ARRAY, [[1, -2], [3], [4, 5, 6]], None), ("a.nested.str", V.ARRAY, [["x", "y"], ["z"]], None),
    ("a.deep", V.ARRAY, [[["in"], ["side"]], [["out"]]], None), ("a.mixed", V.ARRAY, [[1.5], ["s"], [True]], None),
]

PY_TYPE = {str: V.STRING, float: V.FLOAT32, bool: V.BOOL, int: V.INT32, list: V.ARRAY}


def jval(t, v, sub=None):
    """v of value type t in the manifest's form (as ggufx's tests print a ggufx.Value)."""
    if t == V.FLOAT32:
        return struct.pack("<f", v).hex()
    if t == V.FLOAT64:
        return struct.pack("<d", v).hex()
    if t in (V.UINT64, V.INT64):
        return str(v)
    if t == V.ARRAY:
        et = sub if sub is not None else PY_TYPE[type(v[0])]
        return {"elem": int(et), "values": [jval(et, x) for x in v]}
    return v


def add_meta(w):
    for key, t, v, sub in META:
        w.add_key_value(key, v, t, sub_type=sub)


def plain_tensors():
    out = []
    for name, dt, shape in [("p.f32", "<f4", (3, 5)), ("p.f16", "<f2", (2, 3, 4)), ("p.f64", "<f8", (7,)),
                            ("p.i8", "<i1", (4, 2)), ("p.i16", "<i2", (5,)), ("p.i32", "<i4", (2, 1, 3, 2)),
                            ("p.i64", "<i8", (3,))]:
        d = np.dtype(dt)
        n = int(np.prod(shape))
        if d.kind == "f":
            a = (rng.standard_normal(n) * 100).astype(d).reshape(shape)
        else:
            info = np.iinfo(d)
            a = rng.integers(info.min, info.max, n, dtype=d, endpoint=True).reshape(shape)
        out.append((name, a, None, None))
    return out


def quant_tensors(blocks):
    """Tensors of every quantized type gguf knows: quantized from float32 rows where gguf
    quantizes the type, random blocks otherwise. Each is (name, byte array, type)."""
    out = []
    for q in Q:
        bs, ts = GGML_QUANT_SIZES[q]
        if bs == 1 and q != Q.BF16:
            continue
        rows = 2
        x = (rng.standard_normal((rows, bs * blocks)) * 3).astype(np.float32)
        try:
            b = gguf.quants.quantize(x, q)
        except NotImplementedError:
            b, x = rng.integers(0, 256, (rows, ts * blocks), dtype=np.uint8), None
        out.append(("q." + q.name.lower(), b, q, x))
    return out


def write(path, tensors, meta=True):
    w = gguf.GGUFWriter(path, "llama")
    if meta:
        add_meta(w)
    for name, a, q, *_ in tensors:
        if q is None:
            w.add_tensor(name, a)
        else:
            w.add_tensor(name, a, raw_dtype=q)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def cmd_write(path):
    tensors = plain_tensors() + quant_tensors(8)
    write(path, tensors)
    meta = [("general.architecture", V.STRING, "llama", None)] + META  # GGUFWriter's first key
    mani = {"meta": [[k, int(t), jval(t, v, sub)] for k, t, v, sub in meta], "tensors": []}
    for i, (name, a, q, x) in enumerate(tensors):
        raw = "%s.%d.raw" % (path, i)
        with open(raw, "wb") as f:
            f.write(np.ascontiguousarray(a).tobytes())
        e = {"name": name, "raw": raw}
        if x is not None:  # the float32 rows gguf.quants quantized
            e["rows"] = raw + ".f32"
            with open(e["rows"], "wb") as f:
                f.write(x.astype("<f4").tobytes())
        if q is None:
            e["shape"] = list(a.shape)
        else:
            e["type"] = int(q)
            e["shape"] = list(gguf.quants.quant_shape_from_byte_shape(a.shape, q))
            e["blockBytes"] = GGML_QUANT_SIZES[q][1]
        mani["tensors"].append(e)
    print(json.dumps(mani))


def rval(t, v):
    """A GGUFReader content in the manifest's form."""
    if isinstance(v, list):
        return [rval(t, x) for x in v]
    return jval(t, v)


def cmd_read(path):
    r = gguf.GGUFReader(path)
    fields = []
    for name, f in r.fields.items():
        if name.startswith("GGUF."):
            continue
        if f.types and f.types[0] == V.ARRAY:
            leaf = f.types[-1]
            val = [rval(leaf, x) for x in f.contents()] if f.contents() else []
        else:
            val = jval(f.types[0], f.contents())
        fields.append({"key": name, "types": [int(t) for t in f.types], "value": val})
    tensors = []
    for t in r.tensors:
        tensors.append({"name": t.name, "type": int(t.tensor_type), "shape": [int(d) for d in t.shape],
                        "elements": int(t.n_elements), "bytes": int(t.n_bytes), "offset": int(t.data_offset),
                        "sha256": hashlib.sha256(np.ascontiguousarray(t.data).tobytes()).hexdigest()})
    print(json.dumps({"version": int(r.fields["GGUF.version"].contents()), "alignment": int(r.alignment),
                      "fields": fields, "tensors": tensors}))


def patch(path, changes):
    """Rewrites the type numbers (and dimensions) of tensors in the file at path: changes maps a
    tensor's name to (type, dims or None). GGUFReader itself refuses a file with a type number it
    does not know, so every position is found before anything is written."""
    r = gguf.GGUFReader(path)
    b = bytearray(open(path, "rb").read())
    for t in r.tensors:
        if t.name not in changes:
            continue
        typ, dims = changes[t.name]
        parts = t.field.parts  # name length, name, rank, dims, type, offset
        at = t.field.offset + sum(p.nbytes for p in parts[:3])
        if dims is not None:
            assert len(dims) == len(parts[3])
            b[at:at + 8 * len(dims)] = struct.pack("<%dQ" % len(dims), *dims)
        at += parts[3].nbytes
        b[at:at + 4] = struct.pack("<I", typ)
    del r
    open(path, "wb").write(bytes(b))


def seed(dirs, name, path):
    b = open(path, "rb").read()
    lit = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else "\\x%02x" % c for c in b)
    for d in dirs:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "w") as f:
            f.write('go test fuzz v1\n[]byte("%s")\n' % lit)


def cmd_seeds(out):
    import tempfile
    dirs = [os.path.join(out, "FuzzParseHeader"), os.path.join(out, "FuzzOpen")]
    tmp = tempfile.mkdtemp()
    p = os.path.join(tmp, "meta.gguf")
    write(p, [("f32", np.arange(6, dtype=np.float32).reshape(2, 3), None),
              ("q8", gguf.quants.quantize(np.linspace(-1, 1, 32, dtype=np.float32).reshape(1, 32), Q.Q8_0), Q.Q8_0)])
    seed(dirs, "py-meta", p)
    p = os.path.join(tmp, "types.gguf")
    qs = [(n, a[:1], q) for n, a, q, _ in quant_tensors(1)]  # one block of each
    write(p, [("f32", np.ones(4, np.float32), None)] + qs, meta=False)
    seed(dirs, "py-types", p)
    p = os.path.join(tmp, "unknown.gguf")
    write(p, [("f32", np.ones(4, np.float32), None), ("a", qs[0][1], qs[0][2]), ("b", qs[1][1], qs[1][2]),
              ("fork", rng.integers(0, 256, (1, 34 * 32), dtype=np.uint8), Q.Q8_0),
              ("tail", np.ones(8, np.float32), None)], meta=False)
    # 32 blocks of 128 in 34 bytes under 42: a fork's Q2_0 (ggml's would run 64 bytes on)
    patch(p, {"a": (157, None), "b": (31, None), "fork": (42, [128 * 32, 1])})
    seed(dirs, "py-unknown", p)


if __name__ == "__main__":
    {"write": cmd_write, "read": cmd_read, "seeds": cmd_seeds}[sys.argv[1]](sys.argv[2])
