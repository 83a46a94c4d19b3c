package tinyonnx_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/tinyonnx"
)

var (
	w = [][]float64{{1, 0}, {0, 1}, {1, 1}}
	b = []float64{0.5, -1}
)

// Python's onnx package (the reference parser and checker) reads the file as we meant it.
func TestPythonOnnxReadsTheModel(t *testing.T) {
	m, err := tinyonnx.Dense(w, b)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "dense.onnx")
	require.NoError(t, m.WriteFile(path))

	const script = `
import sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
g = m.graph
print(m.ir_version, [(o.domain, o.version) for o in m.opset_import])
print([n.op_type for n in g.node], [list(n.input) for n in g.node], [list(n.output) for n in g.node])
for v in list(g.input) + list(g.output):
    t = v.type.tensor_type
    print(v.name, t.elem_type, [d.dim_param or d.dim_value for d in t.shape.dim])
for i in g.initializer:
    print(i.name, list(i.dims), numpy_helper.to_array(i).ravel().tolist())
`
	out, err := exec.Command(pyrun.Interpreter, "-c", script, path).CombinedOutput()
	require.NoError(t, err, "needs /usr/bin/python3 with python3-onnx (apt-get install python3-onnx): %s", out)
	assert.Equal(t, strings.Join([]string{
		"7 [('', 13)]",
		"['MatMul', 'Add', 'Relu'] [['X', 'W'], ['XW', 'B'], ['Z']] [['XW'], ['Z'], ['Y']]",
		"X 11 ['N0', 3]",
		"Y 11 ['N0', 2]",
		"W [3, 2] [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]",
		"B [2] [0.5, -1.0]",
	}, "\n")+"\n", string(out))
}

// ONNX Runtime loads the model and computes Relu(X·W + B), for any batch size.
func TestOnnxRuntimeRunsTheModel(t *testing.T) {
	require.NoError(t, onnxx.Init(), "needs the ONNX Runtime library: run scripts/fetch-ort.sh")
	m, err := tinyonnx.Dense(w, b)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "dense.onnx")
	require.NoError(t, m.WriteFile(path))

	for _, batch := range []int64{1, 3} {
		xs := []float64{1, 2, 3, -4, -5, -6, 0, 0, 0}[:3*batch]
		x, err := core.FromFloat64s(xs, batch, 3)
		require.NoError(t, err)
		out, err := onnxx.Run(path, map[string]*core.Tensor{"X": x}, nil)
		require.NoError(t, err)
		y := out["Y"]
		require.NotNil(t, y)
		assert.Equal(t, []int64{batch, 2}, y.Shape())
		got, err := core.ReadOnlyElements[float64](y)
		require.NoError(t, err)
		want := []float64{4.5, 4, 0, 0, 0.5, 0}[:2*batch]
		assert.Equal(t, want, got)
	}
}

func TestBadDescriptions(t *testing.T) {
	_, err := tinyonnx.Dense(nil, nil)
	assert.True(t, errors.Is(err, tinyonnx.ErrModel), err)
	_, err = tinyonnx.Dense([][]float64{{1, 2}, {3}}, []float64{0, 0})
	assert.True(t, errors.Is(err, tinyonnx.ErrModel), err)

	good, err := tinyonnx.Dense(w, b)
	require.NoError(t, err)
	for name, m := range map[string]tinyonnx.Model{
		"no nodes":      {Inputs: good.Inputs, Outputs: good.Outputs},
		"unnamed input": {Inputs: []tinyonnx.Value{{Type: tinyonnx.Double}}, Outputs: good.Outputs, Nodes: good.Nodes},
		"bad type":      {Inputs: []tinyonnx.Value{{Name: "X", Type: 7}}, Outputs: good.Outputs, Nodes: good.Nodes},
		"short weights": {Inputs: good.Inputs, Outputs: good.Outputs, Nodes: good.Nodes,
			Initializers: []tinyonnx.Initializer{{Name: "W", Shape: []int64{3, 2}, Data: []float64{1}}}},
	} {
		_, err := m.Encode()
		assert.True(t, errors.Is(err, tinyonnx.ErrModel), "%s: %v", name, err)
	}
}
