package pyexchange_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The DLPack 1.3 C exchange API is tested against xharness (internal/xharness), a C extension
// that plays a framework on both sides. It is built here, once per test binary, with gcc and the
// headers of Debian's python3-dev (scripts/setup.sh installs it): a missing compiler or header
// fails the tests.

var (
	harnessOnce sync.Once
	harnessDir  string
	harnessErr  error
)

// harness builds xharness for python() and returns the directory to put on sys.path.
func harness(t testing.TB) string {
	t.Helper()
	harnessOnce.Do(func() {
		out, err := exec.Command(python(), "-c",
			"import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))").Output()
		if err != nil {
			harnessErr = fmt.Errorf("asking %s for its headers: %w", python(), err)
			return
		}
		lines := strings.Fields(string(out))
		if len(lines) != 2 {
			harnessErr = fmt.Errorf("unexpected answer from %s: %q", python(), out)
			return
		}
		include, suffix := lines[0], lines[1]
		if !fileExists(filepath.Join(include, "Python.h")) {
			harnessErr = fmt.Errorf("%s has no Python.h: apt-get install python3-dev", include)
			return
		}
		harnessDir, harnessErr = os.MkdirTemp("", "xharness-")
		if harnessErr != nil {
			return
		}
		cdlpack, _ := filepath.Abs("../core/cdlpack")
		cmd := exec.Command("gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-Wno-unused-parameter",
			"-I"+include, "-I"+cdlpack, "-o", filepath.Join(harnessDir, "xharness"+suffix),
			"internal/xharness/xharness.c")
		if out, err := cmd.CombinedOutput(); err != nil {
			harnessErr = fmt.Errorf("building xharness: %w\n%s", err, out)
		}
	})
	require.NoError(t, harnessErr)
	return harnessDir
}

// runHarnessPython is runPython with xharness on the path.
func runHarnessPython(t testing.TB, args ...string) string {
	t.Helper()
	dir := harness(t)
	t.Setenv("XHARNESS_DIR", dir)
	return runPython(t, args...)
}

// TestExchangeAPIPython runs test_exchange_api.py: dlpackgo.Tensor's __dlpack_c_exchange_api__
// consumed by the harness (every dtype, strides, 0-d, empty, copies of read-only and reversed
// tensors exactly as __dlpack__ makes them, borrowed views, the allocator and its errors,
// managed tensors of another major version refused and deleted once), and Library.from_dlpack
// consuming the harness's tables (1.3, a 2.0 table linking to 1.3, 2.0, 1.2, a wrong capsule,
// a hollow table: refused ones fall back on __dlpack__), errors through the API, device tensors,
// lifetimes with every deleter counted, and 20 000 round trips each way with flat memory.
func TestExchangeAPIPython(t *testing.T) {
	t.Setenv("XHARNESS_DIR", harness(t))
	runUnittest(t, "test_exchange_api")
}

// BenchmarkExchangeAPI times, in one Python process (bench_exchange_api.py), both directions of
// the exchange API next to __dlpack__ capsules, per tensor:
//   - import: Library.from_dlpack(x) of a harness tensor through its API (import-api-ns/op) and
//     through __dlpack__ (import-dlpack-ns/op), Tensor released each time;
//   - export: the harness consuming a Go tensor through dlpackgo.Tensor's API, managed tensor and
//     deleter (export-api-ns/op), the borrowed view (view-api-ns/op), and __dlpack__ with the
//     capsule taken and deleted (export-capsule-ns/op), timed in C;
//   - to-py-ns/op: a managed tensor handed to our managed_tensor_to_py_object_no_sync (Go adopts
//     it, a Tensor is made) and dropped;
//   - torch-auto-ns/op and torch-dlpack-ns/op: Library.from_dlpack of a torch 1.13 tensor (no
//     exchange API: looked up, then __dlpack__) against via="dlpack".
//
// Run with -benchtime=1x: each run is one Python process that times many calls itself.
func BenchmarkExchangeAPI(b *testing.B) {
	var r map[string]float64
	for range b.N {
		out := runHarnessPython(b, "bench_exchange_api.py")
		require.NoError(b, json.Unmarshal(bytes.TrimSpace(lastLine(out)), &r), out)
	}
	for _, k := range []string{"import_api_ns", "import_dlpack_ns", "export_api_ns", "view_api_ns",
		"export_capsule_ns", "to_py_ns", "torch_auto_ns", "torch_dlpack_ns"} {
		b.ReportMetric(r[k], strings.ReplaceAll(strings.TrimSuffix(k, "_ns"), "_", "-")+"-ns/op")
	}
	b.ReportMetric(0, "ns/op")
}
