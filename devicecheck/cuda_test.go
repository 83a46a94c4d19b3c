package devicecheck_test

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/gpu/cuda"
	"github.com/dlpack-go/dlpack/internal/pyrun"
)

// TestDeviceCheckHostPart runs check_cuda.py's host checks here, without a GPU, so that the
// device check and the library it drives (devicecheck/cudalib) cannot rot
// between device runs: the exchange with PyTorch on host memory through the product's Python
// package, and the answer "no GPU" (exit status 2). On a machine with a GPU, or without a Go
// toolchain (the device host runs the prebuilt test binary), devicecheck.sh runs it instead.
func TestDeviceCheckHostPart(t *testing.T) {
	if cuda.Available() == nil {
		t.Skip("a CUDA device is present: devicecheck.sh runs check_cuda.py with its GPU checks")
	}
	lib := pyrun.Library(t, "./cudalib")

	run := exec.Command(pyrun.Interpreter, "check_cuda.py")
	run.Env = append(os.Environ(), "DLPACK_GPU_LIB="+lib, "PYTHONDONTWRITEBYTECODE=1")
	out, err := run.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "check_cuda.py must exit 2 without a GPU: %v\n%s", err, out)
	require.Equal(t, 2, exit.ExitCode(), "%s", out)
	require.Contains(t, string(out), "SUMMARY: host self-test passed; GPU checks not run", "%s", out)
	for _, check := range []string{"host: Go tensor -> torch.from_dlpack", "host: capsule destructor and versioned capsule",
		"host: torch tensor -> Go import"} {
		require.Contains(t, string(out), "PASS "+check, "%s", out)
	}
}
