package pyexchange_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// TestDLPackConformance runs python/conformance_dlpack.py, dlpackgo's DLPack cases drawn with
// Hypothesis as the array API's own DLPack tests draw them, against every framework of three
// interpreters: the project's venv (NumPy 2, array-api-strict, JAX on CPU, apache-tvm-ffi with
// its C exchange API), its PyTorch venv (PyTorch 2.15 from PyPI, whose torch.Tensor carries the
// C exchange API) and Debian's (NumPy 1.24 and PyTorch 1.13, the oldest supported). Each
// case of each framework is a subtest (conformance rows: interpreter/framework-version/case),
// passed, failed with the falsifying example, or skipped with what the framework lacks.
func TestDLPackConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance run starts two interpreters and their frameworks")
	}
	lib := testLib(t)
	dir, err := filepath.Abs("python")
	require.NoError(t, err)
	for _, interp := range []struct {
		name, python string
		want         []string // frameworks it must have
	}{
		{"venv", refcheck.Venv(t), []string{"numpy", "array-api-strict", "jax", "apache-tvm-ffi"}},
		{"venv-torch", refcheck.VenvNamed(t, "torch"), []string{"numpy", "torch"}},
		{"debian", python(), []string{"numpy", "torch"}},
	} {
		t.Run(interp.name, func(t *testing.T) {
			cmd := exec.Command(interp.python, "conformance_dlpack.py", "25")
			cmd.Dir = dir
			cmd.Env = append(cmd.Environ(), "DLPACKGO_TESTLIB="+lib, "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var exit *exec.ExitError
			if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
				t.Fatalf("%s conformance_dlpack.py: %v\n%s", interp.python, err, stderr.String())
			}
			seen := map[string]bool{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var r struct {
					Framework, Version string
					Dtypes             []string
					Cases              []struct{ Case, Outcome, Reason string }
				}
				require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "a report line: %s", sc.Text())
				seen[r.Framework] = true
				t.Run(r.Framework+"-"+r.Version, func(t *testing.T) {
					t.Logf("dtypes drawn: %s", strings.Join(r.Dtypes, " "))
					for _, c := range r.Cases {
						t.Run(c.Case, func(t *testing.T) {
							switch c.Outcome {
							case "passed":
							case "skipped":
								t.Skip(c.Reason)
							default:
								t.Errorf("%s", c.Reason)
							}
						})
					}
				})
			}
			require.NoError(t, sc.Err())
			for _, fw := range interp.want {
				require.True(t, seen[fw], "%s has no %s to check against (stderr: %s)", interp.python, fw, stderr.String())
			}
		})
	}
}
