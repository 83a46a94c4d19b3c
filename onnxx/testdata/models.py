"""Builds the ONNX models the onnxx tests run, and their inputs and NumPy's expected outputs.

Usage: python3 models.py OUTDIR. Writes OUTDIR/<case>.onnx, raw little-endian element files
OUTDIR/<case>.<tensor>.bin, and OUTDIR/manifest.json describing every case:
{"cases": [{"name", "model", "inputs": [{"name", "dtype", "shape", "file"}], "outputs": [...],
"tol"}]}. Needs Debian's python3-onnx (opset <= 17) and python3-numpy.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
rng = np.random.default_rng(7)
cases = []

ONNX = {
    "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16, "int8": TensorProto.INT8, "int16": TensorProto.INT16,
    "int32": TensorProto.INT32, "int64": TensorProto.INT64, "uint8": TensorProto.UINT8,
    "uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64,
    "bool": TensorProto.BOOL,
}


def save(graph, name, check=True):
    """Writes graph as OUTDIR/name.onnx. check=False skips onnx's checker, which (in onnx 1.12)
    refuses graph inputs and outputs without a shape, which ONNX Runtime runs."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxx-test")
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    path = os.path.join(out, name + ".onnx")
    onnx.save(model, path)
    return path


def write(case, tname, dtype, arr):
    f = os.path.join(out, "%s.%s.bin" % (case, tname))
    np.ascontiguousarray(arr).tofile(f)
    return {"name": tname, "dtype": dtype, "shape": list(arr.shape), "file": f}


def bf16_round(f32):
    """float32 -> bfloat16 bits, round to nearest even (NaN not produced here)."""
    u = f32.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = u + 0x7FFF + ((u >> 16) & 1)
    return (u >> 16).astype(np.uint16)


def bf16_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def sample(dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == "bfloat16":
        return bf16_round(rng.uniform(-4, 4, shape).astype(np.float32))
    if dtype.startswith("float"):
        return rng.uniform(-4, 4, shape).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -100), min(info.max, 100)
    return rng.integers(lo, hi, shape, dtype=dtype, endpoint=True)


# 1. Element-wise, every dtype: Z = X op Y (Add; Or for bool) and W = Identity(X).
#    float16 and bfloat16 go through float32 (Cast) because ORT's CPU kernels lack them; the
#    graph inputs and outputs keep the dtype.
for dt in ONNX:
    shape = (3, 4, 5)
    x, y = sample(dt, shape), sample(dt, shape)
    vi = lambda n: helper.make_tensor_value_info(n, ONNX[dt], list(shape))
    if dt == "bool":
        nodes = [helper.make_node("Or", ["X", "Y"], ["Z"])]
        z = x | y
    elif dt in ("float16", "bfloat16"):
        nodes = [helper.make_node("Cast", ["X"], ["Xf"], to=TensorProto.FLOAT),
                 helper.make_node("Cast", ["Y"], ["Yf"], to=TensorProto.FLOAT),
                 helper.make_node("Add", ["Xf", "Yf"], ["Zf"]),
                 helper.make_node("Cast", ["Zf"], ["Z"], to=ONNX[dt])]
        if dt == "float16":
            z = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
        else:
            z = bf16_round(bf16_float(x) + bf16_float(y))
    else:
        nodes = [helper.make_node("Add", ["X", "Y"], ["Z"])]
        z = x + y
    nodes.append(helper.make_node("Identity", ["X"], ["W"]))
    name = "elementwise_" + dt
    g = helper.make_graph(nodes, name, [vi("X"), vi("Y")], [vi("Z"), vi("W")])
    cases.append({"name": name, "model": save(g, name), "tol": 0,
                  "inputs": [write(name, "X", dt, x), write(name, "Y", dt, y)],
                  "outputs": [write(name, "Z", dt, z), write(name, "W", dt, x)]})

# 2. MatMul, float32 and float64.
for dt in ("float32", "float64"):
    a, b = sample(dt, (8, 16)), sample(dt, (16, 4))
    name = "matmul_" + dt
    g = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["C"])], name,
                          [helper.make_tensor_value_info("A", ONNX[dt], [8, 16]),
                           helper.make_tensor_value_info("B", ONNX[dt], [16, 4])],
                          [helper.make_tensor_value_info("C", ONNX[dt], [8, 4])])
    cases.append({"name": name, "model": save(g, name), "tol": 1e-4 if dt == "float32" else 1e-12,
                  "inputs": [write(name, "A", dt, a), write(name, "B", dt, b)],
                  "outputs": [write(name, "C", dt, a @ b)]})

# 3. Dynamic axes: Y = X * 2 + 1 with X of shape [batch, 3]; S = ReduceSum(X, axis 1) of [batch];
#    float32, and float16 (whose dynamic outputs onnxruntime_go cannot allocate).
for dt in ("float32", "float16"):
    name = "dynamic_" + dt
    two = helper.make_tensor("two", ONNX[dt], [], [2.0])
    one = helper.make_tensor("one", ONNX[dt], [], [1.0])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    g = helper.make_graph([helper.make_node("Mul", ["X", "two"], ["X2"]),
                           helper.make_node("Add", ["X2", "one"], ["Y"]),
                           helper.make_node("ReduceSum", ["X", "axes"], ["S"], keepdims=0)], name,
                          [helper.make_tensor_value_info("X", ONNX[dt], ["batch", 3])],
                          [helper.make_tensor_value_info("Y", ONNX[dt], ["batch", 3]),
                           helper.make_tensor_value_info("S", ONNX[dt], ["batch"])],
                          initializer=[two, one, axes])
    path = save(g, name)
    for batch in (1, 5, 2):
        x = sample(dt, (batch, 3))
        if dt == "float16":
            y = (x.astype(np.float32) * 2 + 1).astype(np.float16)
            s = x.astype(np.float32).sum(axis=1).astype(np.float16)
        else:
            y, s = x * 2 + 1, x.sum(axis=1)
        cname = "%s_b%d" % (name, batch)
        cases.append({"name": cname, "model": path, "tol": 1e-2 if dt == "float16" else 1e-5,
                      "inputs": [write(cname, "X", dt, x)],
                      "outputs": [write(cname, "Y", dt, y), write(cname, "S", dt, s)]})

# 4. A 64 MiB float32 Add (benchmarks): Z = X + Y of 16 Mi elements, no data files.
n = 16 << 20
vi = lambda nm: helper.make_tensor_value_info(nm, TensorProto.FLOAT, [n])
save(helper.make_graph([helper.make_node("Add", ["X", "Y"], ["Z"])], "add64m", [vi("X"), vi("Y")], [vi("Z")]), "add64m")

# 5. A small model for latency (benchmarks): Y = Relu(X @ W + B), X [1, 64], W [64, 64].
w = helper.make_tensor("W", TensorProto.FLOAT, [64, 64], rng.uniform(-1, 1, 64 * 64).astype(np.float32).tolist())
bb = helper.make_tensor("B", TensorProto.FLOAT, [64], rng.uniform(-1, 1, 64).astype(np.float32).tolist())
save(helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["XB"]),
                        helper.make_node("Relu", ["XB"], ["Y"])], "small",
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 64])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 64])], initializer=[w, bb]), "small")
#    The same with a dynamic batch dimension, as models exported for serving have: ORT allocates Y.
save(helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["XB"]),
                        helper.make_node("Relu", ["XB"], ["Y"])], "small_dynamic",
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 64])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 64])], initializer=[w, bb]),
     "small_dynamic")

# 6. A scalar (0-d) model: Y = X + 1 for float32 scalars.
one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
save(helper.make_graph([helper.make_node("Add", ["X", "one"], ["Y"])], "scalar",
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, [])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [])], initializer=[one]), "scalar")

# 7. Dynamic axes for every dtype: Y = Concat(X, X, axis 0) with X [batch, 3], Y of a shape the
#    model does not declare (ORT allocates it; float16 and bfloat16 included), for two batch sizes.
for dt in ONNX:
    name = "dyn_" + dt
    g = helper.make_graph([helper.make_node("Concat", ["X", "X"], ["Y"], axis=0)], name,
                          [helper.make_tensor_value_info("X", ONNX[dt], ["batch", 3])],
                          [helper.make_tensor_value_info("Y", ONNX[dt], ["rows", 3])])
    path = save(g, name)
    for batch in (2, 7):
        x = sample(dt, (batch, 3))
        cname = "%s_b%d" % (name, batch)
        cases.append({"name": cname, "model": path, "tol": 0, "inputs": [write(cname, "X", dt, x)],
                      "outputs": [write(cname, "Y", dt, np.concatenate([x, x], axis=0))]})

# 8. Several inputs and outputs of several dtypes, dynamic first axis:
#    S = Where(M, A, Cast(B)) float32, C = Cast(A, int32), N = Not(M).
name = "multi"
a, b, m = sample("float32", (4, 3)), sample("int64", (4, 3)), sample("bool", (4, 3))
g = helper.make_graph([helper.make_node("Cast", ["B"], ["Bf"], to=TensorProto.FLOAT),
                       helper.make_node("Where", ["M", "A", "Bf"], ["S"]),
                       helper.make_node("Cast", ["A"], ["C"], to=TensorProto.INT32),
                       helper.make_node("Not", ["M"], ["N"])], name,
                      [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["n", 3]),
                       helper.make_tensor_value_info("B", TensorProto.INT64, ["n", 3]),
                       helper.make_tensor_value_info("M", TensorProto.BOOL, ["n", 3])],
                      [helper.make_tensor_value_info("S", TensorProto.FLOAT, ["n", 3]),
                       helper.make_tensor_value_info("C", TensorProto.INT32, ["n", 3]),
                       helper.make_tensor_value_info("N", TensorProto.BOOL, ["n", 3])])
cases.append({"name": name, "model": save(g, name), "tol": 0,
              "inputs": [write(name, "A", "float32", a), write(name, "B", "int64", b), write(name, "M", "bool", m)],
              "outputs": [write(name, "S", "float32", np.where(m, a, b.astype(np.float32))),
                          write(name, "C", "int32", a.astype(np.int32)), write(name, "N", "bool", ~m)]})

# 9. 0-d inputs and outputs: Y = B * Cast(K) ([3] float32), T = ReduceSum(B) (0-d), with K a 0-d
#    int64 and B [3].
name = "scalars"
k, bv = np.array(3, dtype=np.int64), sample("float32", (3,))
g = helper.make_graph([helper.make_node("Cast", ["K"], ["Kf"], to=TensorProto.FLOAT),
                       helper.make_node("Mul", ["B", "Kf"], ["Y"]),
                       helper.make_node("ReduceSum", ["B"], ["T"], keepdims=0)], name,
                      [helper.make_tensor_value_info("K", TensorProto.INT64, []),
                       helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3]),
                       helper.make_tensor_value_info("T", TensorProto.FLOAT, [])])
cases.append({"name": name, "model": save(g, name), "tol": 1e-6,
              "inputs": [write(name, "K", "int64", k), write(name, "B", "float32", bv)],
              "outputs": [write(name, "Y", "float32", bv * np.float32(3)), write(name, "T", "float32", np.array(bv.sum(), dtype=np.float32))]})

# 10. A recurrent cell, as streaming models have: H' = Tanh(X Wx + H Wh), Y = H' Wy, batch dynamic.
#     recurrent.json holds T steps of inputs and NumPy's states and outputs.
name = "recurrent"
wx, wh, wy = (rng.uniform(-0.5, 0.5, s).astype(np.float32) for s in ((4, 8), (8, 8), (8, 2)))
init = [helper.make_tensor(n, TensorProto.FLOAT, list(w.shape), w.flatten().tolist()) for n, w in (("Wx", wx), ("Wh", wh), ("Wy", wy))]
g = helper.make_graph([helper.make_node("MatMul", ["X", "Wx"], ["XW"]), helper.make_node("MatMul", ["H", "Wh"], ["HW"]),
                       helper.make_node("Add", ["XW", "HW"], ["Z"]), helper.make_node("Tanh", ["Z"], ["Hn"]),
                       helper.make_node("MatMul", ["Hn", "Wy"], ["Y"])], name,
                      [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4]),
                       helper.make_tensor_value_info("H", TensorProto.FLOAT, ["batch", 8])],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 2]),
                       helper.make_tensor_value_info("Hn", TensorProto.FLOAT, ["batch", 8])], initializer=init)
save(g, name)
steps, batch = 6, 2
xs = sample("float32", (steps, batch, 4))
h = np.zeros((batch, 8), dtype=np.float32)
hs, ys = [], []
for t in range(steps):
    h = np.tanh(xs[t] @ wx + h @ wh).astype(np.float32)
    hs.append(h)
    ys.append((h @ wy).astype(np.float32))
with open(os.path.join(out, "recurrent.json"), "w") as f:
    json.dump({"xs": write(name, "xs", "float32", xs), "hs": write(name, "hs", "float32", np.stack(hs)),
               "ys": write(name, "ys", "float32", np.stack(ys))}, f)

# 11. Outputs this package refuses: a tensor of strings and a sequence.
name = "strings"
save(helper.make_graph([helper.make_node("Cast", ["X"], ["S"], to=TensorProto.STRING),
                        helper.make_node("SequenceConstruct", ["X", "X"], ["Q"]),
                        helper.make_node("Identity", ["X"], ["Y"])], name,
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                       [helper.make_tensor_value_info("S", TensorProto.STRING, [2]),
                        helper.make_tensor_sequence_value_info("Q", TensorProto.FLOAT, [2]),
                        helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])]), name)

# 12. Outputs ORT does not compute into the buffer it is given (issue 39): a graph output that is
#     a graph input (fixed and dynamic shape), one behind an Identity, initializers and a Constant
#     node as outputs (fixed, dynamic and unknown shape), beside an output that is computed.
f32 = TensorProto.FLOAT
vi = helper.make_tensor_value_info
wc = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
winit = helper.make_tensor("W", f32, [2, 3], wc.flatten().tolist())
save(helper.make_graph([helper.make_node("Relu", ["X"], ["R"])], "passthrough",
                       [vi("X", f32, [2, 3])], [vi("X", f32, [2, 3]), vi("R", f32, [2, 3])]), "passthrough")
save(helper.make_graph([helper.make_node("Relu", ["X"], ["R"])], "passthrough_dynamic",
                       [vi("X", f32, ["n", 3])], [vi("X", f32, ["n", 3]), vi("R", f32, ["n", 3])]), "passthrough_dynamic")
save(helper.make_graph([helper.make_node("Identity", ["X"], ["I"]), helper.make_node("Identity", ["I"], ["J"])],
                       "identity_chain", [vi("X", f32, ["n", 3])], [vi("J", f32, ["n", 3])]), "identity_chain")
save(helper.make_graph([helper.make_node("Relu", ["X"], ["R"]),
                        helper.make_node("Constant", [], ["C"], value=helper.make_tensor("c", f32, [2, 3], (wc * 10).flatten().tolist()))],
                       "constants", [vi("X", f32, [2, 3])],
                       [vi("W", f32, [2, 3]), vi("C", f32, [2, 3]), vi("R", f32, [2, 3])], initializer=[winit]), "constants")
save(helper.make_graph([helper.make_node("Relu", ["X"], ["R"])], "constants_dynamic", [vi("X", f32, [2, 3])],
                       [vi("W", f32, ["a", "b"]), helper.make_tensor_value_info("W2", f32, None), vi("R", f32, [2, 3])],
                       initializer=[winit, helper.make_tensor("W2", f32, [2, 3], (wc * 2).flatten().tolist())]), "constants_dynamic",
     check=False)

# 13. A model that declares an output far larger than what it computes (issue 39): Y = Relu(X)
#     with X [2] and Y declared [1 << 26] float32 (256 MiB):
#     Y = Reshape(X, S) with the shape S an input, so that ORT cannot infer Y's shape and keeps
#     the declared one.
save(helper.make_graph([helper.make_node("Reshape", ["X", "S"], ["Y"])], "huge_declared",
                       [vi("X", f32, [2]), vi("S", TensorProto.INT64, [1])], [vi("Y", f32, [1 << 26])]), "huge_declared")

# 14. What ORT runs without full shape information (issue 32), each a case with NumPy's results:
#     an input and output of unknown rank (no shape field), a partial shape, outputs whose rank
#     or size depends on the values (ConstantOfShape, NonZero, a Loop's scan output), and a graph
#     without inputs.
def unshaped(n, t):
    return helper.make_tensor_value_info(n, t, None)


def case(name, graph, inputs, outputs, tol=0):
    path = save(graph, name, check=False)
    cases.append({"name": name, "model": path, "tol": tol,
                  "inputs": [write(name, n, str(a.dtype), a) for n, a in inputs],
                  "outputs": [write(name, n, str(a.dtype), a) for n, a in outputs]})


x23 = sample("float32", (2, 3))
case("unknown_rank", helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "unknown_rank",
                                       [unshaped("X", f32)], [unshaped("Y", f32)]),
     [("X", x23)], [("Y", np.maximum(x23, 0))])
x4 = sample("float32", (4, 2, 5))
case("unknown_rank_4d", helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "unknown_rank_4d",
                                          [unshaped("X", f32)], [unshaped("Y", f32)]),
     [("X", x4)], [("Y", np.maximum(x4, 0))])
case("partial_shape", helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "partial_shape",
                                        [vi("X", f32, [None, 3])], [vi("Y", f32, [None, None])]),
     [("X", x23)], [("Y", np.maximum(x23, 0))])
case("constant_of_shape", helper.make_graph(
    [helper.make_node("ConstantOfShape", ["S"], ["Y"], value=helper.make_tensor("v", f32, [1], [1.5]))],
    "constant_of_shape", [vi("S", TensorProto.INT64, [2])], [unshaped("Y", f32)]),
    [("S", np.array([2, 3], dtype=np.int64))], [("Y", np.full((2, 3), 1.5, dtype=np.float32))])
xnz = np.array([[0, 1.5, 0], [2, 0, -1]], dtype=np.float32)
case("nonzero", helper.make_graph([helper.make_node("NonZero", ["X"], ["Y"])], "nonzero",
                                  [vi("X", f32, [2, 3])], [unshaped("Y", TensorProto.INT64)]),
     [("X", xnz)], [("Y", np.array(np.nonzero(xnz), dtype=np.int64))])
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Cast", ["i"], ["f"], to=f32),
     helper.make_node("Mul", ["f", "K"], ["s"])], "body",
    [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, [])],
    [vi("cond_out", TensorProto.BOOL, []), unshaped("s", f32)])
case("loop", helper.make_graph(
    [helper.make_node("Loop", ["M", "C"], ["Y"], body=body)], "loop",
    [vi("M", TensorProto.INT64, []), vi("C", TensorProto.BOOL, []), vi("K", f32, [2])], [unshaped("Y", f32)]),
    [("M", np.array(4, dtype=np.int64)), ("C", np.array(True)), ("K", np.array([1, -2], dtype=np.float32))],
    [("Y", np.arange(4, dtype=np.float32)[:, None] * np.array([1, -2], dtype=np.float32))])
case("no_inputs", helper.make_graph(
    [helper.make_node("Constant", [], ["Y"], value=helper.make_tensor("v", f32, [2], [3, 4]))], "no_inputs",
    [], [vi("Y", f32, [2])]), [], [("Y", np.array([3, 4], dtype=np.float32))])

# 15. A run that lasts until it is stopped (cancellation tests): V = Loop(M, C, V0) adding 1 to
#     V each iteration, M iterations (M = 2^62 does not end).
spin_body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["v_in", "one"], ["v_out"])],
    "spin_body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("v_in", f32, [1])],
    [vi("cond_out", TensorProto.BOOL, []), vi("v_out", f32, [1])],
    initializer=[helper.make_tensor("one", f32, [1], [1.0])])
save(helper.make_graph([helper.make_node("Loop", ["M", "C", "V0"], ["V"], body=spin_body)], "spin",
                       [vi("M", TensorProto.INT64, []), vi("C", TensorProto.BOOL, []), vi("V0", f32, [1])],
                       [vi("V", f32, [1])]), "spin")

# 16. An overridable initializer: Y = X + B, B [3] an initializer ([1, 2, 3]) that the graph also
#     lists among its inputs (IR version 8), so that ORT lets a run replace it.
save(helper.make_graph([helper.make_node("Add", ["X", "B"], ["Y"])], "overridable",
                       [vi("X", f32, [2, 3]), vi("B", f32, [3])], [vi("Y", f32, [2, 3])],
                       initializer=[helper.make_tensor("B", f32, [3], [1.0, 2.0, 3.0])]), "overridable")

with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump({"cases": cases}, f, indent=1)
