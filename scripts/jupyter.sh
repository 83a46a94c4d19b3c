#!/usr/bin/env bash
# Starts Jupyter on examples/notebooks with the Go kernel of this checkout:
#
#   scripts/jupyter.sh                  # opens http://localhost:8888 in a browser
#   scripts/jupyter.sh --no-browser --ip 0.0.0.0 --port 9000   # any jupyter-notebook option
#
# It builds the kernel first if it is missing or stale (scripts/build-kernel.sh: cached, so
# seconds after the first time) and installs its spec, "go-dlpack", which the example notebooks
# name and new notebooks get by default, for this checkout: in its .jupyter/ folder, first on the
# server's JUPYTER_PATH. It prints which checkout the kernel runs and refuses to start when that
# is not this one (scripts/kernelspec.sh), so two clones each run their own code. Notebooks anywhere (File > Open, or a
# folder of your own: NOTEBOOK_DIR=~/work scripts/jupyter.sh) import the library by its
# module path, github.com/dlpack-go/dlpack/..., which the kernel resolves to this checkout.
#
# Needs what scripts/setup.sh installs: Go, a C compiler, Debian's jupyter-notebook.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The kernel's GOMACRO_REPLACE is a space-separated list, and gomacro writes the directory into
# go.mod files unquoted: a checkout whose path has a space cannot be resolved (the notebooks'
# imports fail with "lstat <the path up to the space>: no such file or directory").
[[ "$repo" != *[[:space:]]* ]] || { echo "jupyter.sh: the checkout's path '$repo' has a space, which the Go kernel cannot use; clone or move it to a path without spaces" >&2; exit 1; }
notebook=$(command -v jupyter-notebook || true)
[[ -n "$notebook" ]] || { echo "jupyter.sh: jupyter-notebook not found (run scripts/setup.sh, or apt-get install jupyter-notebook)" >&2; exit 1; }
# The Python that runs jupyter-notebook, whose Jupyter must find this checkout's kernel spec
python=$(sed -n '1s/^#! *//p' "$notebook")
case "$python" in
*/env\ *) python=${python##*/env }; python=$(command -v "${python%% *}" || true) ;;
*\ *) python=${python%% *} ;;
esac
[[ -x "$python" ]] || python=$(command -v python3 || true)
# The kernel, with a spec of this checkout's own first on JUPYTER_PATH (kernelspec.sh): kernels
# this server starts run this checkout's code, whichever clone last ran build-kernel.sh.
source "$repo/scripts/kernelspec.sh"
use_checkout_kernel jupyter.sh "$python" "$repo"

args=(--notebook-dir="${NOTEBOOK_DIR:-$repo/examples/notebooks}"
	--MappingKernelManager.default_kernel_name=go-dlpack)
[ "$(id -u)" -ne 0 ] || args+=(--allow-root)
exec "$notebook" "${args[@]}" "$@"
