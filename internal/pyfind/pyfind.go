// Package pyfind picks the Python interpreter that the examples run: the user's own where they
// have one (a venv, a conda environment, pyenv), Debian's otherwise. Tests keep running Debian's
// interpreter, which holds Debian's NumPy and PyTorch (see internal/pyrun).
package pyfind

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Debian is the interpreter that scripts/setup.sh gives NumPy, PyTorch and ONNX.
const Debian = "/usr/bin/python3"

// Interpreter returns the interpreter for scripts that import modules: $PYTHON when it is set
// (the user's choice, taken as it is), else the first of python3 on $PATH (an activated venv or
// conda environment, pyenv's shim) and Debian's that imports every module. When none does, it
// returns $PATH's python3 (Debian's if there is none), so that running a script there reports
// what is missing.
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := "pass"
	if len(modules) > 0 {
		code = "import " + strings.Join(modules, ", ")
	}
	return exec.CommandContext(ctx, py, "-c", code).Run() == nil
}
