package tinyonnx_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/onnxx/tinyonnx"
)

// pyModel has Python's onnx write a model with every kind of declaration ReadGraph tells apart
// (a shape, a scalar, no shape, symbolic and unset dimensions, a sequence), a 4 MiB initializer
// and a Constant node with a tensor attribute, and returns its path and what onnx reads of it.
func pyModel(t *testing.T) (string, tinyonnx.Graph) {
	t.Helper()
	const script = `
import sys, json, numpy as np, onnx
from onnx import helper, TensorProto as T
big = helper.make_tensor("Big", T.FLOAT, [1 << 20], np.ones(1 << 20, np.float32).tobytes(), raw=True)
c = helper.make_node("Constant", [], ["C"], value=helper.make_tensor("c", T.DOUBLE, [2], [1.0, 2.0]))
unset = helper.make_tensor_value_info("P", T.INT64, [None, 4])
g = helper.make_graph(
    [c, helper.make_node("Relu", ["X"], ["Y"]), helper.make_node("Identity", ["S"], ["Z"])], "g",
    [helper.make_tensor_value_info("X", T.FLOAT, None), helper.make_tensor_value_info("S", T.FLOAT, []), unset,
     helper.make_tensor_sequence_value_info("Q", T.FLOAT, [2])],
    [helper.make_tensor_value_info("Y", T.FLOAT, ["batch", 3, 7]), helper.make_tensor_value_info("Z", T.FLOAT, []),
     helper.make_tensor_value_info("C", T.DOUBLE, [2])],
    initializer=[big])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(m, sys.argv[1])
def vi(v):
    if not v.type.HasField("tensor_type"):
        return {"Name": v.name}
    t = v.type.tensor_type
    d = {"Name": v.name, "Tensor": True, "ElemType": t.elem_type, "HasShape": t.HasField("shape")}
    if t.HasField("shape"):
        d["Shape"] = [x.dim_value if x.HasField("dim_value") else -1 for x in t.shape.dim]
    return d
print(json.dumps({"Inputs": [vi(v) for v in m.graph.input], "Outputs": [vi(v) for v in m.graph.output],
    "Initializers": [i.name for i in m.graph.initializer],
    "Nodes": [{"Op": n.op_type, "Inputs": list(n.input) or None, "Outputs": list(n.output) or None} for n in m.graph.node]}))
`
	path := filepath.Join(t.TempDir(), "g.onnx")
	out, err := exec.Command(pyrun.Interpreter, "-c", script, path).Output()
	require.NoError(t, err, "needs /usr/bin/python3 with python3-onnx and python3-numpy")
	var want tinyonnx.Graph
	require.NoError(t, json.Unmarshal(out, &want))
	return path, want
}

// TestReadGraph reads what Python's onnx wrote and finds what onnx itself reads: names, element
// types, shapes (a missing shape field told from an empty one), initializers and nodes.
func TestReadGraph(t *testing.T) {
	path, want := pyModel(t)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	got, err := tinyonnx.ReadGraph(f, st.Size())
	require.NoError(t, err)
	for i := range want.Inputs { // JSON has no nil and empty slices apart
		for _, v := range []*tinyonnx.ValueInfo{&want.Inputs[i], &got.Inputs[i]} {
			if len(v.Shape) == 0 {
				v.Shape = nil
			}
		}
	}
	for i := range want.Outputs {
		for _, v := range []*tinyonnx.ValueInfo{&want.Outputs[i], &got.Outputs[i]} {
			if len(v.Shape) == 0 {
				v.Shape = nil
			}
		}
	}
	assert.Equal(t, want, *got)
	assert.False(t, got.Inputs[0].HasShape, "X has no shape field: unknown rank")
	assert.True(t, got.Inputs[1].HasShape, "S has an empty shape: a scalar")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	fromBytes, err := tinyonnx.ReadGraphBytes(b)
	require.NoError(t, err)
	assert.Equal(t, got, fromBytes)
}

// TestReadGraphEncoded reads back what Encode wrote.
func TestReadGraphEncoded(t *testing.T) {
	m, err := tinyonnx.Dense(w, b)
	require.NoError(t, err)
	enc, err := m.Encode()
	require.NoError(t, err)
	g, err := tinyonnx.ReadGraphBytes(enc)
	require.NoError(t, err)
	assert.Equal(t, []tinyonnx.ValueInfo{{Name: "X", Tensor: true, ElemType: tinyonnx.Double, HasShape: true, Shape: []int64{-1, 3}}}, g.Inputs)
	assert.Equal(t, []tinyonnx.ValueInfo{{Name: "Y", Tensor: true, ElemType: tinyonnx.Double, HasShape: true, Shape: []int64{-1, 2}}}, g.Outputs)
	assert.Equal(t, []string{"W", "B"}, g.Initializers)
	assert.Equal(t, m.Nodes, g.Nodes)
}

// TestReadGraphMalformed refuses bytes that are not a model, with ErrFormat.
func TestReadGraphMalformed(t *testing.T) {
	m, err := tinyonnx.Dense(w, b)
	require.NoError(t, err)
	enc, err := m.Encode()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"no graph", []byte{0x08, 0x07}},
		{"truncated", enc[:len(enc)/2]},
		{"length past the end", []byte{0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"endless varint", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"group wire type", []byte{0x3b}},
		{"field zero", []byte{0x02, 0x00}},
		{"graph as varint", []byte{0x38, 0x01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tinyonnx.ReadGraphBytes(tc.b)
			assert.ErrorIs(t, err, tinyonnx.ErrFormat)
		})
	}
}

// FuzzReadGraph, seeded with Encode's output and with models Python's onnx wrote (testdata: a
// Loop with a subgraph, a Constant node, shapeless values), reads arbitrary bytes: an error or a graph, never a panic, and nothing larger
// than the input allocated per name.
func FuzzReadGraph(f *testing.F) {
	m, err := tinyonnx.Dense(w, b)
	require.NoError(f, err)
	enc, err := m.Encode()
	require.NoError(f, err)
	f.Add(enc)
	f.Add(enc[:len(enc)-3])
	seeds, err := filepath.Glob("testdata/*.onnx") // written by Python's onnx (onnxx/testdata/models.py)
	require.NoError(f, err)
	require.NotEmpty(f, seeds)
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		_, err = tinyonnx.ReadGraphBytes(b)
		require.NoError(f, err, "%s", p)
		f.Add(b)
	}
	f.Add([]byte{0x3a, 0x02, 0x5a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := tinyonnx.ReadGraphBytes(b)
		if err != nil {
			assert.ErrorIs(t, err, tinyonnx.ErrFormat)
			return
		}
		for _, v := range append(g.Inputs, g.Outputs...) {
			assert.LessOrEqual(t, len(v.Name), len(b))
			assert.LessOrEqual(t, len(v.Shape), len(b))
		}
	})
}
