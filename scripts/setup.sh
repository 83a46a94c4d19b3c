#!/usr/bin/env bash
# Installs what the tour and the tests need on a fresh Debian 12 machine with Go, and nothing that is
# already there: Debian's NumPy, PyTorch and ONNX for Python (the real peers the tests talk to), a C
# compiler for the cgo bridge, Jupyter (the notebook UI too) and the notebooks' Go kernel, Chromium to
# check the rendered notebooks, npm to fetch the ONNX Runtime library, and that library itself
# (cached under ~/.cache/dlpack-go). Safe to run again; run as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-dev: the headers the exchange API's test harness (pyexchange/internal/xharness) is built with
pkgs=(gcc libc6-dev python3 python3-dev python3-numpy python3-torch python3-onnx
	libonnx-testdata # ONNX's backend test data, run by onnxx/internal/backendsuite
	python3-venv python3-pip python3-setuptools python3-wheel # pip install ./pyexchange/python, offline
	python3-hypothesis # pyexchange's DLPack conformance cases under Debian's NumPy and PyTorch
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
# The references the tests check dlpack-go against that Debian does not ship: ggml's own library
# (npm), and the Python peers in the project's virtual environment (PyPI, pinned in
# scripts/peers-requirements.txt; never the system interpreter).
"${as_user[@]}" bash scripts/fetch-ggml.sh >/dev/null
"${as_user[@]}" bash scripts/pyvenv.sh >/dev/null
# PyTorch 2.x from PyPI, in a venv of its own: a 2.8 GB download with its CUDA libraries (5.4 GB
# installed), about 6 minutes on a fresh 2-core machine, once
"${as_user[@]}" bash scripts/pyvenv.sh torch >/dev/null

# Go, which builds the kernel. Under sudo, PATH is sudo's secure_path, which lacks where Go usually
# is: /usr/local/go/bin, or what the user's profile adds. So the user's own Go comes first there:
# the one on their login shell's PATH, then the usual places (a Go in their home, /usr/local/go),
# then sudo's PATH (Debian's golang-go). Without sudo, PATH comes first. $DLPACK_GO_PLACES, a
# space-separated list of go binaries, replaces the system's usual places (the tests set it).
user_home=$HOME
if ((${#as_user[@]})); then
	IFS=: read -r _ _ _ _ _ user_home _ < <(getent passwd "$SUDO_USER" 2>/dev/null) || user_home=
fi
find_go() {
	local c dir out path_go
	local -a candidates=() dirs=() places=()
	path_go=$(command -v go 2>/dev/null) || path_go=
	if ((${#as_user[@]})); then
		# printenv: an external command, whatever the user's shell; the last line, in case the
		# profile prints something
		out=$(timeout 30 "${as_user[@]}" -i printenv PATH </dev/null 2>/dev/null) || out=
		IFS=: read -ra dirs <<<"${out##*$'\n'}"
		for dir in "${dirs[@]}"; do
			[ -z "$dir" ] || candidates+=("$dir/go")
		done
	else
		candidates+=("$path_go")
	fi
	if [ -n "$user_home" ]; then
		candidates+=("$user_home/go/bin/go" "$user_home/.local/go/bin/go")
		# golang.org/dl's downloads, ~/sdk/go1.26.0/bin/go: the newest first
		mapfile -t places < <(printf '%s\n' "$user_home"/sdk/go*/bin/go | sort -V -r)
		candidates+=("${places[@]}")
	fi
	if [ -n "${DLPACK_GO_PLACES+set}" ]; then
		read -ra places <<<"$DLPACK_GO_PLACES"
		candidates+=("${places[@]}" "$path_go")
	else
		candidates+=(/usr/local/go/bin/go "$path_go" /usr/lib/go/bin/go /snap/bin/go)
	fi
	for c in "${candidates[@]}"; do
		if [ -n "$c" ] && [ -f "$c" ] && [ -x "$c" ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}
go=$(find_go) || {
	echo "setup: Go not found, and the notebooks' kernel is built with it (scripts/build-kernel.sh)." >&2
	if ((${#as_user[@]})); then
		echo "  Looked on $SUDO_USER's login PATH, in ~$SUDO_USER/go, ~$SUDO_USER/.local/go, ~$SUDO_USER/sdk," >&2
		echo "  /usr/local/go and on sudo's PATH ($PATH)." >&2
		echo "  Install Go (https://go.dev/doc/install) and run this again; or run it as yourself with Go" >&2
		echo "  on your PATH (bash scripts/setup.sh: it calls sudo for apt-get); or pass your PATH through" >&2
		echo "  sudo: sudo env \"PATH=\$PATH\" bash scripts/setup.sh" >&2
	else
		echo "  Looked on PATH ($PATH), in ~/go, ~/.local/go, ~/sdk and /usr/local/go." >&2
		echo "  Install Go (https://go.dev/doc/install), put its bin directory on PATH, and run this again." >&2
	fi
	exit 1
}
kernel_env=()
path_go=$(command -v go 2>/dev/null) || path_go=
if [ "$go" != "$path_go" ]; then
	if ((${#as_user[@]})); then
		echo "setup: building the notebooks' kernel with $SUDO_USER's $go (sudo's PATH has another go, or none)"
	else
		echo "setup: go is not on PATH; building the notebooks' kernel with $go (put $(dirname "$go") on PATH for scripts/jupyter.sh and scripts/notebooks.sh)"
	fi
fi
# sudo -u resets PATH to secure_path again: the kernel's build gets the Go found, first on PATH
if [ "$go" != "$path_go" ] || ((${#as_user[@]})); then
	kernel_env=(env "PATH=$(dirname "$go"):$PATH")
fi
"${as_user[@]}" "${kernel_env[@]}" bash scripts/build-kernel.sh >/dev/null
echo "setup: ready"
