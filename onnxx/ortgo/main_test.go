package ortgo_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
)

// TestMain builds the test models and loads ONNX Runtime for both onnxx and onnxruntime_go; when
// either is missing the tests fail, saying what to install.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := ortgo.Init(); err != nil {
		fmt.Fprintf(os.Stderr, "ortgo tests need the ONNX Runtime library: %v\n", err)
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
