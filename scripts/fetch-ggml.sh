#!/usr/bin/env bash
# fetch-ggml.sh puts ggml's own library, the reference that ggufx's dequantization and quantization are
# checked against bit for bit, into the user's cache:
# ${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/ggml/3.22.1/libggml-base.so, and prints its path.
#
# The library is llama.cpp's ggml-base as built by node-llama-cpp, taken from the npm package
# @node-llama-cpp/linux-x64@3.22.1 (file bins/linux-x64/libggml-base.so: dequantize_row_<type> for
# every quantized type, ggml_quantize_chunk, ggml_type_size, ggml_blck_size, ggml_type_name). It needs
# only libc, libm and libstdc++. Nothing is done when $GGML_BASE_LIB names an existing file or the
# cached copy is already there. Needs npm and tar. Exits non-zero, saying why, on any failure.
set -euo pipefail

version=3.22.1
member=package/bins/linux-x64/libggml-base.so
dir="${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/ggml/$version"
lib="$dir/libggml-base.so"

if [ -n "${GGML_BASE_LIB:-}" ]; then
	[ -s "$GGML_BASE_LIB" ] || { echo "fetch-ggml: \$GGML_BASE_LIB=$GGML_BASE_LIB is not a non-empty file" >&2; exit 1; }
	echo "$GGML_BASE_LIB"
	exit 0
fi
if [ -s "$lib" ]; then
	echo "$lib"
	exit 0
fi
case "$(uname -s)/$(uname -m)" in
Linux/x86_64) ;;
*)
	echo "fetch-ggml: the npm package has no library for $(uname -s)/$(uname -m); set \$GGML_BASE_LIB to your own libggml-base.so" >&2
	exit 1
	;;
esac
command -v npm >/dev/null || { echo "fetch-ggml: npm is needed (apt-get install npm)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-ggml: npm pack @node-llama-cpp/linux-x64@$version" >&2
(cd "$tmp" && npm pack --loglevel=error "@node-llama-cpp/linux-x64@$version" >/dev/null) || {
	echo "fetch-ggml: npm pack @node-llama-cpp/linux-x64@$version failed (npm's error is above); or set \$GGML_BASE_LIB" >&2
	exit 1
}
tgz="$tmp/node-llama-cpp-linux-x64-$version.tgz"
[ -s "$tgz" ] || { echo "fetch-ggml: npm pack produced no $tgz" >&2; exit 1; }
tar -xzf "$tgz" -C "$tmp" "$member"
[ -s "$tmp/$member" ] || { echo "fetch-ggml: $member is missing or empty in the package" >&2; exit 1; }
mkdir -p "$dir"
cp "$tmp/$member" "$dir/.libggml-base.so.$$"
mv -f "$dir/.libggml-base.so.$$" "$lib"
echo "fetch-ggml: installed $lib ($(stat -c %s "$lib") bytes)" >&2
echo "$lib"
