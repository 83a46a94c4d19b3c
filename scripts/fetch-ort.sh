#!/usr/bin/env bash
# fetch-ort.sh [VERSION] puts the ONNX Runtime shared library that package onnxx loads (onnxx.Init)
# into the user's cache: ${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/ort/VERSION/libonnxruntime.so.1,
# VERSION 1.31.1 unless given (onnxx.RuntimeVersion; the tests fetch the oldest supported release,
# 1.24.3, with an argument). Its last line of output is the library's path.
#
# onnxruntime_go ships no library for linux/amd64, so it is taken from the npm package
# onnxruntime-node@VERSION (file bin/napi-v6/linux/x64/libonnxruntime.so.1: ORT 1.x provides C API
# versions 1 to x). Without an argument nothing is fetched when $ONNXRUNTIME_LIB names an existing
# file (the user's own library, whose path is then printed); with one, $ONNXRUNTIME_LIB is not
# looked at. Nothing is fetched when the cached copy is already there. Needs npm and tar. Exits
# non-zero, saying why, on any failure.
set -euo pipefail

default=1.31.1
version="${1:-$default}"
member=package/bin/napi-v6/linux/x64/libonnxruntime.so.1
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	echo "fetch-ort: version \"$version\" is not of the form 1.31.1" >&2
	exit 1
fi
dir="${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/ort/$version"
lib="$dir/libonnxruntime.so.1"

if [ $# -eq 0 ] && [ -n "${ONNXRUNTIME_LIB:-}" ]; then
	if [ -s "$ONNXRUNTIME_LIB" ]; then
		echo "fetch-ort: using \$ONNXRUNTIME_LIB"
		echo "$ONNXRUNTIME_LIB"
		exit 0
	fi
	echo "fetch-ort: \$ONNXRUNTIME_LIB=$ONNXRUNTIME_LIB is not a non-empty file" >&2
	exit 1
fi
if [ -s "$lib" ]; then
	echo "fetch-ort: cached"
	echo "$lib"
	exit 0
fi
case "$(uname -s)/$(uname -m)" in
Linux/x86_64) ;;
*)
	echo "fetch-ort: the npm package has no library for $(uname -s)/$(uname -m); set \$ONNXRUNTIME_LIB to your own" >&2
	exit 1
	;;
esac
command -v npm >/dev/null || { echo "fetch-ort: npm is needed (apt-get install npm)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-ort: npm pack onnxruntime-node@$version (a large download)"
# --loglevel=error: no notices, but npm's reason when it fails (--silent would hide it)
(cd "$tmp" && npm pack --loglevel=error "onnxruntime-node@$version" >/dev/null) || {
	echo "fetch-ort: npm pack onnxruntime-node@$version failed (npm's error is above); or set \$ONNXRUNTIME_LIB to your own libonnxruntime.so" >&2
	exit 1
}
tgz="$tmp/onnxruntime-node-$version.tgz"
[ -s "$tgz" ] || { echo "fetch-ort: npm pack produced no $tgz" >&2; exit 1; }
tar -xzf "$tgz" -C "$tmp" "$member"
[ -s "$tmp/$member" ] || { echo "fetch-ort: $member is missing or empty in the package" >&2; exit 1; }
mkdir -p "$dir"
# Move into place atomically so that a concurrent run never sees half a file.
cp "$tmp/$member" "$dir/.libonnxruntime.so.1.$$"
mv -f "$dir/.libonnxruntime.so.1.$$" "$lib"
echo "fetch-ort: installed ($(stat -c %s "$lib") bytes)"
echo "$lib"
