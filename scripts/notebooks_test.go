package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In a checkout whose path has a space the Go kernel cannot resolve the library (its imports
// fail deep in gomacro): notebooks.sh and jupyter.sh say so at once, before building or running
// anything.
func TestNotebookScriptsRefuseAPathWithASpace(t *testing.T) {
	link := spacedCheckout(t)
	bin := fakeBin(t, nil) // no go: should the check be missed, build-kernel.sh stops at once
	for _, script := range []string{"notebooks.sh", "jupyter.sh"} {
		cmd := exec.Command(filepath.Join(bin, "bash"), filepath.Join(link, "scripts", script))
		cmd.Env = append(os.Environ(), "PATH="+bin, "JUPYTER_DATA_DIR="+t.TempDir(),
			"DLPACK_GOPHERNOTES_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s", out)
		assert.Contains(t, string(out), script+": the checkout's path '"+link+"' has a space")
	}
}
