package onnxx_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dlpack-go/dlpack/onnxx"
)

// modelDir holds the models testdata/models.py built for this test run.
var modelDir string

// TestMain builds the test models with Debian's python3-onnx and loads ONNX Runtime. Both are
// required: when either is missing the tests fail, loudly, with what to install.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := onnxx.Init(); err != nil {
		fmt.Fprintf(os.Stderr, "onnxx tests need the ONNX Runtime library: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "onnxx-models-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	out, err := exec.Command("/usr/bin/python3", "testdata/models.py", dir).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building test models needs /usr/bin/python3 with python3-onnx and python3-numpy (apt-get install python3-onnx python3-numpy): %v\n%s", err, out)
		return 1
	}
	modelDir = dir
	return m.Run()
}

func model(name string) string { return filepath.Join(modelDir, name+".onnx") }

type tensorFile struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	File  string  `json:"file"`
}

type testCase struct {
	Name    string       `json:"name"`
	Model   string       `json:"model"`
	Tol     float64      `json:"tol"`
	Inputs  []tensorFile `json:"inputs"`
	Outputs []tensorFile `json:"outputs"`
}

func manifest() ([]testCase, error) {
	b, err := os.ReadFile(filepath.Join(modelDir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m struct {
		Cases []testCase `json:"cases"`
	}
	return m.Cases, json.Unmarshal(b, &m)
}
