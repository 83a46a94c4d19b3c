package gomlxx_test

import (
	"bytes"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/gorgoniax"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/dlpack-go/dlpack/pyfind"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// A model's layer computed by GoMLX on its pure-Go backend (gobackend, no C library), on inputs
// from Gonum (a matrix), from NumPy (a .npy file, Fortran order, written by Debian's NumPy) and
// from a memory-mapped .safetensors file,
// and the result handed, without a copy, to Gorgonia, and through a .npy file to NumPy, which
// checks it against its own computation.
func TestGoMLXComputesOnGonumAndNumPyData(t *testing.T) {
	dir := t.TempDir()
	python(t, `
import sys, numpy as np
w = np.arange(1, 9, dtype=np.float64).reshape(4, 2) / 10
np.save(sys.argv[1], np.asfortranarray(w))
b = np.array([0.5, -0.25])
np.save(sys.argv[2], b)
`, filepath.Join(dir, "w.npy"), filepath.Join(dir, "b.npy"))

	// x: a Gonum matrix, copied into GoMLX (ToTensor: GoMLX has no constructor over caller memory)
	x := mat.NewDense(3, 4, []float64{1, 2, 3, 4, -1, -2, -3, -4, 0.5, 0, 0.25, 1})
	xt, err := gonumx.FromDense(x)
	require.NoError(t, err)
	xg, err := gomlxx.ToTensor(xt)
	require.NoError(t, err)
	// w: a Fortran-order .npy array; ToTensor copies it in C order
	wc, err := numpyx.ReadFile(filepath.Join(dir, "w.npy"))
	require.NoError(t, err)
	require.True(t, wc.IsFortranContiguous() && !wc.IsContiguous(), "NumPy wrote Fortran order")
	wg, err := gomlxx.ToTensor(wc)
	require.NoError(t, err)
	bc, err := numpyx.ReadFile(filepath.Join(dir, "b.npy"))
	require.NoError(t, err)
	// b also travels through a .safetensors file, memory-mapped on the way in: the GoMLX tensor
	// is made from the mapped, read-only weights (one copy into GoMLX, none out of the file)
	weights := filepath.Join(dir, "layer.safetensors")
	require.NoError(t, safetensorsx.WriteFile(weights, map[string]*core.Tensor{"bias": bc}, map[string]string{"format": "np"}))
	f, err := safetensorsx.Open(weights, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer f.Close()
	bm, err := f.Tensor("bias")
	require.NoError(t, err)
	require.True(t, bm.ReadOnly() && bm.Foreign(), "the bias is over the mapped file")
	bg, err := gomlxx.ToTensor(bm)
	require.NoError(t, err)

	// y = tanh(x·w + b), by GoMLX on the pure-Go backend
	layer, err := graph.NewExec(gobackend.GetBackend(), func(x, w, b *graph.Node) *graph.Node {
		return graph.Tanh(graph.Add(graph.MatMul(x, w), graph.InsertAxes(b, 0)))
	})
	require.NoError(t, err)
	yg, err := layer.Exec1(xg, wg, bg)
	require.NoError(t, err)
	require.Equal(t, []int{3, 2}, yg.Shape().Dimensions)
	yAddr := flatAddr(t, yg)

	// the result leaves GoMLX without a copy (Take moves the Go backend's buffer) ...
	yc, err := gomlxx.Take(yg, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, yAddr, yc.Data())

	// ... and goes to Gorgonia without a copy either
	yd, err := gorgoniax.ToDense(yc, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, yAddr, unsafe.Pointer(&yd.Float64s()[0]), "Gorgonia reads GoMLX's result buffer")

	// the values are Gonum's own computation of the layer
	var want mat.Dense
	w := mat.NewDense(4, 2, []float64{.1, .2, .3, .4, .5, .6, .7, .8})
	want.Mul(x, w)
	want.Apply(func(_, j int, v float64) float64 { return math.Tanh(v + []float64{0.5, -0.25}[j]) }, &want)
	for i := range 3 {
		for j := range 2 {
			got, err := yd.At(i, j)
			require.NoError(t, err)
			assert.InDelta(t, want.At(i, j), got.(float64), 1e-14, "y[%d,%d]", i, j)
		}
	}

	// NumPy reads the result and checks it against its own layer
	require.NoError(t, numpyx.WriteFile(filepath.Join(dir, "y.npy"), yc))
	xn, err := gonumx.FromMatrix(x)
	require.NoError(t, err)
	require.NoError(t, numpyx.WriteFile(filepath.Join(dir, "x.npy"), xn))
	out := python(t, `
import sys, numpy as np
d = sys.argv[1]
x, w, b, y = (np.load(d + "/" + n + ".npy") for n in "xwby")
want = np.tanh(x @ w + b)
assert y.shape == (3, 2) and y.dtype == np.float64, (y.shape, y.dtype)
print("maxdiff", float(np.max(np.abs(y - want))))
`, dir)
	t.Logf("NumPy: %s", strings.TrimSpace(out))
	fields := strings.Fields(out)
	require.Len(t, fields, 2, out)
	assert.Equal(t, "maxdiff", fields[0])
	diff, err := strconv.ParseFloat(fields[1], 64)
	require.NoError(t, err, out)
	assert.LessOrEqual(t, diff, 1e-14, "NumPy's own layer differs by %s", fields[1])
}

// Zero-copy into GoMLX: let GoMLX allocate, and Gonum write into its memory through a view.
func TestGonumWritesIntoGoMLXMemory(t *testing.T) {
	g := tensors.FromShape(shapes.Make(dtypes.Float64, 2, 2))
	v, err := gomlxx.FromTensor(g, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	d, err := gonumx.ToDense(v, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	d.Mul(mat.NewDense(2, 2, []float64{1, 2, 3, 4}), mat.NewDense(2, 2, []float64{0, 1, 1, 0}))
	assert.Equal(t, [][]float64{{2, 1}, {4, 3}}, g.Value(), "GoMLX sees what Gonum wrote")
	out := square(t).MustExec1(g)
	assert.Equal(t, [][]float64{{4, 1}, {16, 9}}, out.Value())
}

// python runs script with NumPy, in the interpreter pyfind picks ($PYTHON, then python3 on $PATH,
// then Debian's), and returns what it printed. This module may not import the root module's
// internal/pyrun.
func python(t *testing.T, script string, args ...string) string {
	t.Helper()
	py := pyfind.Interpreter("numpy")
	cmd := exec.Command(py, append([]string{"-c", script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s ran the script (set $PYTHON to an interpreter with numpy):\n%s", py, stderr.String())
	return string(out)
}
