package safetensorsx_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/internal/refcheck"
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

// TestHuggingFaceSafetensors: a file written here (strided sources among them) reads exactly
// with Hugging Face's safetensors package (safetensors.numpy, in the project's venv:
// scripts/pyvenv.sh), and its writer's file reads exactly here. $DLPACK_PYTHON names another
// interpreter that has it (the device check's).
func TestHuggingFaceSafetensors(t *testing.T) {
	py := os.Getenv("DLPACK_PYTHON")
	if py == "" {
		py = refcheck.Venv(t)
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

// refWrite writes, with the reference safetensors package (safetensors.numpy), one tensor of every
// dtype it writes into argv[1]/py.safetensors, with metadata, and prints a JSON line per tensor:
// its name, safetensors dtype, shape and hex bytes. With argv[2], it instead loads argv[2] (Go's
// file) and prints, per tensor of py.safetensors, whether Go's holds the same dtype, shape and
// bytes, read by the reference's own parser (safetensors.deserialize) and by its numpy loader
// (which cannot load float8 dtypes, from its own files either).
const refWrite = `
import os, sys, json
import numpy as np, ml_dtypes
from safetensors.numpy import save_file, load_file
from safetensors import safe_open
d = sys.argv[1]
names = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e4m3fnuz",
         "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "complex64"]
shapes = [(), (0,), (5,), (2, 3), (2, 0, 3), (1, 2, 3, 2)]
rng = np.random.default_rng(7)
arrays = {}
for i, n in enumerate(names):
    dt = np.dtype(getattr(ml_dtypes, n)) if hasattr(ml_dtypes, n) else np.dtype(n)
    for j, shape in enumerate(shapes):
        size = int(np.prod(shape)) * dt.itemsize
        raw = rng.integers(0, 256, size, dtype=np.uint8)
        if n == "bool":
            raw = raw % 2
        arrays[f"{n}_{j}"] = np.frombuffer(raw.tobytes(), dtype=dt).reshape(shape)
path = os.path.join(d, "py.safetensors")
if len(sys.argv) == 2:
    save_file(arrays, path, metadata={"writer": "safetensors", "n": str(len(arrays))})
    with safe_open(path, framework="np") as f:
        for k in f.keys():
            sl = f.get_slice(k)
            print(json.dumps({"name": k, "dtype": sl.get_dtype(), "shape": list(sl.get_shape()),
                              "hex": arrays[k].tobytes().hex()}))
else:
    # the reference's own parser (Rust) on Go's file: dtype, shape and bytes of every tensor;
    # then its numpy loader, where it can load that dtype from its own file
    from safetensors import deserialize
    got = dict(deserialize(open(sys.argv[2], "rb").read()))
    mine = dict(deserialize(open(path, "rb").read()))
    with safe_open(sys.argv[2], framework="np") as g, safe_open(path, framework="np") as own:
        for k, a in arrays.items():
            err = ""
            r, m = got.get(k), mine[k]
            if r is None:
                err = "missing"
            elif (r["dtype"], r["shape"], bytes(r["data"])) != (m["dtype"], m["shape"], bytes(m["data"])):
                err = f"{r['dtype']} {r['shape']} differs from {m['dtype']} {m['shape']}"
            else:
                try:
                    own.get_tensor(k)
                    ok = True
                except Exception:  # safetensors.numpy cannot load float8 (numpy has no such type)
                    ok = False
                if ok and g.get_tensor(k).tobytes() != a.tobytes():
                    err = "safetensors.numpy loads other bytes"
            print(json.dumps({"name": k, "error": err}))
`

// TestSafetensorsReference reads, dtype by dtype, a file the reference implementation (Hugging
// Face's safetensors, numpy flavour, in the project's venv) wrote with every dtype it writes and
// six shapes each (0-d and empty included), comparing dtype, shape and bytes exactly; then writes
// those tensors back with WriteFile and has the reference parse and load Go's file, tensor by
// tensor. One subtest per tensor and direction: conformance row 6.
func TestSafetensorsReference(t *testing.T) {
	py := refcheck.Venv(t)
	dir := t.TempDir()
	out := pyrun.RunWith(t, py, "", refWrite, dir)
	f, err := safetensorsx.Open(filepath.Join(dir, "py.safetensors"))
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, map[string]string{"writer": "safetensors", "n": "114"}, f.Metadata())
	tensors := map[string]*core.Tensor{}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var c struct {
			Name, DType, Hex string
			Shape            []int64
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		n++
		t.Run("read/"+c.Name, func(t *testing.T) {
			want, err := hex.DecodeString(c.Hex)
			require.NoError(t, err)
			x, err := f.Tensor(c.Name)
			require.NoError(t, err)
			dt, err := safetensorsx.FromDType(c.DType)
			require.NoError(t, err)
			assert.Equal(t, dt, x.DType())
			assert.Equal(t, c.Shape, x.Shape())
			got, err := x.ReadOnlyBytes()
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, got), "bytes differ")
			tensors[c.Name] = x
		})
	}
	require.Equal(t, 114, n, "tensors the reference wrote")
	goFile := filepath.Join(dir, "go.safetensors")
	require.NoError(t, safetensorsx.WriteFile(goFile, tensors, map[string]string{"writer": "dlpack-go"}))
	sc = bufio.NewScanner(strings.NewReader(pyrun.RunWith(t, py, "", refWrite, dir, goFile)))
	for sc.Scan() {
		var r struct{ Name, Error string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		t.Run("write/"+r.Name, func(t *testing.T) {
			if r.Error != "" {
				t.Errorf("safetensors read Go's %s: %s", r.Name, r.Error)
			}
		})
	}
}
