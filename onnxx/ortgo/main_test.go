package ortgo_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
	"github.com/dlpack-go/dlpack/onnxx/ortgo/internal/models"
)

// TestMain builds the test models and loads ONNX Runtime for both onnxx and onnxruntime_go; when
// either is missing the tests fail, saying what to install. With $ORTGO_INIT_ONLY set it only
// calls ortgo.Init and prints what it returned (TestInitRefusesOlderLibrary runs it so, on
// another library).
func TestMain(m *testing.M) {
	if os.Getenv("ORTGO_INIT_ONLY") != "" {
		err := ortgo.Init()
		fmt.Printf("ErrNoRuntime=%v\n%v\n", errors.Is(err, onnxx.ErrNoRuntime), err)
		os.Exit(0)
	}
	os.Exit(models.Main(m, ortgo.Init))
}

func model(name string) string { return models.Model(name) }
