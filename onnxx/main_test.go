package onnxx_test

import (
	"os"
	"testing"

	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
)

// TestMain builds the test models with Debian's python3-onnx and loads ONNX Runtime. Both are
// required: when either is missing the tests fail, loudly, with what to install.
func TestMain(m *testing.M) { os.Exit(modeltest.Main(m, "onnxx", onnxx.Init)) }

func model(name string) string { return modeltest.Model(name) }

type tensorFile = modeltest.TensorFile

func manifest() ([]modeltest.Case, error) { return modeltest.Manifest() }
