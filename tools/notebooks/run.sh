#!/usr/bin/env bash
# Runs the example notebooks headlessly in the Go kernel and fails if any cell fails.
#
#   tools/notebooks/run.sh                      # every examples/notebooks/*.ipynb
#   tools/notebooks/run.sh path/to/a.ipynb ...  # just these
#
# It first runs tools/gophernotes/build.sh (which builds the kernel once and caches it, and
# installs the kernel spec "go-dlpack"), then executes each notebook in a fresh kernel with
# Debian's jupyter nbconvert. The notebooks in the repository stay untouched: executed copies go
# to $NOTEBOOK_OUT (default: a temporary directory, removed afterwards). The last line reads
# "notebooks: N passed, M failed"; the exit status is 1 if any notebook failed.
#
# Needs: Go and a C compiler (for the kernel and the plugins it builds), and
#   apt-get install python3-jupyter-client python3-nbclient python3-nbformat python3-ipykernel jupyter-nbconvert
# A cold run (kernel build, then the first plugin of each notebook) takes a few minutes; later
# runs reuse the cached kernel and Go's build cache.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
jupyter=/usr/bin/jupyter
[[ -x "$jupyter" ]] || { echo "run.sh: $jupyter not found (apt-get install jupyter-nbconvert python3-nbclient python3-ipykernel)" >&2; exit 1; }

bash "$repo/tools/gophernotes/build.sh" >/dev/null

if (($# == 0)); then
	shopt -s nullglob
	set -- "$repo"/examples/notebooks/*.ipynb
	(($# > 0)) || { echo "run.sh: no notebooks in $repo/examples/notebooks" >&2; exit 1; }
fi

out=${NOTEBOOK_OUT:-}
if [[ -z "$out" ]]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

passed=0 failed=0
for nb in "$@"; do
	name=$(basename "$nb")
	start=$SECONDS
	# The kernel starts in the notebook's own directory, so imports like "../../core" name
	# this checkout.
	if "$jupyter" nbconvert --to notebook --execute \
		--ExecutePreprocessor.kernel_name=go-dlpack \
		--ExecutePreprocessor.timeout=1200 \
		--ExecutePreprocessor.startup_timeout=120 \
		--output-dir "$out" --output "$name" "$nb" >"$out/$name.log" 2>&1; then
		passed=$((passed + 1))
		echo "ok   $name ($((SECONDS - start))s)"
	else
		failed=$((failed + 1))
		echo "FAIL $name ($((SECONDS - start))s)"
		tail -n 40 "$out/$name.log" | sed 's/^/    /'
	fi
done
echo "notebooks: $passed passed, $failed failed"
((failed == 0))
