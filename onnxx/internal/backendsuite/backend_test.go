package backendsuite

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/internal/refcheck"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
)

// dataDir is where Debian's libonnx-testdata puts ONNX's backend test data.
const dataDir = "/usr/share/libonnx-testdata/data"

// The tolerances of ONNX's backend test runner (onnx/backend/test/loader: rtol 1e-3, atol 1e-7).
const rtol, atol = 1e-3, 1e-7

type value struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	File  string  `json:"file"`
}

type dataSet struct {
	Inputs  []value `json:"inputs"`
	Outputs []value `json:"outputs"`
}

type testCase struct {
	Category    string    `json:"category"`
	Name        string    `json:"name"`
	Model       string    `json:"model"`
	Sets        []dataSet `json:"sets"`
	Unsupported string    `json:"unsupported"`
}

// tally counts a category's cases.
type tally struct{ bothPass, onlyOnnxx, onlyORT, bothFail, notTensors int }

// TestBackendSuite: every case of ONNX's backend test data through onnxx and through ORT's own
// Python binding on the same release, compared with the expected outputs; a case only onnxx
// fails fails its subtest, one both pass passes, and one where ORT's binding fails (alone or with
// onnxx) or whose values are not numeric tensors is skipped with that reason (the conformance
// table counts skips by it). The counts per category are logged as one summary line each.
func TestBackendSuite(t *testing.T) {
	if _, err := os.Stat(dataDir); err != nil {
		refcheck.Unavailable(t, "ONNX's backend test data (%s): apt-get install libonnx-testdata (scripts/setup.sh does)", dataDir)
		return
	}
	require.NoError(t, onnxx.Init(), "needs the ONNX Runtime library: run scripts/fetch-ort.sh")
	_, version, _ := onnxx.LoadedLibrary()
	venv := refcheck.Venv(t)
	out := t.TempDir()
	run := func(python string, args ...string) {
		cmd := exec.Command(python, args...)
		msg, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", python, strings.Join(args, " "), msg)
	}
	run(pyrun.Interpreter, "convert.py", dataDir, out)
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	require.NoError(t, err)
	var m struct{ Cases []testCase }
	require.NoError(t, json.Unmarshal(b, &m))
	require.GreaterOrEqual(t, len(m.Cases), 1000, "libonnx-testdata 1.12 has 1,072 models")

	pyVersion, err := exec.Command(venv, "-c", "import onnxruntime; print(onnxruntime.__version__)").Output()
	require.NoError(t, err)
	if os.Getenv("ONNXRUNTIME_LIB") == "" {
		require.Equal(t, version, strings.TrimSpace(string(pyVersion)), "onnxx and ORT's Python package on one release")
	}
	run(venv, "ort_run.py", filepath.Join(out, "manifest.json"), filepath.Join(out, "ort.json"))
	b, err = os.ReadFile(filepath.Join(out, "ort.json"))
	require.NoError(t, err)
	var ortResults map[string]string
	require.NoError(t, json.Unmarshal(b, &ortResults))

	tallies := map[string]*tally{}
	for _, c := range m.Cases {
		tl := tallies[c.Category]
		if tl == nil {
			tl = &tally{}
			tallies[c.Category] = tl
		}
		t.Run(c.Category+"/"+c.Name, func(t *testing.T) {
			if c.Unsupported != "" {
				tl.notTensors++
				t.Skipf("not run: %s (onnxx passes numeric tensors only)", c.Unsupported)
			}
			ortWhy, ok := ortResults[c.Category+"/"+c.Name]
			require.True(t, ok, "ort_run.py has no result for the case")
			why := runOnnxx(c)
			switch {
			case why == "" && ortWhy == "":
				tl.bothPass++
			case why == "":
				tl.onlyORT++
				t.Skipf("only ORT's Python binding fails: %s", ortWhy)
			case ortWhy == "":
				tl.onlyOnnxx++
				t.Errorf("only onnxx fails: %s", why)
			default:
				tl.bothFail++
				t.Skipf("both fail: onnxx: %s; ORT's Python binding: %s", why, ortWhy)
			}
		})
	}
	require.GreaterOrEqual(t, tallies["node"].bothPass, 800, "most node cases pass both ways (libonnx-testdata 1.12, ORT 1.31: 854)")
	cats := make([]string, 0, len(tallies))
	for c := range tallies {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		tl := tallies[c]
		t.Logf("backend suite, ONNX Runtime %s, %s: both pass %d, only onnxx fails %d, only ORT's Python binding fails %d, both fail %d, not numeric tensors %d",
			version, c, tl.bothPass, tl.onlyOnnxx, tl.onlyORT, tl.bothFail, tl.notTensors)
	}
}

// runOnnxx runs a case's data sets through an onnxx session of its model and returns "" when
// every output is as expected, else the first reason it is not.
func runOnnxx(c testCase) string {
	s, err := onnxx.NewSession(c.Model, nil, nil, nil)
	if err != nil {
		return err.Error()
	}
	defer s.Destroy()
	for _, set := range c.Sets {
		if why := runSet(s, set); why != "" {
			return why
		}
	}
	return ""
}

func runSet(s *onnxx.Session, set dataSet) string {
	in := map[string]*core.Tensor{}
	for _, v := range set.Inputs {
		x, err := load(v)
		if err != nil {
			return err.Error()
		}
		defer x.Release()
		in[v.Name] = x
	}
	out, err := s.Run(in)
	if err != nil {
		return err.Error()
	}
	defer func() {
		for _, y := range out {
			y.Release()
		}
	}()
	for _, v := range set.Outputs {
		want, err := load(v)
		if err != nil {
			return err.Error()
		}
		defer want.Release()
		got, ok := out[v.Name]
		if !ok {
			return fmt.Sprintf("output %s: not in the result", v.Name)
		}
		if why := compare(v.Name, got, want); why != "" {
			return why
		}
	}
	return ""
}

func load(v value) (*core.Tensor, error) {
	return modeltest.Load(modeltest.TensorFile{Name: v.Name, DType: v.DType, Shape: v.Shape, File: v.File})
}

// compare holds got to want as ONNX's runner does: the same dtype and shape; floating-point
// elements within atol + rtol·|want| (NaN matching NaN, infinities matching their own sign),
// other elements equal.
func compare(name string, got, want *core.Tensor) string {
	if got.DType() != want.DType() {
		return fmt.Sprintf("output %s: dtype %v, want %v", name, got.DType(), want.DType())
	}
	if !slices.Equal(got.Shape(), want.Shape()) {
		return fmt.Sprintf("output %s: shape %v, want %v", name, got.Shape(), want.Shape())
	}
	gb, err := got.Bytes()
	if err != nil {
		return fmt.Sprintf("output %s: %v", name, err)
	}
	wb, err := want.Bytes()
	if err != nil {
		return fmt.Sprintf("output %s: %v", name, err)
	}
	dt := want.DType()
	if dt.Code != core.CodeFloat && dt.Code != core.CodeBfloat {
		if !bytes.Equal(gb, wb) {
			return fmt.Sprintf("output %s: elements differ", name)
		}
		return ""
	}
	g, w := floats(dt, gb), floats(dt, wb)
	bad, first := 0, -1
	for i := range w {
		if near(g[i], w[i]) {
			continue
		}
		if bad++; first < 0 {
			first = i
		}
	}
	if bad > 0 {
		return fmt.Sprintf("output %s: %d of %d elements beyond rtol %g, atol %g (element %d: %g, want %g)",
			name, bad, len(w), rtol, atol, first, g[first], w[first])
	}
	return ""
}

func near(g, w float64) bool {
	switch {
	case math.IsNaN(w) || math.IsNaN(g):
		return math.IsNaN(w) && math.IsNaN(g)
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		return g == w
	}
	return math.Abs(g-w) <= atol+rtol*math.Abs(w)
}

// floats decodes little-endian elements of a floating-point dtype.
func floats(dt core.DLDataType, b []byte) []float64 {
	n := int(dt.Bits) / 8
	out := make([]float64, len(b)/n)
	for i := range out {
		e := b[i*n : (i+1)*n]
		switch {
		case dt.Code == core.CodeBfloat:
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(e)) << 16))
		case n == 2:
			out[i] = float64(float16.Frombits(binary.LittleEndian.Uint16(e)).Float32())
		case n == 4:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(e)))
		default:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(e))
		}
	}
	return out
}
