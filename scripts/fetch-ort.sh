#!/usr/bin/env bash
# fetch-ort.sh puts the ONNX Runtime shared library that package onnxx loads (onnxx.Init) into the
# user's cache: ${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/ort/1.30.0/libonnxruntime.so.1.
#
# onnxruntime_go ships no library for linux/amd64, so it is taken from the npm package
# onnxruntime-node@1.30.0 (file bin/napi-v6/linux/x64/libonnxruntime.so.1: ORT 1.30, C API 1-30).
# Nothing is done when $ONNXRUNTIME_LIB names an existing file (the user's own library) or when the
# cached copy is already there. Needs npm and tar. Exits non-zero, saying why, on any failure.
set -euo pipefail

version=1.30.0
member=package/bin/napi-v6/linux/x64/libonnxruntime.so.1
dir="${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-go/ort/$version"
lib="$dir/libonnxruntime.so.1"

if [ -n "${ONNXRUNTIME_LIB:-}" ]; then
	if [ -s "$ONNXRUNTIME_LIB" ]; then
		echo "fetch-ort: using \$ONNXRUNTIME_LIB=$ONNXRUNTIME_LIB"
		exit 0
	fi
	echo "fetch-ort: \$ONNXRUNTIME_LIB=$ONNXRUNTIME_LIB is not a non-empty file" >&2
	exit 1
fi
if [ -s "$lib" ]; then
	echo "fetch-ort: cached $lib"
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
echo "fetch-ort: installed $lib ($(stat -c %s "$lib") bytes)"
