package safetensorsx_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// hfRoundTrip checks, with Hugging Face's safetensors package, the file Go wrote into argv[1]
// against the .npy files beside it (exact dtype and values, and the metadata), then writes
// py.safetensors from what it loaded plus a tensor of its own, with metadata of its own.
const hfRoundTrip = `
import os, sys
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file
d = sys.argv[1]
got = load_file(os.path.join(d, "go.safetensors"))
with safe_open(os.path.join(d, "go.safetensors"), framework="np") as f:
    assert f.metadata() == {"source": "go"}, f.metadata()
names = sorted(n[:-4] for n in os.listdir(d) if n.endswith(".npy"))
assert sorted(got) == names, (sorted(got), names)
for n in names:
    want = np.load(os.path.join(d, n + ".npy"))
    assert got[n].dtype == want.dtype and got[n].shape == want.shape, (n, got[n].dtype, want.dtype, got[n].shape)
    assert got[n].tobytes() == np.ascontiguousarray(want).tobytes(), n
got["py_only"] = np.arange(7, dtype=np.float32) * 0.25
save_file(got, os.path.join(d, "py.safetensors"), metadata={"source": "python"})
print("ok", len(names))
`

// TestHuggingFaceSafetensors: a file written here reads exactly with Hugging Face's safetensors
// package (safetensors.numpy), and its writer's file reads exactly here. Debian 12 packages no
// safetensors, so here it skips, saying so; gpu/cuda/devicecheck.sh runs it where the interpreter
// has it (DLPACK_PYTHON names that interpreter).
func TestHuggingFaceSafetensors(t *testing.T) {
	py := os.Getenv("DLPACK_PYTHON")
	if py == "" {
		py = pyrun.Interpreter
	}
	if err := exec.Command(py, "-c", "import numpy, safetensors.numpy").Run(); err != nil {
		t.Skipf("%s has no safetensors package (Debian 12 packages none): the device check runs this test", py)
	}
	dir := t.TempDir()
	f64 := core.MustFromSlice([]float64{1.5, -2, 3.25, 4, 5e300, -6e-300}, 2, 3)
	f64T, err := f64.Transpose() // a strided source: written in C order
	require.NoError(t, err)
	tensors := map[string]*core.Tensor{
		"f32":   core.MustFromSlice([]float32{0.5, 1, -1.5, 2}, 2, 2),
		"f64_t": f64T,
		"i64":   core.MustFromSlice([]int64{-1 << 62, 0, 1<<62 + 7}, 3),
		"u8":    core.MustFromSlice([]uint8{0, 1, 254, 255}, 4),
		"i16":   core.MustFromSlice([]int16{-32768, 32767}),
		"bool":  core.MustFromSlice([]bool{true, false, true}, 3),
		"empty": core.MustFromSlice([]float32{}, 0, 4),
		"0d":    core.MustFromSlice([]float64{42}),
	}
	s, err := tensors["0d"].Reshape()
	require.NoError(t, err)
	tensors["0d"] = s
	require.NoError(t, safetensorsx.WriteFile(filepath.Join(dir, "go.safetensors"), tensors, map[string]string{"source": "go"}))
	for name, x := range tensors {
		require.NoError(t, numpyx.WriteFile(filepath.Join(dir, name+".npy"), x))
	}

	out, err := exec.Command(py, "-c", hfRoundTrip, dir).CombinedOutput()
	require.NoError(t, err, "safetensors could not read Go's file as written:\n%s", out)
	assert.Contains(t, string(out), "ok 8")

	back, err := safetensorsx.ReadFile(filepath.Join(dir, "py.safetensors"))
	require.NoError(t, err)
	f, err := safetensorsx.Open(filepath.Join(dir, "py.safetensors"))
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, map[string]string{"source": "python"}, f.Metadata())
	require.Len(t, back, len(tensors)+1)
	for name, x := range tensors {
		y := back[name]
		require.NotNil(t, y, name)
		assert.Equal(t, x.DType(), y.DType(), name)
		assert.Equal(t, x.Shape(), y.Shape(), name)
		want := cBytes(t, x)
		got, err := y.ReadOnlyBytes()
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "%s: bytes differ", name)
	}
	vals, err := core.ReadOnlyElements[float32](back["py_only"])
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0.25, 0.5, 0.75, 1, 1.25, 1.5}, vals)
}
