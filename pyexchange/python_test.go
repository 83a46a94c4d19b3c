package pyexchange_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/pyrun"
)

// The Python side is tested with the real NumPy and PyTorch: the tests build the c-shared test
// library (internal/testlib) once, without -race (a c-shared library cannot carry the race
// detector into Python), and run the Python tests in python/ against it. A missing python3,
// NumPy or PyTorch fails them: CI must install python3-numpy and python3-torch.

var (
	libOnce sync.Once
	libDir  string
	libPath string
	libErr  error

	emptyOnce sync.Once
	emptyPath string
	emptyErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if libDir != "" {
		os.RemoveAll(libDir)
	}
	os.Exit(code)
}

// goTool returns the go command that runs this test.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// python returns the interpreter to test with: $PYTHON, or Debian's /usr/bin/python3, because
// that is the interpreter scripts/setup.sh gives NumPy, PyTorch and venv (python3 on PATH may be
// a pyenv or conda one without them). Nothing outside the tests assumes /usr/bin/python3.
func python() string {
	if p := os.Getenv("PYTHON"); p != "" {
		return p
	}
	return pyrun.Interpreter
}

// testLib builds the c-shared test library once per test binary and returns its path.
func testLib(t testing.TB) string {
	t.Helper()
	libOnce.Do(func() {
		libDir, libErr = os.MkdirTemp("", "pyexchange-test-")
		if libErr != nil {
			return
		}
		libPath = filepath.Join(libDir, "libdlpackgo_test.so")
		cmd := exec.Command(goTool(), "build", "-buildmode=c-shared", "-o", libPath, "./internal/testlib")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			libErr = fmt.Errorf("building the test library: %w\n%s", err, out)
		}
	})
	require.NoError(t, libErr)
	return libPath
}

// emptyLib builds internal/emptylib (a c-shared library that registers no function) next to the
// test library, once per test binary, and returns its path.
func emptyLib(t testing.TB) string {
	t.Helper()
	testLib(t)
	emptyOnce.Do(func() {
		emptyPath = filepath.Join(libDir, "libdlpackgo_empty.so")
		cmd := exec.Command(goTool(), "build", "-buildmode=c-shared", "-o", emptyPath, "./internal/emptylib")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			emptyErr = fmt.Errorf("building the empty library: %w\n%s", err, out)
		}
	})
	require.NoError(t, emptyErr)
	return emptyPath
}

// runPython runs a script (or -m module) of python/ against the test library and returns its
// combined output; it fails the test, with the output, if the script fails.
func runPython(t testing.TB, args ...string) string {
	t.Helper()
	lib := testLib(t)
	dir, err := filepath.Abs("python")
	require.NoError(t, err)
	check := exec.Command(python(), "-c", "import numpy, torch")
	out, err := check.CombinedOutput()
	require.NoError(t, err, "%s must have NumPy and PyTorch (apt-get install python3-numpy python3-torch):\n%s", python(), out)

	cmd := exec.Command(python(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DLPACKGO_TESTLIB="+lib, "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	err = cmd.Run()
	require.NoError(t, err, "%s %v failed after %v:\n%s", python(), args, time.Since(start), buf.String())
	return buf.String()
}

// runUnittest runs the unittest module of python/ against the test library and fails the
// test unless every test passed and none was skipped; it logs the output.
func runUnittest(t *testing.T, module string) {
	t.Helper()
	out := runPython(t, "-m", "unittest", "-v", module)
	require.Regexp(t, `(?m)^OK`, out)
	require.NotContains(t, out, "skipped", "no Python test may be skipped here")
	t.Log(out)
}

// TestPython runs test_dlpackgo.py: every dtype NumPy and PyTorch support, both directions, 0-d,
// empty, strided views, mutation visibility, read-only handling, lifetimes, refusals as Python
// exceptions, and the versioned protocol through a consumer and a producer written with ctypes.
func TestPython(t *testing.T) {
	runUnittest(t, "test_dlpackgo")
}

// TestPythonFunctions runs test_functions.py: registered Go functions called from Python (help,
// dir, TypeErrors before Go runs, Go errors and panics as exceptions, the GIL released, zero-copy
// arguments and results) and the Tensor's Python face.
func TestPythonFunctions(t *testing.T) {
	runUnittest(t, "test_functions")
}

// TestPythonReadOnly runs test_readonly.py: read-only and memory-mapped NumPy arrays (C,
// Fortran, strided, 0-d, empty) read in C as READ_ONLY tensors, into functions that read them
// (exact values, memory shared) and functions that write them (GoValueError naming read-only, the
// array and its file unchanged); torch tensors that may not be written (requires_grad, inference
// tensors) likewise.
func TestPythonReadOnly(t *testing.T) {
	runUnittest(t, "test_readonly")
}

// TestPythonResults runs test_results.py: tensor results made NumPy arrays in C (every dtype and
// layout, zero-copy whatever the size, small results of Go memory exported the light way and
// released, views keeping them), and torch tensors over them.
func TestPythonResults(t *testing.T) {
	runUnittest(t, "test_results")
}

// TestPythonCastRule runs test_castrule.py: registered functions that compute in float64 cast
// their arguments under adapters.CheckCast (issue 33): casts that keep every value happen, any
// other (complex, int64, uint64) raises TypeError naming both dtypes.
func TestPythonCastRule(t *testing.T) {
	runUnittest(t, "test_castrule")
}

// TestPythonLibrary runs test_library.py, each case in a Python process of its own: a library
// that registers no function opens (with no functions), a bare file name resolves against the
// current directory (and an unknown one says where it looked), and a second Go library in one
// process raises an OSError that names glibc's static TLS limit and what to do.
func TestPythonLibrary(t *testing.T) {
	t.Setenv("DLPACKGO_EMPTYLIB", emptyLib(t))
	runUnittest(t, "test_library")
}

// TestPythonMemoryFlat runs 100 000 round trips Go -> NumPy, NumPy -> Go, Go -> PyTorch -> Go and
// PyTorch -> Go, then 100 000 rounds of registered calls (NumPy, torch and handle arguments,
// tensor results, errors, panics), and checks that resident memory and the live counts stay flat.
func TestPythonMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("100 000 round trips take a while; run without -short")
	}
	runUnittest(t, "test_dlpackgo_memory")
}

// BenchmarkNumPyFromDLPack times numpy.from_dlpack of a Go tensor against numpy.from_dlpack of a
// NumPy array of the same size, in one Python process (bench_dlpackgo.py). ns/op is the Go
// tensor's time per call; numpy-ns/op the NumPy array's; ratio their quotient; first-ns/op the
// first export of a tensor (it enters Go once to make the tensor's sharer); import-ns/op a NumPy
// array handed to Go (dlpackgo.Library.from_dlpack) and released. Run with
// -benchtime=1x: each run is one Python process that times many calls itself.
func BenchmarkNumPyFromDLPack(b *testing.B) {
	for _, size := range []int{1, 1000, 1000000} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			var r struct {
				GoNs    float64 `json:"go_ns"`
				NumPyNs float64 `json:"numpy_ns"`
				Ratio   float64 `json:"ratio"`
				FirstNs float64 `json:"first_ns"`
				Import  float64 `json:"import_ns"`
			}
			for range b.N {
				out := runPython(b, "bench_dlpackgo.py", "--size", fmt.Sprint(size))
				require.NoError(b, json.Unmarshal(bytes.TrimSpace(lastLine(out)), &r), out)
			}
			b.ReportMetric(r.GoNs, "ns/op")
			b.ReportMetric(r.NumPyNs, "numpy-ns/op")
			b.ReportMetric(r.Ratio, "ratio")
			b.ReportMetric(r.FirstNs, "first-ns/op")
			b.ReportMetric(r.Import, "import-ns/op")
		})
	}
}

// BenchmarkPythonCalls times, in one Python process, interleaved (bench_calls.py): import
// (Library.from_dlpack of a NumPy array, released) against torch.from_dlpack of the same array;
// export (numpy.from_dlpack of a Go tensor) against numpy.from_dlpack of a NumPy array; a
// registered function call (lib.noop(a)) against a ctypes call of an //export'ed Go function
// taking a handle; and, on a 4x4 float64 array, calls returning nothing (none), a new small array
// (small: NumPy, small_torch: torch) against one returning an int on the same input, lib.matmul
// against np.matmul (matmul), and a 1000x1000 argument returned as a new array (large) against
// the int call. ns/op is ours, peer-ns/op the peer's, ratio their quotient. Run with
// -benchtime=1x: one Python process (per b.N) times many calls of every pair itself, with
// BENCH_CALLS_TIMER=cpu its CPU time (steadier on a loaded machine), and the sub-benchmarks
// report its figures.
func BenchmarkPythonCalls(b *testing.B) {
	var r map[string]float64
	runs := 0
	for _, pair := range []string{"import", "export", "call", "call_handle", "none", "small",
		"small_torch", "matmul", "large"} {
		b.Run(pair, func(b *testing.B) {
			for runs < b.N {
				args := []string{"bench_calls.py"}
				if tm := os.Getenv("BENCH_CALLS_TIMER"); tm != "" {
					args = append(args, "--timer", tm)
				}
				out := runPython(b, args...)
				require.NoError(b, json.Unmarshal(bytes.TrimSpace(lastLine(out)), &r), out)
				runs++
			}
			b.ReportMetric(r[pair+"_ns"], "ns/op")
			b.ReportMetric(r[pair+"_peer_ns"], "peer-ns/op")
			b.ReportMetric(r[pair+"_ratio"], "ratio")
		})
	}
}

func lastLine(s string) []byte {
	lines := bytes.Split(bytes.TrimSpace([]byte(s)), []byte("\n"))
	return lines[len(lines)-1]
}
