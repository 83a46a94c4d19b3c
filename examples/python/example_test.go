package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRoundTripPy builds this example as a c-shared library and runs roundtrip.py with the real
// NumPy and PyTorch (missing ones fail the test), checking its output line by line.
func TestRoundTripPy(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libexample.so")
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(gotool, "build", "-buildmode=c-shared", "-o", lib, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	pydir, err := filepath.Abs("../../numpyx/python")
	require.NoError(t, err)
	run := exec.Command("/usr/bin/python3", "roundtrip.py", lib)
	run.Env = append(os.Environ(), "PYTHONPATH="+pydir, "PYTHONDONTWRITEBYTECODE=1")
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, `Go -> NumPy: [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] shared: True
Go scaled by 10, NumPy sees: [[0.0, 10.0, 20.0], [30.0, 40.0, 50.0]]
torch added 1, Go sums: 156.0
Go doubled NumPy's b.T in place: [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
torch -> Go -> NumPy: [[3.0, 3.0], [3.0, 3.0]] torch sees: [[3.0, 3.0], [3.0, 3.0]]
live handles: 0
`, string(out))
}
