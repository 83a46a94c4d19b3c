#!/usr/bin/env bash
# Which checkout the notebooks' Go kernel runs.
#
#   bash scripts/kernelspec.sh [PYTHON]
#
# prints the kernel spec "go-dlpack" that a Jupyter run by PYTHON (default: Debian's
# /usr/bin/python3, whose jupyter-notebook and nbconvert setup.sh installs) finds, in the
# environment it is given (JUPYTER_PATH, JUPYTER_DATA_DIR), and the checkout it runs: the
# directory its GOMACRO_REPLACE gives github.com/dlpack-go/dlpack. Debian's Jupyter has no
# `jupyter kernelspec` command; this is the way to ask. It exits 1 when it finds no such spec.
#
# The spec that scripts/build-kernel.sh installs for the user (~/.local/share/jupyter/kernels/
# go-dlpack, used by a Jupyter started any other way) runs the checkout that last ran
# build-kernel.sh (or setup.sh). scripts/jupyter.sh and scripts/notebooks.sh do not depend on it:
# they source this file and call use_checkout_kernel, which installs a spec of the same name for
# their own checkout in .jupyter/ of that checkout (ignored by git), puts that folder first on
# JUPYTER_PATH for the Jupyter they start, says which checkout the kernel runs, and refuses to
# go on when it is not theirs. Two clones on one machine each run their own code that way.
set -euo pipefail

# kernel_checkout PYTHON: "SPEC_DIR<TAB>CHECKOUT" of the go-dlpack spec PYTHON's Jupyter finds.
kernel_checkout() {
	"$1" - <<'PY'
import sys
try:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
except ImportError as e:
    sys.exit("this Python has no jupyter_client (%s): %s" % (sys.executable, e))
try:
    spec = KernelSpecManager().get_kernel_spec("go-dlpack")
except NoSuchKernel:
    sys.exit("no kernel spec go-dlpack (run scripts/build-kernel.sh)")
checkout = ""
for item in (spec.env or {}).get("GOMACRO_REPLACE", "").split():
    mod, _, where = item.partition("=")
    if mod == "github.com/dlpack-go/dlpack":
        checkout = where
print(spec.resource_dir + "\t" + checkout)
PY
}

# use_checkout_kernel NAME PYTHON REPO: the kernel spec of REPO, first on JUPYTER_PATH, checked
# with PYTHON's Jupyter; NAME (the calling script) leads the messages.
use_checkout_kernel() {
	local name=$1 python=$2 repo=$3 found dir checkout
	# build-kernel.sh writes its spec under $JUPYTER_DATA_DIR/kernels: here, this checkout's own
	JUPYTER_DATA_DIR="$repo/.jupyter" bash "$repo/scripts/build-kernel.sh" >/dev/null
	export JUPYTER_PATH="$repo/.jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
	found=$(kernel_checkout "$python") || { echo "$name: cannot tell which checkout the kernel go-dlpack runs" >&2; return 1; }
	dir=${found%%$'\t'*} checkout=${found#*$'\t'}
	if [[ -z "$checkout" || "$(cd "$checkout" 2>/dev/null && pwd -P)" != "$(cd "$repo" && pwd -P)" ]]; then
		echo "$name: the kernel go-dlpack that Jupyter finds ($dir) runs the checkout '${checkout:-(none)}', not this one ($repo): a JUPYTER_PATH entry or a Jupyter configuration of yours puts another spec first; remove it and run again" >&2
		return 1
	fi
	echo "$name: kernel go-dlpack runs the checkout $checkout ($dir)"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	found=$(kernel_checkout "${1:-/usr/bin/python3}")
	echo "kernel go-dlpack: ${found%%$'\t'*}"
	echo "runs the checkout: ${found#*$'\t'}"
fi
