package onnxx_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
)

// TestMain builds the test models with Debian's python3-onnx and loads ONNX Runtime. Both are
// required: when either is missing the tests fail, loudly, with what to install. With
// $ONNXX_INIT_ONLY set it only calls onnxx.Init and prints what it returned
// (TestInitRefusesOlderLibrary runs it so, on another library).
func TestMain(m *testing.M) {
	if os.Getenv("ONNXX_INIT_ONLY") != "" {
		err := onnxx.Init()
		fmt.Printf("ErrNoRuntime=%v\n%v\n", errors.Is(err, onnxx.ErrNoRuntime), err)
		os.Exit(0)
	}
	os.Exit(modeltest.Main(m, "onnxx", onnxx.Init))
}

func model(name string) string { return modeltest.Model(name) }

type tensorFile = modeltest.TensorFile

func manifest() ([]modeltest.Case, error) { return modeltest.Manifest() }
