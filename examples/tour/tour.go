package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/gorgoniax"
	"github.com/dlpack-go/dlpack/gpu"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/tinyonnx"
	"github.com/dlpack-go/dlpack/pyfind"
)

// python returns the interpreter whose NumPy reads the tour's .npy file: $PYTHON when it is set,
// else python3 on $PATH (a venv, conda or pyenv interpreter) if it has NumPy, else Debian's
// /usr/bin/python3, which scripts/setup.sh gives python3-numpy (see package pyfind).
func python() string { return pyfind.Interpreter("numpy") }

// The dense layer the ONNX model computes: Y = Relu(X·W + B).
var (
	weights = [][]float64{{1, 0}, {0, 1}, {1, 1}}
	bias    = []float64{0.5, -1}
)

// yesNo answers "copied:" lines.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// tour runs every hop, writing what happens to w. It stops at the first hop that fails or
// cannot run, with an error that says what is missing.
func tour(w io.Writer) error {
	dir, err := os.MkdirTemp("", "dlpack-tour-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(w, "dlpack-go tour: one 2×3 float64 matrix through Gonum, Gorgonia, ONNX Runtime, NumPy and the GPU")

	// 1. Gonum → core → Gorgonia: a view of the same memory, never a copy.
	x := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	xt, err := gonumx.FromDense(x)
	if err != nil {
		return err
	}
	g, err := gorgoniax.ToDense(xt, adapters.ZeroCopyOnly())
	if err != nil {
		return fmt.Errorf("Gonum → Gorgonia: %w", err)
	}
	gonumAt, gorgoniaAt := &x.RawMatrix().Data[0], &g.Float64s()[0]
	fmt.Fprintf(w, "1 Gonum → Gorgonia     *mat.Dense → *tensor.Dense, copied: no (ZeroCopyOnly), same address %p: %t\n",
		gonumAt, gonumAt == gorgoniaAt)
	if err := g.SetAt(-50.0, 1, 1); err != nil {
		return err
	}
	fmt.Fprintf(w, "  proof by mutation: Gorgonia wrote X[1,1] = -50, Gonum reads %v\n", x.At(1, 1))

	// 2. core → ONNX Runtime: ORT reads X where Gonum keeps it, and writes Y into a Gonum matrix.
	if err := onnxx.Init(); err != nil {
		return fmt.Errorf("ONNX Runtime not found — run scripts/setup.sh (or scripts/fetch-ort.sh): %w", err)
	}
	model, err := tinyonnx.Dense(weights, bias)
	if err != nil {
		return err
	}
	modelPath := filepath.Join(dir, "dense.onnx")
	if err := model.WriteFile(modelPath); err != nil {
		return err
	}
	st, err := os.Stat(modelPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "2 core → ONNX Runtime  model Y = Relu(X·W + B), %d bytes of ONNX written in Go (tinyonnx), loaded by ORT\n", st.Size())

	y := mat.NewDense(2, 2, nil)
	yt, err := gonumx.FromDense(y)
	if err != nil {
		return err
	}
	s, err := onnxx.NewSession(modelPath, nil, nil, nil)
	if err != nil {
		return fmt.Errorf("ONNX Runtime rejected the model: %w", err)
	}
	defer s.Destroy()
	// ZeroCopyOnly: the run fails rather than copy X, so "copied: no" is a promise kept, not a guess
	inCopied := true
	out, err := s.RunWith(map[string]*core.Tensor{"X": xt}, map[string]*core.Tensor{"Y": yt},
		adapters.ZeroCopyOnly(), adapters.ReportCopy(&inCopied))
	if err != nil {
		return fmt.Errorf("ONNX Runtime run: %w", err)
	}
	fmt.Fprintf(w, "  input X: copied: %s (ZeroCopyOnly), ORT read it at Gonum's address %p\n", yesNo(inCopied), gonumAt)
	want := denseRelu(x)
	if out["Y"] != yt {
		return fmt.Errorf("ONNX Runtime returned Y in a tensor of its own, not in the Gonum matrix")
	}
	fmt.Fprintf(w, "  output Y: ORT wrote it into a zeroed *mat.Dense (RunWith), copied: no; Y = %v = Gonum's Relu(X·W + B) with X[1,1] = -50: %t\n",
		y.RawMatrix().Data, mat.Equal(y, want))
	if !mat.Equal(y, want) {
		return fmt.Errorf("ONNX Runtime computed %v, Gonum %v", y.RawMatrix().Data, want.RawMatrix().Data)
	}

	// 3. core → .npy → NumPy, and back by memory map.
	npy := filepath.Join(dir, "y.npy")
	if err := numpyx.WriteFile(npy, yt); err != nil {
		return err
	}
	version, got, err := numpyLoad(npy)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "3 core → .npy → NumPy  y.npy written (a file is a copy); NumPy %s np.load: %v, equal: %t\n",
		version, got, slices.Equal(got, y.RawMatrix().Data))
	if !slices.Equal(got, y.RawMatrix().Data) {
		return fmt.Errorf("NumPy read %v from y.npy, want %v", got, y.RawMatrix().Data)
	}
	var mapCopied bool
	back, err := numpyx.Map(npy, adapters.ReportCopy(&mapCopied))
	if err != nil {
		return err
	}
	backVals, err := core.ReadOnlyElements[float64](back)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  .npy → core: numpyx.Map, copied: %s (the tensor is over the mapped file), read-only: %t, equal: %t\n",
		yesNo(mapCopied), back.ReadOnly(), slices.Equal(backVals, y.RawMatrix().Data))
	back.Release()

	// 4. core → GPU → core, when there is a GPU.
	leftProcess := "the .npy file"
	d, err := gpu.To(yt, gpu.Device(0))
	switch {
	case errors.Is(err, gpu.ErrNoDevice):
		fmt.Fprintln(w, "4 core → GPU           no GPU here: skipped the GPU hop (errors.Is(err, gpu.ErrNoDevice))")
	case err != nil:
		return fmt.Errorf("core → GPU: %w", err)
	default:
		defer d.Release()
		h, err := gpu.To(d, core.CPUDevice)
		if err != nil {
			return fmt.Errorf("GPU → core: %w", err)
		}
		hv, err := core.ReadOnlyElements[float64](h)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "4 core → GPU → core    on %s and back: copied: yes (host↔device copies), equal: %t\n",
			d.Device(), slices.Equal(hv, y.RawMatrix().Data))
		if !slices.Equal(hv, y.RawMatrix().Data) {
			return fmt.Errorf("GPU round trip gave %v, want %v", hv, y.RawMatrix().Data)
		}
		leftProcess += " and the GPU"
	}
	fmt.Fprintf(w, "done: copies only where the data left Go's memory (%s)\n", leftProcess)
	return nil
}

// denseRelu is the model's computation in Gonum: Relu(x·W + B).
func denseRelu(x *mat.Dense) *mat.Dense {
	r, c := len(weights), len(bias)
	wm := mat.NewDense(r, c, nil)
	for i := range weights {
		wm.SetRow(i, weights[i])
	}
	var z mat.Dense
	z.Mul(x, wm)
	z.Apply(func(_, j int, v float64) float64 { return max(v+bias[j], 0) }, &z)
	return &z
}

// numpyLoad reads a .npy file with NumPy in a separate Python process and returns NumPy's
// version and the array's values in C order.
func numpyLoad(path string) (string, []float64, error) {
	const script = `import json, sys, numpy as np
a = np.load(sys.argv[1])
print(np.__version__)
print(json.dumps(a.ravel().tolist()))`
	py := python()
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		return "", nil, fmt.Errorf("NumPy not found in %s — run scripts/setup.sh (it installs python3-numpy for /usr/bin/python3), or set $PYTHON to an interpreter with NumPy: %v: %s",
			py, err, strings.TrimSpace(string(out)))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return "", nil, fmt.Errorf("unexpected output from NumPy: %q", out)
	}
	var vals []float64
	if err := json.Unmarshal([]byte(lines[1]), &vals); err != nil {
		return "", nil, fmt.Errorf("unexpected output from NumPy: %q: %w", out, err)
	}
	return lines[0], vals, nil
}
