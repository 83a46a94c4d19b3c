package devicecheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deviceTree makes a scratch repository holding devicecheck's devicebuild.sh and devicecheck.sh, a
// go.mod, one Go file (of gpu/cuda) and a README, committed; it returns its path.
func deviceTree(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "gpu", "cuda"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "devicecheck"), 0o755))
	for _, script := range []string{"devicebuild.sh", "devicecheck.sh"} {
		b, err := os.ReadFile(script)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(repo, "devicecheck", script), b, 0o755))
	}
	write(t, repo, "go.mod", "module example.com/m\n")
	write(t, repo, "gpu/cuda/a.go", "package cuda\n")
	write(t, repo, "README.md", "# m\n")
	write(t, repo, ".gitignore", "/.devicebuild/\n")
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "one")
	return repo
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// deviceScript runs devicecheck/SCRIPT in repo with a stand-in go first on PATH: it makes the file
// that -o names, a test binary that finds no CUDA device for a .test. It returns the output and
// the exit status.
func deviceScript(t *testing.T, repo, script string) (string, int) {
	t.Helper()
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "go"), []byte(`#!/bin/bash
[ "$1" != version ] || { echo "go version go1.26 linux/amd64"; exit 0; }
[ "$1" != list ] || { echo "$PWD/gpu/cuda"; echo /elsewhere/a/dependency; exit 0; }
while [ $# -gt 0 ]; do [ "$1" != -o ] || out=$2; shift; done
case $out in
*.test) printf '#!/bin/sh\necho "--- SKIP: TestGPUDeviceInfo"\necho "    cuda: no CUDA device: a stand-in"\n' >"$out"; chmod +x "$out" ;;
*) echo lib >"$out" ;;
esac
`), 0o755))
	cmd := exec.Command("bash", filepath.Join(repo, "devicecheck", script))
	// a Python "with torch" that runs check_cuda.py at once: the real one's host part is
	// TestDeviceCheckHostPart
	require.NoError(t, os.WriteFile(filepath.Join(bin, "python"), []byte("#!/bin/sh\n"), 0o755))
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GIT_CONFIG_GLOBAL=/dev/null",
		"PYTHON="+filepath.Join(bin, "python"))
	out, err := cmd.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); ok {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, "%s", out)
	return string(out), 0
}

// devicebuild.sh records the commit its binaries were built from, whether the tree was dirty, and
// the checksums of the build inputs; devicecheck.sh prints that first and warns (without failing:
// here it still ends "NO GPU", exit status 2) when the tree it runs in is not what was built, with
// or without git metadata; a tree that matches gets no warning.
func TestDeviceCheckSaysWhatWasBuilt(t *testing.T) {
	repo := deviceTree(t)
	commit := git(t, repo, "rev-parse", "HEAD")
	out, code := deviceScript(t, repo, "devicebuild.sh")
	require.Equal(t, 0, code, "%s", out)
	build, err := os.ReadFile(filepath.Join(repo, ".devicebuild", "BUILD"))
	require.NoError(t, err)
	assert.Contains(t, string(build), "commit "+commit+"\ndirty no\nbuilt ")
	sums, err := os.ReadFile(filepath.Join(repo, ".devicebuild", "SOURCES.sha256"))
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}  go.mod\n[0-9a-f]{64}  gpu/cuda/a.go\n$`, string(sums), "the build inputs, not the README")

	check := func(wantWarning string) string {
		t.Helper()
		out, code := deviceScript(t, repo, "devicecheck.sh")
		assert.Equal(t, 2, code, "no GPU, as before: %s", out)
		assert.Contains(t, out, "NO GPU: device checks not run")
		assert.True(t, strings.HasPrefix(out, ".devicebuild: commit "), "what was built, first: %s", out)
		if wantWarning == "" {
			assert.NotContains(t, out, "WARNING", "%s", out)
		} else {
			assert.Contains(t, out, "WARNING: "+wantWarning, "%s", out)
		}
		return out
	}
	out = check("")
	assert.Contains(t, out, ".devicebuild: commit "+commit+", dirty no; built ")
	assert.Contains(t, out, ".devicebuild: its 2 build inputs are this tree's")

	write(t, repo, "gpu/cuda/a.go", "package cuda // changed\n")
	check(".devicebuild/ is stale: build inputs changed since it was built (1): gpu/cuda/a.go; this tree is at commit " + commit + ", with changes. Rebuild")
	write(t, repo, "gpu/cuda/a.go", "package cuda\n")
	write(t, repo, "gpu/cuda/b.go", "package cuda\n")
	check(".devicebuild/ is stale: build inputs changed since it was built (1): gpu/cuda/b.go (new);")
	require.NoError(t, os.Remove(filepath.Join(repo, "gpu/cuda/b.go")))
	// a package the binaries are not built from may change
	require.NoError(t, os.Mkdir(filepath.Join(repo, "other"), 0o755))
	write(t, repo, "other/c.go", "package other\n")
	check("")
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "other")))

	// another commit, the same build inputs: the binaries are still this tree's
	write(t, repo, "README.md", "# m, documented\n")
	git(t, repo, "commit", "-q", "-am", "two")
	two := git(t, repo, "rev-parse", "HEAD")
	check("")
	// a copy of the tree without .git, as the GPU machine may have: the checksums still tell
	copyDir := t.TempDir()
	require.NoError(t, exec.Command("cp", "-R", repo+"/.", copyDir).Run())
	require.NoError(t, os.RemoveAll(filepath.Join(copyDir, ".git")))
	write(t, copyDir, "go.mod", "module example.com/m\n\ngo 1.26\n")
	out, code = deviceScript(t, copyDir, "devicecheck.sh")
	assert.Equal(t, 2, code, "%s", out)
	assert.Contains(t, out, "WARNING: .devicebuild/ is stale: build inputs changed since it was built (1): go.mod. Rebuild", "%s", out)
	// built there, without git: no commit, but the checksums
	out, code = deviceScript(t, copyDir, "devicebuild.sh")
	require.Equal(t, 0, code, "%s", out)
	out, code = deviceScript(t, copyDir, "devicecheck.sh")
	assert.Equal(t, 2, code, "%s", out)
	assert.Contains(t, out, ".devicebuild: commit unknown (no git repository here), dirty unknown; built ")
	assert.Contains(t, out, ".devicebuild: its 2 build inputs are this tree's")
	assert.NotContains(t, out, "WARNING")

	// no checksums (an older devicebuild.sh): the commits are compared
	require.NoError(t, os.Remove(filepath.Join(repo, ".devicebuild", "SOURCES.sha256")))
	check(".devicebuild/ was built from commit " + commit + ", this tree is at " + two)
	// no record at all
	require.NoError(t, os.Remove(filepath.Join(repo, ".devicebuild", "BUILD")))
	out, code = deviceScript(t, repo, "devicecheck.sh")
	assert.Equal(t, 2, code, "%s", out)
	assert.True(t, strings.HasPrefix(out, "WARNING: .devicebuild/ records no commit"), "%s", out)

	// a build from a dirty tree says so
	write(t, repo, "gpu/cuda/a.go", "package cuda // uncommitted\n")
	out, code = deviceScript(t, repo, "devicebuild.sh")
	require.Equal(t, 0, code, "%s", out)
	build, err = os.ReadFile(filepath.Join(repo, ".devicebuild", "BUILD"))
	require.NoError(t, err)
	assert.Contains(t, string(build), "commit "+two+"\ndirty yes (1 paths changed or untracked)\n   M gpu/cuda/a.go\n")
	check("")
}
