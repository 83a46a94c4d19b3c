package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/numpyx"
)

// BenchmarkStats64MiB summarises a 64 MiB float32 .npy file as -stats does (memory-mapped, one
// pass: min, max, mean without NaN, NaN count), beside NumPy doing the same on the same file
// (np.load with mmap_mode="r", then nanmin, nanmax, nanmean and isnan().sum(), which make four
// passes), timed inside Python and reported as numpy-ns/op.
func BenchmarkStats64MiB(b *testing.B) {
	const size = 64 << 20
	x := core.MustNew(core.Float32, size/4)
	v, err := x.Float32s()
	require.NoError(b, err)
	for i := range v {
		v[i] = float32(i%1000) - 500
	}
	path := filepath.Join(b.TempDir(), "bench.npy")
	require.NoError(b, numpyx.WriteFile(path, x))

	out, err := exec.Command(pyrun.Interpreter, "-c", `
import numpy as np, sys, timeit
def f():
    a = np.load(sys.argv[1], mmap_mode="r")
    return np.nanmin(a), np.nanmax(a), np.nanmean(a), int(np.isnan(a).sum())
print(min(timeit.repeat(f, number=1, repeat=5)))
`, path).Output()
	require.NoError(b, err, "python3 with NumPy is required")
	numpySec, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	require.NoError(b, err)

	b.SetBytes(size)
	for b.Loop() {
		c, err := openNPY(path, options{})
		require.NoError(b, err)
		t, err := c.tensor(0)
		require.NoError(b, err)
		s, err := summarize(t)
		require.NoError(b, err)
		t.Release()
		require.Equal(b, float64(-500), s.Min.v)
	}
	b.ReportMetric(numpySec*1e9, "numpy-ns/op")
}
