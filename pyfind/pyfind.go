// Package pyfind picks the Python interpreter that a Go program (or a notebook in the Go
// kernel) runs for its NumPy, ONNX or PyTorch steps: the user's own where they have one (a
// venv, a conda environment, pyenv), Debian's /usr/bin/python3 otherwise.
//
// The choice, in order:
//
//   - $PYTHON, when it is set: the user's word, taken as it is (not even run);
//   - python3 on $PATH, if it imports every module asked for: an activated venv or conda
//     environment, pyenv's shim;
//   - Debian's /usr/bin/python3, if it imports them: scripts/setup.sh gives it python3-numpy,
//     python3-torch and python3-onnx;
//   - otherwise $PATH's python3 (Debian's if $PATH has none), so that the script run with it
//     fails with Python's own ModuleNotFoundError, which names what is missing.
//
// Interpreter always returns a path: a caller that runs it and fails should say which
// interpreter it ran and that $PYTHON names another (see the example).
//
// This package is not a Python environment manager: it installs nothing, checks no versions and
// imports the modules only to see that they are there (each candidate is started once per call,
// so call it once and keep the answer). The repository's own tests do not use it: they run
// Debian's interpreter by path (internal/pyrun), whose packages CI installs.
//
// It is pure Go (os/exec) and builds with CGO_ENABLED=0.
package pyfind

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Debian is the interpreter that scripts/setup.sh gives NumPy, PyTorch and ONNX, and the last
// resort of Interpreter.
const Debian = "/usr/bin/python3"

// importTimeout bounds each candidate's import check (a cold "import torch" takes seconds).
const importTimeout = 30 * time.Second

// Interpreter returns the interpreter for scripts that import modules (such as "numpy" or
// "onnx"; none: any interpreter that runs): $PYTHON when it is set, else the first of python3 on
// $PATH and Debian's that imports every module. When none does, it returns $PATH's python3
// (Debian's if there is none), so that running a script there reports what is missing.
func Interpreter(modules ...string) string {
	if py := os.Getenv("PYTHON"); py != "" {
		return py
	}
	fallback := Debian
	if py, err := exec.LookPath("python3"); err == nil {
		fallback = py
		if imports(py, modules) {
			return py
		}
	}
	if fallback != Debian && imports(Debian, modules) {
		return Debian
	}
	return fallback
}

// imports reports whether py runs and imports every module.
func imports(py string, modules []string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), importTimeout)
	defer cancel()
	code := "pass"
	if len(modules) > 0 {
		code = "import " + strings.Join(modules, ", ")
	}
	return exec.CommandContext(ctx, py, "-c", code).Run() == nil
}
