package onnxx_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
)

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
	if err := modeltest.Build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer modeltest.Cleanup()
	return m.Run()
}

func model(name string) string { return modeltest.Model(name) }

type tensorFile = modeltest.TensorFile

func manifest() ([]modeltest.Case, error) { return modeltest.Manifest() }
