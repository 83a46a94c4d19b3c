// Package scripts holds the tests of the shell scripts in this directory (devicecheck's
// devicebuild.sh and devicecheck.sh are tested in devicecheck). They run a script with
// a PATH of stand-ins for the system's tools (dpkg-query, apt-get, sudo, id, npm), which record
// how they were called, so that nothing is installed.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBin makes a directory for PATH holding the real tools the scripts need (linked) and the
// stand-ins given (name → shell script body), and returns it.
func fakeBin(t *testing.T, fakes map[string]string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	for _, tool := range []string{"bash", "dirname", "grep", "cat", "uname", "stat", "mkdir", "cp", "mv", "rm", "mktemp", "timeout"} {
		real, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(real, filepath.Join(bin, tool)))
	}
	for name, body := range fakes {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+body+"\n"), 0o755))
	}
	return bin
}

// spacedCheckout returns a path to this checkout with a space in it (a symbolic link).
func spacedCheckout(t *testing.T) string {
	t.Helper()
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "a checkout")
	require.NoError(t, os.Symlink(repo, link))
	return link
}

// runSetup runs setup.sh, from another directory and through spacedCheckout, with PATH set to
// bin and the environment given; it returns the combined output and the exit error.
func runSetup(t *testing.T, bin string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "bash"), filepath.Join(spacedCheckout(t), "scripts", "setup.sh"))
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + bin, "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Not root and no sudo, with packages missing: setup says what to install and how, and stops
// before it installs anything (or fetches anything).
func TestSetupWithoutRootOrSudo(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	bin := fakeBin(t, map[string]string{
		"id":         "echo 1000",
		"dpkg-query": "exit 1", // nothing is installed
		"apt-get":    `echo "apt-get $*" >>` + log,
		"npm":        `echo "npm $*" >>` + log,
	})
	out, err := runSetup(t, bin)
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "installing them needs root, and sudo is not here")
	assert.Contains(t, out, "apt-get install gcc libc6-dev python3 ")
	assert.NoFileExists(t, log, "nothing may be installed or fetched")
}

// Run with sudo, setup caches the ONNX Runtime library and builds the kernel for the user who
// asked (onnxx looks for the library in that user's cache), not for root.
func TestSetupUnderSudoIsForTheUser(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	cache := t.TempDir() // root's: a cached library here must not make setup skip the user's
	lib := filepath.Join(cache, "dlpack-go", "ort", "1.31.1", "libonnxruntime.so.1")
	require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
	require.NoError(t, os.WriteFile(lib, []byte("ELF"), 0o644))
	bin := fakeBin(t, map[string]string{
		"id":         "echo 0",
		"dpkg-query": "echo 'install ok installed'",
		"apt-get":    `echo "apt-get $*" >>` + log,
		"sudo":       `echo "sudo $*" >>` + log,
		"npm":        `echo "npm $*" >>` + log,
		"go":         "echo go1.26",
	})
	out, err := runSetup(t, bin, "SUDO_USER=alice", "XDG_CACHE_HOME="+cache, "DLPACK_GO_PLACES=")
	require.NoError(t, err, "%s", out)
	calls, err := os.ReadFile(log)
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "sudo -u alice -H bash scripts/fetch-ort.sh\n"+
		"sudo -u alice -H bash scripts/fetch-ggml.sh\n"+
		"sudo -u alice -H bash scripts/pyvenv.sh\n"+
		"sudo -u alice -H bash scripts/pyvenv.sh torch\n"+
		"sudo -u alice -H -i printenv PATH\n"+ // where alice's Go is, if she has one (here: none)
		"sudo -u alice -H env PATH="+bin+":"+bin+" bash scripts/build-kernel.sh\n", string(calls),
		"the go on sudo's PATH, on the PATH of the kernel's build (sudo -u resets it)")
	assert.True(t, strings.HasSuffix(out, "setup: ready\n"), "%s", out)
}

// goIn makes a directory holding a stand-in go and returns the directory.
func goIn(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), []byte("#!/bin/sh\necho go1.26\n"), 0o755))
	return dir
}

// Under sudo, PATH is sudo's secure_path, without the user's Go (/usr/local/go/bin, or what
// their profile adds): setup finds it on the user's login PATH, and builds the kernel with it.
func TestSetupUnderSudoFindsTheUsersGo(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	usersGo := goIn(t)
	bin := fakeBin(t, map[string]string{
		"id":         "echo 0",
		"dpkg-query": "echo 'install ok installed'",
		"sudo": `echo "sudo $*" >>` + log + `
[[ "$*" != *" -i printenv PATH" ]] || printf 'Welcome!\n/home/alice/bin:` + usersGo + `:/usr/bin\n'`,
		"go": "echo go1.20", // sudo's PATH has another go (Debian's golang-go): not that one
	})
	out, err := runSetup(t, bin, "SUDO_USER=alice", "DLPACK_GO_PLACES=")
	require.NoError(t, err, "%s", out)
	calls, err := os.ReadFile(log)
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "sudo -u alice -H bash scripts/fetch-ort.sh\n"+
		"sudo -u alice -H bash scripts/fetch-ggml.sh\n"+
		"sudo -u alice -H bash scripts/pyvenv.sh\n"+
		"sudo -u alice -H bash scripts/pyvenv.sh torch\n"+
		"sudo -u alice -H -i printenv PATH\n"+
		"sudo -u alice -H env PATH="+usersGo+":"+bin+" bash scripts/build-kernel.sh\n", string(calls))
	assert.Contains(t, out, "setup: building the notebooks' kernel with alice's "+filepath.Join(usersGo, "go"))

	// not on her login PATH (set in ~/.bashrc, say), but in a usual place: found there
	place := goIn(t)
	require.NoError(t, os.Remove(log))
	bin = fakeBin(t, map[string]string{
		"id":         "echo 0",
		"dpkg-query": "echo 'install ok installed'",
		"sudo":       `echo "sudo $*" >>` + log + `; [[ "$*" != *" -i printenv PATH" ]] || echo /usr/bin:/bin`,
	})
	out, err = runSetup(t, bin, "SUDO_USER=alice", "DLPACK_GO_PLACES=/nowhere/go "+filepath.Join(place, "go"))
	require.NoError(t, err, "%s", out)
	calls, err = os.ReadFile(log)
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(calls), "sudo -u alice -H env PATH="+place+":"+bin+" bash scripts/build-kernel.sh\n")
}

// With no Go anywhere, setup says so, where it looked and what to do, and builds no kernel.
func TestSetupUnderSudoWithoutGo(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	bin := fakeBin(t, map[string]string{
		"id":         "echo 0",
		"dpkg-query": "echo 'install ok installed'",
		"sudo":       `echo "sudo $*" >>` + log + `; [[ "$*" != *" -i printenv PATH" ]] || echo /usr/bin:/bin`,
	})
	out, err := runSetup(t, bin, "SUDO_USER=alice", "DLPACK_GO_PLACES=/nowhere/go")
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "setup: Go not found, and the notebooks' kernel is built with it")
	assert.Contains(t, out, "Looked on alice's login PATH")
	assert.Contains(t, out, `sudo env "PATH=$PATH" bash scripts/setup.sh`)
	calls, err := os.ReadFile(log)
	require.NoError(t, err, "%s", out)
	assert.NotContains(t, string(calls), "build-kernel.sh")
}
