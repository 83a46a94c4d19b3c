package devicecheck_test

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/pyrun"
)

// TestDeviceCheckPyarrow runs check_pyarrow.py against the library it drives
// (devicecheck/pyarrowlib, on pyexchange): here, where Debian has no pyarrow, its
// self-test (Go → the C Data Interface's structs as Python declares them → Go) and the answer "no
// pyarrow" (exit status 2); where the interpreter has pyarrow, every check, which must pass.
func TestDeviceCheckPyarrow(t *testing.T) {
	lib := pyrun.Library(t, "./pyarrowlib")

	run := exec.Command(pyrun.Interpreter, "check_pyarrow.py")
	run.Env = append(os.Environ(), "DLPACK_ARROW_LIB="+lib, "PYTHONDONTWRITEBYTECODE=1")
	out, err := run.CombinedOutput()
	require.Contains(t, string(out), "PASS self-test: Go -> C Data Interface -> Go", "%s", out)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 2 {
		require.Contains(t, string(out), "NO PYARROW: pyarrow checks not run", "%s", out)
		return
	}
	require.NoError(t, err, "with pyarrow, every check must pass: %s", out)
	require.Contains(t, string(out), "SUMMARY: 4 passed, 0 failed", "%s", out)
}
