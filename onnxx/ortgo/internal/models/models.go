// Package models is the test harness of the ortgo module: it builds the ONNX models ortgo's tests
// run, with their inputs and NumPy's results, and reads those back as core tensors.
//
// The models come from one script, onnxx/testdata/models.py of the root module, which the
// root's onnxx tests build theirs from too. This module reaches it by path, not by import: the
// module's go.mod replaces github.com/dlpack-go/dlpack with the checkout two levels up, so the
// script stands at ../testdata/models.py from this module's directory, which models finds from
// the place of its own source file (runtime.Caller). It therefore needs the source checkout, as
// go test has. It imports nothing internal to the root module, only its public packages (core):
// a nested module is released at versions of its own and may not lean on another module's
// internal packages (internal/modcheck in the root module checks that).
//
// The script runs on Debian's interpreter (pyfind.Debian, /usr/bin/python3) with python3-onnx
// and python3-numpy (tests may assume that interpreter; what users run may not).
package models

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/pyfind"
)

// dir is where Main had models.py write the models; empty before.
var dir string

// Main is the TestMain of ortgo's tests: it loads ONNX Runtime with initRuntime, builds the models
// into a temporary directory, runs the tests and removes the models. When ONNX Runtime or the
// Python needed to build the models is missing, it says what to install and fails the run. It
// returns the exit code for os.Exit.
func Main(m interface{ Run() int }, initRuntime func() error) int {
	if err := initRuntime(); err != nil {
		fmt.Fprintf(os.Stderr, "ortgo's tests need the ONNX Runtime library: %v\n", err)
		return 1
	}
	d, err := build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(d)
	dir = d
	return m.Run()
}

// build runs the root checkout's models.py into a new temporary directory and returns it.
func build() (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("models: cannot find the source of the test harness, and models.py beside it")
	}
	// self is onnxx/ortgo/internal/models/models.go; the script is onnxx/testdata/models.py.
	script := filepath.Join(filepath.Dir(self), "..", "..", "..", "testdata", "models.py")
	d, err := os.MkdirTemp("", "ortgo-models-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(pyfind.Debian, script, d)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(d)
		return "", fmt.Errorf("models: %s failed (%v); it needs Debian's /usr/bin/python3 with "+
			"python3-onnx and python3-numpy (apt-get install python3-onnx python3-numpy):\n%s", script, err, out)
	}
	return d, nil
}

// Model is the path of the model models.py wrote under name.
func Model(name string) string { return filepath.Join(dir, name+".onnx") }

// Tensor describes one tensor file models.py wrote: a NumPy dtype name, a shape and a file of
// raw little-endian elements in C order. (encoding/json matches manifest.json's lower-case keys
// to these fields.)
type Tensor struct {
	Name, DType, File string
	Shape             []int64
}

// Case is one model run: the path of the model, its inputs and the outputs NumPy computed.
// (ortgo's tests compare exactly, so the manifest's tolerance is not read.)
type Case struct {
	Name, Model     string
	Inputs, Outputs []Tensor
}

// Manifest returns the cases models.py listed in its manifest.json.
func Manifest() ([]Case, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var doc struct{ Cases []Case }
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("models: manifest.json: %w", err)
	}
	return doc.Cases, nil
}

// dtypes are the element types models.py writes; their core names (DLDataType.String) are
// NumPy's.
var dtypes = []core.DLDataType{
	core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16, core.Uint32,
	core.Uint64, core.Float16, core.BFloat16, core.Float32, core.Float64,
}

// Load reads the tensor f describes into a new core tensor.
func Load(f Tensor) (*core.Tensor, error) {
	var dt core.DLDataType
	for _, d := range dtypes {
		if d.String() == f.DType {
			dt = d
		}
	}
	if dt.Bits == 0 {
		return nil, fmt.Errorf("models: %s: dtype %q is none of %v", f.File, f.DType, dtypes)
	}
	x, err := core.New(dt, f.Shape...)
	if err != nil {
		return nil, err
	}
	dst, err := x.Bytes()
	if err == nil {
		err = readExactly(f.File, dst)
	}
	if err != nil {
		x.Release()
		return nil, err
	}
	return x, nil
}

// readExactly fills dst with the whole of the file at path, which must be len(dst) bytes long.
func readExactly(path string, dst []byte) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if n, err := io.ReadFull(r, dst); err != nil {
		return fmt.Errorf("models: %s: %d bytes, want %d: %w", path, n, len(dst), err)
	}
	if n, _ := r.Read(make([]byte, 1)); n != 0 {
		return fmt.Errorf("models: %s is longer than the %d bytes of its tensor", path, len(dst))
	}
	return nil
}
