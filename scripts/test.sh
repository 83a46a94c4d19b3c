#!/usr/bin/env bash
# Runs every test of dlpack-go against the real peers (NumPy, PyTorch, ONNX Runtime, Gonum,
# Gorgonia): first scripts/setup.sh (installs what is missing), then the notebooks in the Go
# Jupyter kernel (and their rendered pages in headless Chromium, screenshots in artifacts/notebooks),
# then `go test -race ./...` in the root module and in each nested module (gomlxx, onnxx/ortgo,
# arrowx/duckdbx, and the test-only ggufx/internal/parsercheck and internal/gopeers). GPU tests
# skip with their reason on a machine without a CUDA device; devicecheck/devicecheck.sh runs them
# on one. The conformance suite (the tests
# that compare dlpack-go with implementations that are not ours: tools/conformance lists them) runs
# once (under the race detector too), after the race runs skip it, through scripts/conformance.sh
# --check, which also fails when docs/conformance.md's tables no longer agree with what it reports.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/notebooks.sh
read -r _ conformance _ < <(go run ./tools/conformance -tests)
go test -race -count=1 -timeout 30m -skip "$conformance" ./...
bash scripts/conformance.sh --check
# The nested module gomlxx (its own go.mod; ./... from the root does not include it). checkptr is
# off in GoMLX's compute packages only: under -race the pure-Go backend's matmul kernels
# (compute v0.1.2, internal/gobackend/dot/matmul) keep addresses as uintptr across statements,
# which checkptr rejects as a fatal error in every test that multiplies matrices.
(cd gomlxx && go test -race -count=1 -timeout 30m -gcflags='github.com/gomlx/compute/...=-d=checkptr=0' ./...)
# onnxx/ortgo, the onnxruntime_go interop: a module of its own, so that requiring dlpack-go never
# moves the onnxruntime_go (and with it the ONNX Runtime library) a user's module picks
(cd onnxx/ortgo && go test -race -count=1 -timeout 20m ./...)
# arrowx/duckdbx, DuckDB's Go driver (cgo, with the static DuckDB library its bindings module
# ships): a module of its own so that requiring dlpack-go never brings DuckDB; the driver's Arrow
# interface needs the build tag duckdb_arrow
(cd arrowx/duckdbx && go test -race -count=1 -timeout 20m -tags duckdb_arrow -skip "$conformance" ./...)
# ggufx's cross-check against gpustack/gguf-parser-go, a module of its own so that the parser never
# becomes a dependency of dlpack-go (outside the workspace: GOWORK=off, a replace to this checkout)
(cd ggufx/internal/parsercheck && GOWORK=off go test -race -count=1 ./...)
# numpyx and safetensorsx beside the other Go implementations of their formats (npyio,
# nlpodyssey/safetensors): a test-only module, so that those peers stay out of dlpack-go's go.mod
(cd internal/gopeers && GOWORK=off go test -race -count=1 ./...)
