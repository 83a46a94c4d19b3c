#!/usr/bin/env bash
# Runs every test of dlpack-go against the real peers (NumPy, PyTorch, ONNX Runtime, Gonum,
# Gorgonia): first scripts/setup.sh (installs what is missing), then the notebooks in the Go
# Jupyter kernel (and their rendered pages in headless Chromium, screenshots in artifacts/notebooks),
# then `go test -race ./...`. GPU tests skip with their reason on a machine
# without a CUDA device; gpu/cuda/devicecheck.sh runs them on one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/notebooks.sh
go test -race -count=1 -timeout 30m ./...
