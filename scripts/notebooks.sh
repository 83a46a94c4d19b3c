#!/usr/bin/env bash
# Runs the example notebooks headlessly in the Go kernel and fails if any cell fails.
#
#   scripts/notebooks.sh                      # every examples/notebooks/*.ipynb
#   scripts/notebooks.sh path/to/a.ipynb ...  # just these
#
# It first runs scripts/build-kernel.sh (which builds the kernel once and caches it), installs
# the kernel spec "go-dlpack" for this checkout in its .jupyter/ folder, says which checkout the
# kernel runs and refuses to go on when it is not this one (scripts/kernelspec.sh), then executes each notebook in a fresh kernel with
# Debian's jupyter nbconvert. The notebooks in the repository stay untouched: executed copies go
# to $NOTEBOOK_OUT (default: a temporary directory, removed afterwards). Then each executed
# notebook is rendered to HTML and checked in headless Chromium (tools/notebooks/browsercheck),
# which keeps a screenshot of each page in $NOTEBOOK_SHOTS (default artifacts/notebooks). It
# prints "notebooks: N passed, M failed" and "browser: N checked, M failed"; the exit status is
# 1 if any notebook failed to run or to show. NOTEBOOK_BROWSER=0 leaves out the browser check.
#
# Needs: Go and a C compiler (for the kernel and the plugins it builds), and
#   apt-get install python3-jupyter-client python3-nbclient python3-nbformat python3-ipykernel jupyter-nbconvert chromium
# A cold run (kernel build, then the first plugin of each notebook) takes a few minutes; later
# runs reuse the cached kernel and Go's build cache.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The kernel's GOMACRO_REPLACE is a space-separated list, and gomacro writes the directory into
# go.mod files unquoted: a checkout whose path has a space cannot be resolved (the notebooks'
# imports fail with "lstat <the path up to the space>: no such file or directory").
[[ "$repo" != *[[:space:]]* ]] || { echo "notebooks.sh: the checkout's path '$repo' has a space, which the Go kernel cannot use; clone or move it to a path without spaces" >&2; exit 1; }
jupyter=/usr/bin/jupyter
[[ -x "$jupyter" ]] || { echo "notebooks.sh: $jupyter not found (apt-get install jupyter-nbconvert python3-nbclient python3-ipykernel)" >&2; exit 1; }

# The kernel, with a spec of this checkout's own first on JUPYTER_PATH: whichever clone last ran
# build-kernel.sh for the user, these notebooks run this checkout's code (kernelspec.sh).
source "$repo/scripts/kernelspec.sh"
use_checkout_kernel notebooks.sh /usr/bin/python3 "$repo"

all=0
if (($# == 0)); then
	all=1
	shopt -s nullglob
	set -- "$repo"/examples/notebooks/*.ipynb
	(($# > 0)) || { echo "notebooks.sh: no notebooks in $repo/examples/notebooks" >&2; exit 1; }
fi

out=${NOTEBOOK_OUT:-}
if [[ -z "$out" ]]; then
	out=$(mktemp -d)
fi
mkdir -p "$out"

# Each notebook runs from a copy in a folder outside the repository, as a notebook of one's own
# would: the kernel resolves github.com/dlpack-go/dlpack to this checkout wherever it starts.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"; [[ -n "${NOTEBOOK_OUT:-}" ]] || rm -rf "$out"' EXIT

passed=0 failed=0
for nb in "$@"; do
	name=$(basename "$nb")
	start=$SECONDS
	cp "$nb" "$scratch/$name"
	if "$jupyter" nbconvert --to notebook --execute \
		--ExecutePreprocessor.kernel_name=go-dlpack \
		--ExecutePreprocessor.timeout=1200 \
		--ExecutePreprocessor.startup_timeout=120 \
		--output-dir "$out" --output "$name" "$scratch/$name" >"$out/$name.log" 2>&1; then
		passed=$((passed + 1))
		echo "ok   $name ($((SECONDS - start))s)"
	else
		failed=$((failed + 1))
		echo "FAIL $name ($((SECONDS - start))s)"
		tail -n 40 "$out/$name.log" | sed 's/^/    /'
	fi
done

# With every notebook: also one in a module of one's own, whose go.mod has the say over
# GOMACRO_REPLACE. Here it replaces github.com/dlpack-go/dlpack by a folder beside it, and the
# notebook also imports a package of its own module by its module path.
own_gomod() {
	own="$scratch/own"
	mkdir -p "$own/fake/core" "$own/util"
	printf 'module example.com/own\n\ngo 1.22\n\nrequire github.com/dlpack-go/dlpack v0.0.0\n\nreplace github.com/dlpack-go/dlpack => ./fake\n' >"$own/go.mod"
	printf 'module github.com/dlpack-go/dlpack\n\ngo 1.22\n' >"$own/fake/go.mod"
	printf 'package core\n\n// Where says which copy this is.\nconst Where = "the go.mod beside the notebook"\n' >"$own/fake/core/core.go"
	printf 'package util\n\n// Twice doubles x.\nfunc Twice(x int) int { return 2 * x }\n' >"$own/util/util.go"
	/usr/bin/python3 - "$own/own-gomod.ipynb" <<'PY'
import json, sys
code = lambda s: {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": s}
nb = {"nbformat": 4, "nbformat_minor": 5, "cells": [
    code('import (\n\t"github.com/dlpack-go/dlpack/core"\n\t"example.com/own/util"\n)'),
    code('if core.Where != "the go.mod beside the notebook" || util.Twice(21) != 42 {\n\tpanic("not the go.mod\'s packages: " + core.Where)\n}')],
    "metadata": {"kernelspec": {"name": "go-dlpack", "display_name": "Go (gophernotes, dlpack-go)", "language": "go"}}}
json.dump(nb, open(sys.argv[1], "w"))
PY
	start=$SECONDS
	if "$jupyter" nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=go-dlpack \
		--ExecutePreprocessor.timeout=600 --ExecutePreprocessor.startup_timeout=120 \
		--output-dir "$out" --output own-gomod.ipynb "$own/own-gomod.ipynb" >"$out/own-gomod.log" 2>&1; then
		passed=$((passed + 1))
		echo "ok   a notebook under its own go.mod ($((SECONDS - start))s)"
	else
		failed=$((failed + 1))
		echo "FAIL a notebook under its own go.mod ($((SECONDS - start))s)"
		tail -n 40 "$out/own-gomod.log" | sed 's/^/    /'
	fi
}
((all == 0)) || own_gomod

echo "notebooks: $passed passed, $failed failed"

# What a reader sees: each executed notebook rendered to HTML as Jupyter would show it, loaded in
# headless Chromium; browsercheck checks the DOM (every tensor's caption and table, pictures
# decoded at their size, no markup shown as text) and a screenshot of each page, which it keeps
# in $NOTEBOOK_SHOTS (default artifacts/notebooks; CI keeps it).
shots=${NOTEBOOK_SHOTS:-$repo/artifacts/notebooks}
browser_failed=0
if [[ "${NOTEBOOK_BROWSER:-1}" == 0 ]]; then
	echo "browser: not checked (NOTEBOOK_BROWSER=0)"
elif ((passed > 0)); then
	executed=()
	for nb in "$@"; do
		name=$(basename "$nb")
		[[ -f "$out/$name" ]] || continue
		"$jupyter" nbconvert --to html --output-dir "$out" "$out/$name" >"$out/$name.html.log" 2>&1 ||
			{ echo "FAIL $name: nbconvert --to html"; tail -n 20 "$out/$name.html.log" | sed 's/^/    /'; browser_failed=1; continue; }
		executed+=("$out/$name")
	done
	if ((${#executed[@]})); then
		(cd "$repo" && go run ./tools/notebooks/browsercheck -shots "$shots" "${executed[@]}") || browser_failed=1
	fi
fi
((failed == 0 && browser_failed == 0))
