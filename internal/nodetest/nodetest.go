// Package nodetest runs Node.js scripts against npm packages in tests: the independent
// implementations (Arrow's JavaScript library, Hugging Face's GGUF reader) that this module's
// formats are checked against.
package nodetest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// Node runs scripts with a set of npm packages installed.
type Node struct {
	node, dir string
}

// Install installs the npm packages (with exact versions: "apache-arrow@21.1.0") into a
// directory under the user's cache, once per set of packages, and returns a Node that runs
// scripts where they can require them. Where npm is absent the reference is unavailable: the test
// fails in CI and is skipped elsewhere (refcheck.Unavailable); a failed install fails it.
func Install(t testing.TB, pkgs ...string) *Node {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		refcheck.Unavailable(t, "npm is absent: this check against an independent implementation needs Node and npm")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("nodetest: npm without node: %v", err)
	}
	sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "dlpack-go", "npm", hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "installed")); err == nil {
		return &Node{node: node, dir: dir}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	args := append([]string{"install", "--no-audit", "--no-fund", "--silent", "--prefix", dir}, pkgs...)
	if out, err := exec.Command(npm, args...).CombinedOutput(); err != nil {
		t.Fatalf("nodetest: npm install %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "installed"), nil, 0o644); err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	return &Node{node: node, dir: dir}
}

// Run runs script (CommonJS, as with node -e) with args as process.argv[1:], and returns
// what it printed on stdout; a script that fails fails the test with its stderr.
func (n *Node) Run(t testing.TB, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(n.node, append([]string{"-e", script}, args...)...)
	cmd.Dir = n.dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(n.dir, "node_modules"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nodetest: node script failed: %v\n%s", err, stderr.String())
	}
	return out
}
