// Package modeltest builds the ONNX models the onnxx tests run (onnxx/testdata/models.py, with
// Debian's python3-onnx and python3-numpy) and reads the inputs and NumPy results it writes. It
// serves the tests of the root module's onnxx packages; the nested module onnxx/ortgo builds the
// same models with a harness of its own (onnxx/ortgo/internal/models), since a module may not
// depend on another module's internal packages.
package modeltest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
)

// Dir holds the models Build made.
var Dir string

// Build runs models.py into a new temporary directory and sets Dir; remove it with Cleanup.
func Build() error {
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "..", "testdata", "models.py")
	dir, err := os.MkdirTemp("", "onnxx-models-")
	if err != nil {
		return err
	}
	out, err := exec.Command(pyrun.Interpreter, script, dir).CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("building test models needs /usr/bin/python3 with python3-onnx and python3-numpy (apt-get install python3-onnx python3-numpy): %v\n%s", err, out)
	}
	Dir = dir
	return nil
}

// Cleanup removes what Build made.
func Cleanup() {
	if Dir != "" {
		os.RemoveAll(Dir)
	}
}

// Model is the path of a model models.py wrote.
func Model(name string) string { return filepath.Join(Dir, name+".onnx") }

// TensorFile is a tensor models.py wrote: raw little-endian elements.
type TensorFile struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	File  string  `json:"file"`
}

// Case is one model run with its inputs and NumPy's outputs.
type Case struct {
	Name    string       `json:"name"`
	Model   string       `json:"model"`
	Tol     float64      `json:"tol"`
	Inputs  []TensorFile `json:"inputs"`
	Outputs []TensorFile `json:"outputs"`
}

// Manifest lists the cases.
func Manifest() ([]Case, error) {
	b, err := os.ReadFile(filepath.Join(Dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m struct {
		Cases []Case `json:"cases"`
	}
	return m.Cases, json.Unmarshal(b, &m)
}

// DTypes maps NumPy's dtype names to core's.
var DTypes = map[string]core.DLDataType{
	"float32": core.Float32, "float64": core.Float64, "float16": core.Float16, "bfloat16": core.BFloat16,
	"int8": core.Int8, "int16": core.Int16, "int32": core.Int32, "int64": core.Int64,
	"uint8": core.Uint8, "uint16": core.Uint16, "uint32": core.Uint32, "uint64": core.Uint64,
	"bool": core.Bool,
}

// Load reads a tensor file into a new core tensor.
func Load(f TensorFile) (*core.Tensor, error) {
	dt, ok := DTypes[f.DType]
	if !ok {
		return nil, fmt.Errorf("unknown dtype %q", f.DType)
	}
	x, err := core.New(dt, f.Shape...)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(f.File)
	if err != nil {
		return nil, err
	}
	b, err := x.Bytes()
	if err != nil {
		return nil, err
	}
	if len(b) != len(raw) {
		return nil, fmt.Errorf("%s: %d bytes, want %d", f.File, len(raw), len(b))
	}
	copy(b, raw)
	return x, nil
}

// Main is the TestMain of a package whose tests run the models: it loads ONNX Runtime with
// initRuntime (what is missing fails the run, loudly, saying what to install), builds the models,
// runs the tests and removes the models. It returns the exit code for os.Exit.
func Main(m interface{ Run() int }, who string, initRuntime func() error) int {
	if err := initRuntime(); err != nil {
		fmt.Fprintf(os.Stderr, "%s tests need the ONNX Runtime library: %v\n", who, err)
		return 1
	}
	if err := Build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer Cleanup()
	return m.Run()
}
