package ortgo_test

import (
	"os"
	"testing"

	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
)

// TestMain builds the test models and loads ONNX Runtime for both onnxx and onnxruntime_go; when
// either is missing the tests fail, saying what to install.
func TestMain(m *testing.M) { os.Exit(modeltest.Main(m, "ortgo", ortgo.Init)) }

func model(name string) string { return modeltest.Model(name) }
