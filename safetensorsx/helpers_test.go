package safetensorsx_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// python is the interpreter the interop tests drive; Debian's python3-numpy must be installed.
const python = "/usr/bin/python3"

// runPython runs script with args under /usr/bin/python3 and returns its stdout. It fails the
// test, loudly, when python3 or numpy is missing: CI installs python3-numpy.
func runPython(t testing.TB, script string, args ...string) string {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s is missing (install python3 and python3-numpy): %v", python, err)
	}
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "python failed (python3-numpy is needed):\n%s", stderr.String())
	return string(out)
}

// fromBytes makes a Go-memory tensor of dt and shape holding raw (C order).
func fromBytes(t testing.TB, dt core.DLDataType, shape []int64, raw []byte) *core.Tensor {
	t.Helper()
	x, err := core.New(dt, shape...)
	require.NoError(t, err)
	b, err := x.Bytes()
	require.NoError(t, err)
	require.Equal(t, len(b), len(raw), "%s %v", dt, shape)
	copy(b, raw)
	return x
}

// cBytes returns x's elements in C order, whatever its layout.
func cBytes(t testing.TB, x *core.Tensor) []byte {
	t.Helper()
	if x.IsContiguous() { // sub-byte tensors always are; adapters copies whole elements only
		b, err := x.ReadOnlyBytes()
		require.NoError(t, err)
		return bytes.Clone(b)
	}
	c, err := adapters.Contiguous(x)
	require.NoError(t, err)
	b, err := c.ReadOnlyBytes()
	require.NoError(t, err)
	return bytes.Clone(b)
}

// allDTypes is every core dtype the format holds.
func allDTypes(t testing.TB) []core.DLDataType {
	var out []core.DLDataType
	for _, s := range safetensorsx.DTypes() {
		dt, err := safetensorsx.FromDType(s)
		require.NoError(t, err)
		out = append(out, dt)
	}
	return out
}
