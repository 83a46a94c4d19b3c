#!/usr/bin/env bash
# Builds the artefacts devicecheck.sh runs, into .devicebuild/ at the repository root, on a
# linux/amd64 machine with Go and gcc (no GPU, no CUDA SDK needed):
#   cuda.test, gpu.test   the tests of gpu/cuda and gpu (CGO_ENABLED=0: purego opens libcuda.so.1)
#   libdlpackgpu.so       gpu/cuda/internal/devicelib: a Go library on numpyx/pyexchange (the
#                         product's Python exchange) that devicecheck.py loads with dlpackgo
#   safetensorsx.test     for TestHuggingFaceSafetensors against the Python safetensors package there
#   libdlpackarrow.so     arrowx/internal/pyarrowlib, for arrowx/devicecheck_pyarrow.py (pyarrow)
#   libdlpackgo_test.so   numpyx/pyexchange/internal/testlib, for numpyx/python's tests on the
#                         newer NumPy and PyTorch there (versioned capsules from real producers)
# Then carry .devicebuild/ to the GPU machine and run: bash gpu/cuda/devicecheck.sh
# (Symbol tables are stripped, -s -w, to keep the folder well under the device tool's 64 MiB carry
# limit; Go's own tracebacks do not need them.)
set -eu
cd "$(dirname "$0")/../.."
mkdir -p .devicebuild
CGO_ENABLED=0 go test -ldflags="-s -w" -c -o .devicebuild/cuda.test ./gpu/cuda
CGO_ENABLED=0 go test -ldflags="-s -w" -c -o .devicebuild/gpu.test ./gpu
CGO_ENABLED=0 go test -ldflags="-s -w" -c -o .devicebuild/safetensorsx.test ./safetensorsx
CGO_ENABLED=1 go build -ldflags="-s -w" -buildmode=c-shared -o .devicebuild/libdlpackgpu.so ./gpu/cuda/internal/devicelib
CGO_ENABLED=1 go build -ldflags="-s -w" -buildmode=c-shared -o .devicebuild/libdlpackarrow.so ./arrowx/internal/pyarrowlib
# the host-side Python exchange tests, run there against NumPy 2.x and PyTorch 2.x
CGO_ENABLED=1 go build -ldflags="-s -w" -buildmode=c-shared -o .devicebuild/libdlpackgo_test.so ./numpyx/pyexchange/internal/testlib
rm -f .devicebuild/libdlpackgpu.h .devicebuild/libdlpackgo_test.h .devicebuild/libdlpackarrow.h
ls -l .devicebuild
