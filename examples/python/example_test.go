package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/pyrun"
)

// python returns the interpreter to run example.py with: $PYTHON, or Debian's /usr/bin/python3,
// the one scripts/setup.sh gives NumPy and PyTorch (python3 on PATH may be a pyenv or conda
// interpreter without them).
func python() string {
	if p := os.Getenv("PYTHON"); p != "" {
		return p
	}
	return pyrun.Interpreter
}

// TestExamplePy builds this example as a c-shared library and runs example.py with the real
// NumPy and PyTorch (missing ones fail the test), checking its output line by line.
func TestExamplePy(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libexample.so")
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(gotool, "build", "-buildmode=c-shared", "-o", lib, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	pydir, err := filepath.Abs("../../pyexchange/python")
	require.NoError(t, err)
	run := exec.Command(python(), "example.py", lib)
	run.Env = append(os.Environ(), "PYTHONPATH="+pydir, "PYTHONDONTWRITEBYTECODE=1")
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, `functions: ['scale', 'solve']
signature: solve(a: dlpackgo.Array, b: dlpackgo.Array, /, *, returns=None) -> dlpackgo.Array
NumPy solve: [2.0, 3.0] a @ x == b: True
NumPy a[:, 1] scaled in place: [[3.0, 10.0], [1.0, 20.0]]
PyTorch inverse: [[0.5, 0.0], [0.0, 0.25]] Tensor
PyTorch scaled in place: [0.0, 0.5, 1.0, 1.5]
GoValueError: example: matrix is singular: matrix singular or near-singular with condition number +Inf
GoTypeError: example: scale: dtype int64, want float32 or float64 (core: element type does not match dtype)
TypeError: scale() argument 2 (factor) must be float, not str
`, string(out))
}
