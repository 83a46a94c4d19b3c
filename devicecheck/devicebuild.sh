#!/usr/bin/env bash
# Builds the artefacts devicecheck.sh runs, into .devicebuild/ at the repository root, on a
# linux/amd64 machine with Go and gcc (no GPU, no CUDA SDK needed):
#   cuda.test, gpu.test   the tests of gpu/cuda and gpu (CGO_ENABLED=0: purego opens libcuda.so.1)
#   libdlpackgpu.so       devicecheck/cudalib: a Go library on pyexchange (the
#                         product's Python exchange) that check_cuda.py loads with dlpackgo
#   safetensorsx.test     for TestHuggingFaceSafetensors against the Python safetensors package there
#   libdlpackarrow.so.xz  devicecheck/pyarrowlib, for devicecheck/check_pyarrow.py (pyarrow),
#                         compressed: with arrow-go's Flight and Parquet it is 44 MB, which with
#                         the rest would pass the device tool's 64 MiB for the working tree and
#                         .devicebuild together; devicecheck.sh unpacks it with Python's lzma
#   libdlpackgo_test.so   pyexchange/internal/testlib, for pyexchange/python's tests on the
#                         newer NumPy and PyTorch there (versioned capsules from real producers)
# and what they were built from, which devicecheck.sh prints first and checks against its tree:
#   BUILD                 the commit (git rev-parse HEAD), whether the tree was dirty (changes or
#                         untracked files git does not ignore) and which, when, and the Go version
#   SOURCES.sha256        sha256sum of the build inputs: go.mod, go.sum and the *.go, *.c, *.h, *.s
#                         files of every package of this module that they are built from (go list
#                         -deps -test), checkable with sha256sum -c where there is no git
# Then carry .devicebuild/ to the GPU machine and run: bash devicecheck/devicecheck.sh
# (Symbol tables are stripped, -s -w, to keep the folder well under the device tool's 64 MiB carry
# limit; Go's own tracebacks do not need them.)
set -euo pipefail
cd "$(dirname "$0")/.."
# the packages built below (SOURCES.sha256 covers them and their dependencies): keep in step
pkgs=(./gpu/cuda ./gpu ./safetensorsx ./devicecheck/cudalib ./devicecheck/pyarrowlib
	./pyexchange/internal/testlib)
mkdir -p .devicebuild
# A build that stops half-way leaves no record, so its mix of binaries is never taken for a build
# of one commit.
rm -f .devicebuild/BUILD .devicebuild/SOURCES.sha256
CGO_ENABLED=0 go test -ldflags="-s -w" -c -o .devicebuild/cuda.test ./gpu/cuda
CGO_ENABLED=0 go test -ldflags="-s -w" -c -o .devicebuild/gpu.test ./gpu
CGO_ENABLED=0 go test -ldflags="-s -w" -c -o .devicebuild/safetensorsx.test ./safetensorsx
CGO_ENABLED=1 go build -ldflags="-s -w" -buildmode=c-shared -o .devicebuild/libdlpackgpu.so ./devicecheck/cudalib
CGO_ENABLED=1 go build -ldflags="-s -w" -buildmode=c-shared -o .devicebuild/libdlpackarrow.so ./devicecheck/pyarrowlib
# the host-side Python exchange tests, run there against NumPy 2.x and PyTorch 2.x
CGO_ENABLED=1 go build -ldflags="-s -w" -buildmode=c-shared -o .devicebuild/libdlpackgo_test.so ./pyexchange/internal/testlib
rm -f .devicebuild/libdlpackgpu.h .devicebuild/libdlpackgo_test.h .devicebuild/libdlpackarrow.h
xz -9 -T0 -f .devicebuild/libdlpackarrow.so

# What they were built from. The sources are hashed after the build: an edit during the build
# shows up as a difference, never as a match.
{
	if commit=$(git rev-parse HEAD 2>/dev/null); then
		changed=$(git status --porcelain)
		echo "commit $commit"
		if [ -n "$changed" ]; then
			echo "dirty yes ($(printf '%s\n' "$changed" | wc -l) paths changed or untracked)"
			printf '%s\n' "$changed" | sed 's/^/  /'
		else
			echo "dirty no"
		fi
	else
		echo "commit unknown (no git repository here)"
		echo "dirty unknown"
	fi
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(go version)"
} >.devicebuild/BUILD.tmp
# Every file of those packages' directories, whatever its build tags (the tests are built with
# CGO_ENABLED=0, the libraries with cgo).
root=$(pwd)
{
	for f in go.mod go.sum; do [ ! -f "$f" ] || echo "$f"; done
	go list -deps -test -f '{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}' "${pkgs[@]}" |
		sed -n "s|^$root/||p" | sort -u |
		while IFS= read -r dir; do
			find "$dir" -maxdepth 1 -type f \( -name '*.go' -o -name '*.c' -o -name '*.h' -o -name '*.s' \) | sort
		done
} | xargs -d '\n' sha256sum -- >.devicebuild/SOURCES.sha256
mv .devicebuild/BUILD.tmp .devicebuild/BUILD
sed -n '1,2p' .devicebuild/BUILD
ls -l .devicebuild
