#!/usr/bin/env bash
# pyvenv.sh makes the project's Python virtual environment for the tests that check dlpack-go against
# Python peers that Debian does not ship (NumPy 2, pyarrow, safetensors, ONNX Runtime's Python package,
# JAX, array-api-strict, apache-tvm-ffi, llama.cpp's gguf): ${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/venv,
# from Debian's /usr/bin/python3 (or $DLPACK_VENV_PYTHON), with exactly the versions pinned in
# scripts/peers-requirements.txt. Nothing goes into a system interpreter. It prints the venv's python.
# Does nothing when the venv already holds these pins (a stamp records their hash); safe to run
# concurrently (a lock). Exits non-zero, saying why, on any failure.
#
# With an argument NAME it makes the venv venv-NAME from scripts/peers-requirements-NAME.txt instead:
# `pyvenv.sh torch` is PyTorch 2.x from PyPI (a 2.8 GB download with its CUDA libraries).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
req="$here/peers-requirements${1:+-$1}.txt"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/venv${1:+-$1}"
[ -f "$req" ] || { echo "pyvenv: no $req" >&2; exit 1; }
base="${DLPACK_VENV_PYTHON:-/usr/bin/python3}"
stamp="$venv/.dlpack-go-pins"
want="$(sha256sum "$req" | cut -d' ' -f1)"

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	echo "$venv/bin/python"
	exit 0
fi
[ -x "$base" ] || { echo "pyvenv: $base is missing (apt-get install python3 python3-venv)" >&2; exit 1; }
rm -rf "$venv"
"$base" -m venv "$venv" >&2 || { echo "pyvenv: $base -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
echo "pyvenv: installing $(grep -cv '^#' "$req") pinned peers into $venv" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2 || {
	echo "pyvenv: pip install -r $req failed (pip's error is above)" >&2
	exit 1
}
echo "$want" >"$stamp"
echo "$venv/bin/python"
