package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A download that fails (here: a registry nobody answers at) ends fetch-ort with npm's reason
// and its own line, and leaves nothing in the cache that a later run would take for the library.
func TestFetchORTSaysWhyTheDownloadFailed(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("fetch-ort.sh fetches only the linux/amd64 library")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm (scripts/setup.sh installs it)")
	}
	cache := t.TempDir()
	cmd := exec.Command("bash", "fetch-ort.sh")
	cmd.Env = append(os.Environ(), "ONNXRUNTIME_LIB=", "XDG_CACHE_HOME="+cache,
		"npm_config_registry=http://127.0.0.1:9/", "npm_config_fetch_retries=0",
		"npm_config_cache="+t.TempDir(), "npm_config_logs_max=0", "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "ECONNREFUSED", "npm's reason")
	assert.Contains(t, string(out), "fetch-ort: npm pack onnxruntime-node@1.31.1 failed")
	left, err := filepath.Glob(filepath.Join(cache, "dlpack-go", "ort", "*", "*"))
	require.NoError(t, err)
	assert.Empty(t, left)
}

// fetch-ort.sh VERSION takes that release into the same cache layout and prints the library's
// path last, whatever $ONNXRUNTIME_LIB says (the tests get the oldest supported release so);
// without a version, $ONNXRUNTIME_LIB wins; a version of another form is refused.
func TestFetchORTVersionArgument(t *testing.T) {
	cache := t.TempDir()
	lib := filepath.Join(cache, "dlpack-go", "ort", "1.24.3", "libonnxruntime.so.1")
	require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
	require.NoError(t, os.WriteFile(lib, []byte("ELF"), 0o644))
	own := filepath.Join(t.TempDir(), "libonnxruntime.so")
	require.NoError(t, os.WriteFile(own, []byte("ELF"), 0o644))
	run := func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{"fetch-ort.sh"}, args...)...)
		cmd.Env = append(os.Environ(), "ONNXRUNTIME_LIB="+own, "XDG_CACHE_HOME="+cache)
		out, err := cmd.Output()
		return string(out), err
	}
	out, err := run("1.24.3")
	require.NoError(t, err)
	assert.Equal(t, "fetch-ort: cached\n"+lib+"\n", out)
	out, err = run()
	require.NoError(t, err)
	assert.Equal(t, "fetch-ort: using $ONNXRUNTIME_LIB\n"+own+"\n", out)
	_, err = run("1.24")
	require.Error(t, err)
}
