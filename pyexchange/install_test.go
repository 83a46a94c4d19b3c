package pyexchange_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// TestPipInstall installs the dlpackgo package (python, pyproject.toml) the way its README
// says, offline: into a fresh venv made with --system-site-packages, so that it sees the NumPy
// and PyTorch of the test interpreter (python(): Debian's, which setup.sh equips), with
// Debian's setuptools and wheel (--no-build-isolation, --no-index: no download). Then, from
// another directory, the installed package loads the test library and calls a Go function on a
// NumPy array and a torch tensor.
func TestPipInstall(t *testing.T) {
	lib := testLib(t)
	src, err := filepath.Abs("python")
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
import sys, importlib.metadata as md, numpy as np, torch, dlpackgo
assert dlpackgo.__file__.startswith(sys.prefix), dlpackgo.__file__  # the installed copy
lib = dlpackgo.Library(sys.argv[1])
a = np.arange(4.0)
lib.scale(a, 2.0)
t = torch.ones(2)
lib.scale(t, 3.0)
print(a.tolist(), t.tolist(), dlpackgo.__version__, md.version("dlpackgo"), md.metadata("dlpackgo")["License"])
`, lib)
	// the installed package's version and licence are the Go module's
	want := fmt.Sprintf("[0.0, 2.0, 4.0, 6.0] [3.0, 3.0] %s %s Apache-2.0\n", core.ModuleVersion, core.ModuleVersion)
	require.Equal(t, want, out)
}

// TestPythonPackageVersion checks, without installing, that the dlpackgo package says the Go
// module's version and licence: __version__ and __license__ in dlpackgo/__init__.py (which
// pyproject.toml reads the version from) against core.ModuleVersion and the repository's
// LICENSE (Apache-2.0).
func TestPythonPackageVersion(t *testing.T) {
	init, err := os.ReadFile("python/dlpackgo/__init__.py")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^__version__ = "`+regexp.QuoteMeta(core.ModuleVersion)+`"$`, string(init),
		"dlpackgo.__version__ must be core.ModuleVersion")
	require.Regexp(t, `(?m)^__license__ = "Apache-2.0"$`, string(init))
	pyproject, err := os.ReadFile("python/pyproject.toml")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^dynamic = \["version"\]`, string(pyproject), "the version is read from dlpackgo.__version__")
	require.Regexp(t, `(?m)^version = \{ attr = "dlpackgo.__version__" \}$`, string(pyproject))
	require.NotRegexp(t, `(?m)^version = "`, string(pyproject), "no second version")
	require.Regexp(t, `(?m)^license = \{ text = "Apache-2.0" \}`, string(pyproject))
	license, err := os.ReadFile("../LICENSE")
	require.NoError(t, err)
	require.Contains(t, string(license), "Apache License\n                           Version 2.0")
}
