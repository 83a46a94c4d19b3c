#!/usr/bin/env bash
# Writes the fuzz seeds made by other writers than ours (scripts/fuzzseeds.py says which) into
# numpyx/testdata/fuzz/ and safetensorsx/testdata/fuzz/: once with Debian's NumPy (1.24,
# /usr/bin/python3, from scripts/setup.sh) and once with the project's virtualenv (NumPy 2.x and
# the safetensors package, from scripts/pyvenv.sh). The seeds are committed; run this again
# when a writer changes, and commit what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
/usr/bin/python3 scripts/fuzzseeds.py "$(pwd)"
"$(bash scripts/pyvenv.sh)" scripts/fuzzseeds.py "$(pwd)"
