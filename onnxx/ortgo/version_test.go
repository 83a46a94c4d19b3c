package ortgo_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/onnxx/ortgo"
)

// TestInitRefusesOlderLibrary: ortgo.Init over a real ONNX Runtime 1.30.0 (fetched by
// scripts/fetch-ort.sh into its cache), whose C API (30) is older than onnxruntime_go v1.38.0's
// (31), fails with ErrNoRuntime naming both releases, the library and the fix, and before
// onnxruntime_go asks ORT for the table (ORT would complain on stderr). It runs in a child
// process: this one holds ORT 1.31.
func TestInitRefusesOlderLibrary(t *testing.T) {
	old := fetchORT(t, "1.30.0")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ORTGO_INIT_ONLY=1", "ONNXRUNTIME_LIB="+old)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	assert.Equal(t, "ErrNoRuntime=true\n"+
		"ortgo: onnxruntime_go v1.38.0 needs ONNX Runtime 1.31 or later (C API 31); the library at "+old+
		" is 1.30.0: run scripts/fetch-ort.sh (ONNX Runtime 1.31.1) or set $ONNXRUNTIME_LIB to a newer libonnxruntime.so\n",
		string(out))
	assert.Empty(t, stderr.String(), "nothing from ORT on stderr")
}

// TestBindingRelease: the onnxruntime_go release and C API version ortgo names in its errors
// (ortgo.BindingRelease, ortgo.BindingAPI) are go.mod's, and that of the onnxruntime_c_api.h
// the release ships.
func TestBindingRelease(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/yalue/onnxruntime_go").Output()
	require.NoError(t, err)
	var mod struct{ Version, Dir string }
	require.NoError(t, json.Unmarshal(out, &mod))
	assert.Equal(t, mod.Version, ortgo.BindingRelease)
	h, err := os.ReadFile(filepath.Join(mod.Dir, "onnxruntime_c_api.h"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^#define ORT_API_VERSION (\d+)$`).FindSubmatch(h)
	require.NotNil(t, m)
	assert.Equal(t, string(m[1]), strconv.Itoa(ortgo.BindingAPI))
}

// fetchORT runs the repository's scripts/fetch-ort.sh for ONNX Runtime version and returns the
// library's path, the last line it prints. Where it fails, the test fails in CI ($CI set: CI
// fetches every reference) and is skipped elsewhere, saying why, as the root module's
// internal/refcheck does (this module may not import another module's internal packages).
func fetchORT(t *testing.T, version string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "fetch-ort.sh"), version)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := fmt.Sprintf("scripts/fetch-ort.sh %s failed: %v\n%s", version, err, stderr.String())
		if ci := os.Getenv("CI"); ci != "" && ci != "false" {
			t.Fatalf("reference unavailable in CI (CI installs every reference): %s", msg)
		}
		t.Skipf("reference unavailable, skipped outside CI: %s", msg)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
