// Package refcheck is how a test says that a reference implementation it checks dlpack-go against
// (ggml's library, a PyPI peer in the project's venv, an npm package) cannot be had here: in CI
// ($CI set, as .ci/run runs) the test fails, since CI installs every reference and a missing one is
// a broken install, not a pass; on a developer's machine it is skipped with the reason, so that a
// machine without npm or network still runs the rest of the suite.
package refcheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// InCI reports whether the tests run in CI ($CI set to anything but "" or "false").
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false"
}

// Unavailable ends the test because a reference is missing: Fatal in CI, Skip elsewhere. The
// message should name the reference and how to get it.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		tb.Fatalf("reference unavailable in CI (CI installs every reference): %s", msg)
	}
	tb.Skipf("reference unavailable, skipped outside CI: %s", msg)
}

// Script runs one of the repository's scripts (a path under the repository root, such as
// "scripts/pyvenv.sh") with args and returns the last line it printed on stdout; a script that
// fails, or a repository root that cannot be found from the test's directory, makes the reference
// Unavailable with the script's stderr.
func Script(tb testing.TB, script string, args ...string) string {
	tb.Helper()
	root, err := RepoRoot()
	if err != nil {
		Unavailable(tb, "%s: %v", script, err)
		return ""
	}
	cmd := exec.Command("bash", append([]string{filepath.Join(root, script)}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		Unavailable(tb, "%s failed: %v\n%s", script, err, stderr.String())
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// RepoRoot finds the repository's root from the working directory (a test's package directory):
// the nearest directory above it that holds scripts/setup.sh.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "setup.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no scripts/setup.sh above the working directory")
		}
		dir = parent
	}
}

// Venv returns the project's virtual environment's python (scripts/pyvenv.sh makes it once, with
// the pinned peers of scripts/peers-requirements.txt: NumPy 2, pyarrow, safetensors, onnxruntime,
// JAX, array-api-strict, apache-tvm-ffi, gguf); Unavailable when it cannot be made.
func Venv(tb testing.TB) string {
	tb.Helper()
	return Script(tb, "scripts/pyvenv.sh")
}

// VenvNamed returns the python of the project's venv NAME (scripts/pyvenv.sh NAME, from
// scripts/peers-requirements-NAME.txt): "torch" is PyTorch 2.x from PyPI. Unavailable when it
// cannot be made.
func VenvNamed(tb testing.TB, name string) string {
	tb.Helper()
	return Script(tb, "scripts/pyvenv.sh", name)
}
