#!/usr/bin/env bash
# Installs what the tour and the tests need on a fresh Debian 12 machine with Go, and nothing that is
# already there: Debian's NumPy, PyTorch and ONNX for Python (the real peers the tests talk to), a C
# compiler for the cgo bridge, Jupyter (the notebook UI too) and the notebooks' Go kernel, Chromium to
# check the rendered notebooks, npm to fetch the ONNX Runtime library, and that library itself
# (cached under ~/.cache/dlpack-go). Safe to run again; run as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-dev: the headers the exchange API's test harness (numpyx/python/xharness) is built with
pkgs=(gcc libc6-dev python3 python3-dev python3-numpy python3-torch python3-onnx
	python3-venv python3-pip python3-setuptools python3-wheel # pip install ./numpyx/python, offline
	python3-jupyter-client python3-nbclient python3-nbformat python3-ipykernel jupyter-nbconvert
	jupyter-notebook chromium)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || {
			echo "setup: missing ${missing[*]}; installing them needs root, and sudo is not here: run" >&2
			echo "  apt-get install ${missing[*]}" >&2
			echo "as root (or run this script as root), then run it again" >&2
			exit 1
		}
		sudo=(sudo)
	fi
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The ONNX Runtime library (in the user's cache) and the notebooks' Go kernel are for the user who
# runs the tour and the notebooks: under sudo, the one who asked, not root.
as_user=()
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
	as_user=(sudo -u "$SUDO_USER" -H)
fi
"${as_user[@]}" bash scripts/fetch-ort.sh
"${as_user[@]}" bash scripts/build-kernel.sh >/dev/null
echo "setup: ready"
