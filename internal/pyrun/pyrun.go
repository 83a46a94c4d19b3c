// Package pyrun runs the tests' Python: Debian's interpreter, which holds the NumPy, PyTorch
// and ONNX that scripts/setup.sh installs (python3-numpy, python3-torch, python3-onnx). Tests
// name it by path on purpose: the first python3 on PATH may be a pyenv, conda or venv
// interpreter without those packages. Nothing a user runs depends on this package.
package pyrun

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dlpack-go/dlpack/pyfind"
)

// Interpreter is the path of the tests' Python: Debian's (pyfind.Debian, the last resort of the
// rule users' programs follow). Every test and test helper of this module that runs Python runs
// this one (or, for NumPy 2 and the other PyPI peers, the venv's: refcheck.Venv).
const Interpreter = pyfind.Debian

// Run runs script (python3 -c script args...) and returns its standard output. A missing
// interpreter, a NumPy it cannot import, or a script that fails ends the test (Fatal) with
// Python's standard error: the tests need the real peers, and CI installs them.
func Run(tb testing.TB, script string, args ...string) string {
	tb.Helper()
	return RunIn(tb, "", script, args...)
}

// RunIn is Run with dir as the working directory ("" for the test's own).
func RunIn(tb testing.TB, dir, script string, args ...string) string {
	tb.Helper()
	return RunWith(tb, Interpreter, dir, script, args...)
}

// RunWith is RunIn with another interpreter: python, such as the project's venv's
// (refcheck.Venv), whose NumPy 2 a conformance test checks beside Debian's NumPy 1.24.
func RunWith(tb testing.TB, python, dir, script string, args ...string) string {
	tb.Helper()
	if _, err := os.Stat(python); err != nil {
		tb.Fatalf("pyrun: %s is missing (run scripts/setup.sh: python3 and python3-numpy): %v", python, err)
	}
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("pyrun: python failed (%v); the tests need python3-numpy (scripts/setup.sh):\n%s", err, stderr.String())
	}
	return string(out)
}

// Library builds the main package at pkg (a path relative to the test's directory) as a c-shared
// library for Python to load (go build -buildmode=c-shared, with the toolchain that built the test)
// and returns its path, in a temporary directory. It skips the test where there is no Go toolchain:
// a test binary carried to a machine without Go (the device check's), where a script runs the
// prebuilt library instead.
func Library(tb testing.TB, pkg string) string {
	tb.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		tb.Skipf("pyrun: no Go toolchain to build %s with (a carried test binary): the device check runs its script", pkg)
	}
	lib := filepath.Join(tb.TempDir(), "lib"+filepath.Base(pkg)+".so")
	cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-o", lib, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("pyrun: building %s: %v\n%s", pkg, err, out)
	}
	return lib
}
