package scripts

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// cloneWorktree clones this repository into dir with git, then lays the working tree's
// uncommitted changes (modified and untracked files) over the clone, so that the clone is the
// checkout as it is now.
func cloneWorktree(t *testing.T, dir string) {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	out, err := exec.Command("git", "clone", "--quiet", root, dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	list, err := exec.Command("git", "-C", root, "ls-files", "--modified", "--others", "--exclude-standard").Output()
	require.NoError(t, err)
	for _, f := range strings.Fields(string(list)) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		require.NoError(t, err)
		info, err := os.Stat(filepath.Join(root, f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, info.Mode().Perm()))
	}
}

// markerNotebook writes a notebook that fails unless core.CheckoutMarker is want.
func markerNotebook(t *testing.T, path, want string) {
	t.Helper()
	code := func(src string) map[string]any {
		return map[string]any{"cell_type": "code", "metadata": map[string]any{}, "outputs": []any{},
			"execution_count": nil, "source": src}
	}
	nb := map[string]any{"nbformat": 4, "nbformat_minor": 5, "cells": []any{
		code("import (\n\t\"github.com/dlpack-go/dlpack/core\"\n)"),
		code("if core.CheckoutMarker != \"" + want + "\" {\n\tpanic(\"the kernel ran the checkout \" + core.CheckoutMarker + \", not " + want + "\")\n}"),
	}, "metadata": map[string]any{"kernelspec": map[string]any{"name": "go-dlpack",
		"display_name": "Go (gophernotes, dlpack-go)", "language": "go"}}}
	b, err := json.Marshal(nb)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// Two clones of the repository on one machine each run their own code in a notebook, whichever
// of them last installed the user's kernel spec, and notebooks.sh says which checkout it runs.
func TestTwoClonesRunTheirOwnCode(t *testing.T) {
	if _, err := os.Stat("/usr/bin/jupyter"); err != nil {
		refcheck.Unavailable(t, "Debian's Jupyter (/usr/bin/jupyter) is missing: run scripts/setup.sh")
	}
	if _, err := exec.LookPath("go"); err != nil {
		refcheck.Unavailable(t, "go is not on PATH")
	}
	base := t.TempDir()
	clones := map[string]string{"a": filepath.Join(base, "a"), "b": filepath.Join(base, "b")}
	for name, dir := range clones {
		cloneWorktree(t, dir)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "core", "zz_checkout_marker.go"),
			[]byte("package core\n\n// CheckoutMarker says which clone this is.\nconst CheckoutMarker = \""+name+"\"\n"), 0o644))
	}
	// the user's spec (a Jupyter data folder of this test's own) points at b: b ran build-kernel.sh last
	userData := t.TempDir()
	build := exec.Command("bash", filepath.Join(clones["b"], "scripts", "build-kernel.sh"))
	build.Env = append(os.Environ(), "JUPYTER_DATA_DIR="+userData)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, name := range []string{"a", "b"} {
		dir := clones[name]
		nb := filepath.Join(t.TempDir(), "which.ipynb")
		markerNotebook(t, nb, name)
		cmd := exec.Command("bash", filepath.Join(dir, "scripts", "notebooks.sh"), nb)
		cmd.Env = append(os.Environ(), "JUPYTER_DATA_DIR="+userData, "NOTEBOOK_BROWSER=0", "NOTEBOOK_OUT="+t.TempDir())
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "clone %s: %s", name, out)
		assert.Contains(t, string(out), "notebooks.sh: kernel go-dlpack runs the checkout "+dir+" ", "clone %s", name)
		assert.Contains(t, string(out), "ok   which.ipynb", "clone %s", name)
		assert.Contains(t, string(out), "notebooks: 1 passed, 0 failed", "clone %s", name)
	}

	// kernelspec.sh says which checkout a Jupyter started by hand would run: the user's spec, b
	cmd := exec.Command("bash", filepath.Join(clones["a"], "scripts", "kernelspec.sh"))
	cmd.Env = append(os.Environ(), "JUPYTER_DATA_DIR="+userData, "JUPYTER_PATH=")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "runs the checkout: "+clones["b"]+"\n")
}

// When the spec Jupyter finds is another checkout's, jupyter.sh and notebooks.sh refuse to run,
// naming both checkouts. (A Jupyter whose python reports another checkout stands in for a
// configuration that puts another spec first.)
func TestKernelOfAnotherCheckoutIsRefused(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		refcheck.Unavailable(t, "go is not on PATH")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	fake := filepath.Join(t.TempDir(), "python")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/bash\ncat >/dev/null\nprintf '/elsewhere/.jupyter/kernels/go-dlpack\\t/elsewhere\\n'\n"), 0o755))
	cmd := exec.Command("bash", "-c", `source "$1/scripts/kernelspec.sh"; use_checkout_kernel notebooks.sh "$2" "$1"`, "bash", root, fake)
	cmd.Env = append(os.Environ(), "JUPYTER_DATA_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "notebooks.sh: the kernel go-dlpack that Jupyter finds (/elsewhere/.jupyter/kernels/go-dlpack) runs the checkout '/elsewhere', not this one ("+root+")")
}
