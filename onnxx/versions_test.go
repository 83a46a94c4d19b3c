package onnxx_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/refcheck"
	"github.com/dlpack-go/dlpack/onnxx"
)

// smokeTests are the tests that TestOldestSupportedRuntime runs again on the oldest ONNX Runtime
// this package supports: sessions from files and bytes, Run over every test model, RunInto,
// RunWith, float16 (and every other dtype's) dynamic outputs over ORT's memory, unknown-rank
// models, context cancellation and settled runs through the I/O binding.
var smokeTests = []string{
	"TestLoadedRuntime", "TestModels", "TestSessionFromBytes", "TestInputsOutputs", "TestSessionOutputsInPlace",
	"TestRunInto", "TestRunWithScalarDestination", "TestOutputsOverORTMemory", "TestUnknownRank",
	"TestDataDependentOutputs", "TestRunContext", "TestKeptBinding", "TestSettledRun",
}

// TestLoadedRuntime: the suite runs on the ONNX Runtime release fetch-ort.sh fetches (or, in
// TestOldestSupportedRuntime's child, on the one it was given), at the newest C API version that
// release and this package share.
func TestLoadedRuntime(t *testing.T) {
	_, version, ok := onnxx.LoadedLibrary()
	require.True(t, ok)
	want := onnxx.RuntimeVersion
	if v := os.Getenv("ONNXX_SMOKE"); v != "" {
		want = v
	} else if os.Getenv("ONNXRUNTIME_LIB") != "" {
		t.Skipf("the library of $ONNXRUNTIME_LIB, ONNX Runtime %s", version)
	}
	assert.Equal(t, want, version)
	t.Logf("ONNX Runtime %s", version)
}

// TestOldestSupportedRuntime runs smokeTests in a child process on ONNX Runtime 1.24.3 (the
// oldest release with C API 24, fetched by scripts/fetch-ort.sh into its cache); this process
// holds the default release.
func TestOldestSupportedRuntime(t *testing.T) {
	if os.Getenv("ONNXX_SMOKE") != "" {
		t.Skip("the child itself")
	}
	lib := refcheck.Script(t, "scripts/fetch-ort.sh", onnxx.OldestRuntimeVersion)
	cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(smokeTests, "|")+")$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "ONNXRUNTIME_LIB="+lib, "ONNXX_SMOKE="+onnxx.OldestRuntimeVersion)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the smoke tests on ONNX Runtime %s:\n%s", onnxx.OldestRuntimeVersion, out)
	for _, name := range smokeTests {
		assert.Regexp(t, regexp.MustCompile(`(?m)^--- PASS: `+name+` `), string(out), "%s on %s", name, onnxx.OldestRuntimeVersion)
	}
	assert.Contains(t, string(out), "ONNX Runtime "+onnxx.OldestRuntimeVersion)
}

// TestInitRefusesOlderLibrary: Init over a real ONNX Runtime 1.23.2 (C API 23, one older than
// APIVersion; fetched by scripts/fetch-ort.sh) fails with ErrNoRuntime naming the library, both
// versions and the fix, before asking ORT for a table it lacks (ORT would complain on stderr).
// It runs in a child process: this one holds the default release.
func TestInitRefusesOlderLibrary(t *testing.T) {
	old := refcheck.Script(t, "scripts/fetch-ort.sh", "1.23.2")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ONNXX_INIT_ONLY=1", "ONNXRUNTIME_LIB="+old)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	assert.Equal(t, "ErrNoRuntime=true\n"+
		"onnxx: the library at "+old+" is ONNX Runtime 1.23.2 (C API 23); onnxx needs ONNX Runtime 1.24 or later (C API 24): "+
		"run scripts/fetch-ort.sh (ONNX Runtime "+onnxx.RuntimeVersion+") or set $ONNXRUNTIME_LIB to a newer libonnxruntime.so\n",
		string(out))
	assert.Empty(t, stderr.String(), "nothing from ORT on stderr")
}
