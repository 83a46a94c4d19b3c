package pyexchange_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPipInstall installs the dlpackgo package (../python, pyproject.toml) the way its README
// says, offline: into a fresh venv made with --system-site-packages, so that it sees the NumPy
// and PyTorch of the test interpreter (python(): Debian's, which setup.sh equips), with
// Debian's setuptools and wheel (--no-build-isolation, --no-index: no download). Then, from
// another directory, the installed package loads the test library and calls a Go function on a
// NumPy array and a torch tensor.
func TestPipInstall(t *testing.T) {
	lib := testLib(t)
	src, err := filepath.Abs("../python")
	require.NoError(t, err)
	dir := t.TempDir()
	// build from a copy: setuptools writes build/ and *.egg-info next to pyproject.toml
	pkg := filepath.Join(dir, "src")
	require.NoError(t, os.CopyFS(pkg, os.DirFS(src)))
	venv := filepath.Join(dir, "venv")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PIP_NO_INPUT=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
		return string(out)
	}
	run(python(), "-m", "venv", "--system-site-packages", venv)
	py := filepath.Join(venv, "bin", "python")
	out := run(py, "-m", "pip", "install", "--no-build-isolation", "--no-index", pkg)
	require.Contains(t, out, "Successfully installed dlpackgo")
	out = run(py, "-c", `
import sys, numpy as np, torch, dlpackgo
assert dlpackgo.__file__.startswith(sys.prefix), dlpackgo.__file__  # the installed copy
lib = dlpackgo.Library(sys.argv[1])
a = np.arange(4.0)
lib.scale(a, 2.0)
t = torch.ones(2)
lib.scale(t, 3.0)
print(a.tolist(), t.tolist(), dlpackgo.__version__)
`, lib)
	require.Equal(t, "[0.0, 2.0, 4.0, 6.0] [3.0, 3.0] 0.1.0\n", out)
}
