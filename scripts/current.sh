#!/usr/bin/env bash
# current.sh asks the registries for the newest release of each component dlpack-go is built and
# tested with (the README's "Versions" table), tries the tests of the modules that use a Go
# dependency or the ONNX Runtime library against any newer release it is served, and prints a
# Markdown table: component, pinned, newest served, tests with the newest. CONTRIBUTING's release
# steps run it and paste its table into README.md and CONTRIBUTING.md.
#
# Registries are asked for explicit versions: the Go module proxy's version lists (`go list -m
# -versions`) and `@latest` can be stale, so a release known to exist is asked for by name too
# (known_newer below), and a refusal is written into the table, never worked around. Nothing in
# the checkout changes: Go tests run with -modfile on a copy of go.mod, libraries go to the caches
# of fetch-ort.sh. Needs go, npm and the project's venv (scripts/pyvenv.sh) for pip; a registry
# that cannot be reached gives "not reached" in its row. Set CURRENT_NO_TESTS=1 to only ask.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Releases known to exist that the proxy's lists do not show (REFERENCES.md, 2026-12-07): asked for
# by name, once each.
declare -A known_newer=(
	[github.com/gomlx/gomlx]=v0.28.40
)

rows=()
row() { rows+=("| $1 | $2 | $3 | $4 |"); }

# newest prints the highest of the versions on stdin (semver, "v" optional; pre-releases skipped).
newest() { grep -E '^v?[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1; }

# gomod_version MODFILE PATH prints the version MODFILE requires of PATH.
gomod_version() { awk -v m="$2" '$1 == m && $2 ~ /^v/ {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$1"; }

# go_newest PATH prints the newest release the proxy serves of module PATH, or "not reached".
go_newest() {
	local listed latest
	listed="$(GOWORK=off GOFLAGS=-mod=mod timeout 120 go list -m -versions "$1" 2>/dev/null | tr ' ' '\n' | tail -n +2)"
	latest="$(GOWORK=off GOFLAGS=-mod=mod timeout 120 go list -m -f '{{.Version}}' "$1@latest" 2>/dev/null)"
	if [ -z "$listed$latest" ]; then
		echo "not reached"
		return
	fi
	printf '%s\n%s\n' "$listed" "$latest" | newest
}

# go_known PATH: "" or ", VERSION refused by the proxy (REASON)" / ", VERSION served" for the
# release known_newer names for PATH.
go_known() {
	local v="${known_newer[$1]:-}" out
	[ -n "$v" ] || return 0
	if out="$(GOWORK=off GOFLAGS=-mod=mod timeout 120 go list -m -f '{{.Version}}' "$1@$v" 2>&1)"; then
		echo "; $v served"
	else
		echo "; $v refused by the proxy ($(echo "$out" | grep -oE '[0-9]{3} [A-Za-z ]+$' | head -1 || echo error))"
	fi
}

# go_try DIR PATH VERSION PKGS...: the tests of PKGS in the module at DIR with PATH at VERSION
# (a copy of go.mod through -modfile; the checkout's go.mod stays), "pass" or "FAIL (first lines)".
go_try() {
	local dir="$1" mod="$2" v="$3" out
	shift 3
	if [ -n "${CURRENT_NO_TESTS:-}" ]; then
		echo "not tried (CURRENT_NO_TESTS)"
		return
	fi
	cp "$dir/go.mod" "$tmp/go.mod"
	cp "$dir/go.sum" "$tmp/go.sum"
	if ! out="$(cd "$dir" && GOWORK=off GOFLAGS=-mod=mod go get -modfile="$tmp/go.mod" "$mod@$v" 2>&1)"; then
		echo "FAIL: go get: $(echo "$out" | tail -1)"
		return
	fi
	if out="$(cd "$dir" && GOWORK=off go test -modfile="$tmp/go.mod" -count=1 "$@" 2>&1)"; then
		echo "pass"
	else
		echo "FAIL: $(echo "$out" | grep -E '\.go:[0-9]+:[0-9]+: |^--- FAIL' | head -1 | sed 's|.*/pkg/mod/||; s/|/\\|/g')"
	fi
}

# go_row NAME DIR PATH PKGS...: a row for the Go module PATH required by the module at DIR.
go_row() {
	local name="$1" dir="$2" mod="$3" pinned served tried
	shift 3
	pinned="$(gomod_version "$dir/go.mod" "$mod")"
	served="$(go_newest "$mod")"
	# the pinned release is served (the build fetched it), even where the lists omit it
	[ "$served" = "not reached" ] || served="$(printf '%s\n%s\n' "$pinned" "$served" | newest)"
	tried="newest is pinned"
	if [ "$served" = "not reached" ]; then
		tried="not tried"
	elif [ "$(printf '%s\n%s\n' "$pinned" "$served" | sort -V | tail -1)" != "$pinned" ]; then
		tried="$served: $(go_try "$dir" "$mod" "$served" "$@")"
	fi
	row "$name" "$pinned" "$served$(go_known "$mod")" "$tried"
}

# npm_newest PKG prints the newest release npm serves of PKG.
npm_newest() {
	local out
	out="$(timeout 120 npm view --loglevel=error "$1" versions --json 2>/dev/null)" || { echo "not reached"; return; }
	echo "$out" | tr -d '[]", ' | grep -v '^$' | newest
}

# pip_newest PKG prints the newest release PyPI serves of PKG for the venv's Python.
pip_newest() {
	local out
	[ -n "${py:-}" ] || { echo "not reached"; return; }
	out="$(timeout 120 "$py" -m pip index versions --disable-pip-version-check "$1" 2>/dev/null)" || { echo "not reached"; return; }
	echo "$out" | sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p'
}

# Go, the toolchain: the go directive of go.mod and the newest toolchain the proxy serves.
go_dir="$(awk '$1 == "go" {print $2; exit}' go.mod)"
go_served="$(GOWORK=off GOFLAGS=-mod=mod timeout 120 go list -m -versions golang.org/toolchain 2>/dev/null | tr ' ' '\n' |
	sed -n 's/^v0\.0\.1-go\([0-9]*\.[0-9]*\.[0-9]*\)\.linux-amd64$/\1/p' | newest)"
row "Go" "$go_dir (go.mod; built with $(go env GOVERSION | sed 's/^go//'))" "${go_served:-not reached}" "not tried (GOTOOLCHAIN=go${go_served:-X} bash scripts/test.sh)"

# ONNX Runtime: fetch-ort.sh's default; a newer release is fetched into its cache and onnxx's
# tests run on it.
ort_pinned="$(sed -n 's/^default=//p' scripts/fetch-ort.sh)"
ort_served="$(npm_newest onnxruntime-node)"
ort_tried="newest is pinned"
if [ "$ort_served" != "not reached" ] && [ "$(printf '%s\n%s\n' "$ort_pinned" "$ort_served" | sort -V | tail -1)" != "$ort_pinned" ]; then
	if [ -n "${CURRENT_NO_TESTS:-}" ]; then
		ort_tried="$ort_served: not tried (CURRENT_NO_TESTS)"
	elif lib="$(bash scripts/fetch-ort.sh "$ort_served" 2>/dev/null | tail -1)" &&
		ONNXRUNTIME_LIB="$lib" go test -count=1 ./onnxx/... >"$tmp/ort.log" 2>&1 &&
		(cd onnxx/ortgo && ONNXRUNTIME_LIB="$lib" go test -count=1 ./... >>"$tmp/ort.log" 2>&1); then
		ort_tried="$ort_served: pass"
	else
		ort_tried="$ort_served: FAIL: $(grep -E '^(FAIL|---)' "$tmp/ort.log" | head -2 | tr '\n' ' ')"
	fi
fi
row "ONNX Runtime (onnxx)" "$ort_pinned" "$ort_served" "$ort_tried"

go_row "onnxruntime_go (onnxx/ortgo)" onnxx/ortgo github.com/yalue/onnxruntime_go ./...
go_row "GoMLX (gomlxx)" gomlxx github.com/gomlx/gomlx ./...
go_row "GoMLX compute (gomlxx)" gomlxx github.com/gomlx/compute ./...
go_row "arrow-go (arrowx)" . github.com/apache/arrow-go/v18 ./arrowx/...
go_row "Gonum (gonumx)" . gonum.org/v1/gonum ./gonumx/... ./adapters/...
go_row "Gorgonia (gorgoniax)" . gorgonia.org/tensor ./gorgoniax/...

# ggml's reference library (fetch-ggml.sh).
ggml_pinned="$(sed -n 's/^version=//p' scripts/fetch-ggml.sh)"
ggml_served="$(npm_newest @node-llama-cpp/linux-x64)"
ggml_tried="newest is pinned"
[ "$ggml_served" = "$ggml_pinned" ] || ggml_tried="not tried (set version= in scripts/fetch-ggml.sh, run go test ./ggufx/...)"
row "ggml's reference (@node-llama-cpp/linux-x64)" "$ggml_pinned" "$ggml_served" "$ggml_tried"

# The Python peers of the venv (peers-requirements.txt): asked, not tried (a pin there rebuilds
# the venv; then go test ./pyexchange/... ./numpyx/... ./safetensorsx/... ./ggufx/... ./arrowx/...).
py="$(bash scripts/pyvenv.sh 2>/dev/null | tail -1)"
for pkg in numpy pyarrow onnxruntime safetensors gguf; do
	pinned="$(sed -n "s/^$pkg==//p" scripts/peers-requirements.txt)"
	served="$(pip_newest "$pkg")"
	tried="newest is pinned"
	[ "$served" = "$pinned" ] || tried="not tried (pin it in scripts/peers-requirements.txt)"
	row "$pkg (PyPI, venv)" "$pinned" "${served:-not reached}" "$tried"
done

# Debian's NumPy and PyTorch (the oldest supported Python peers): the candidate apt offers.
for pkg in python3-numpy python3-torch; do
	inst="$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null || echo "not installed")"
	cand="$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')"
	tried="newest is installed"
	[ "$cand" = "$inst" ] || tried="not tried (apt-get install $pkg)"
	row "$pkg (Debian)" "$inst" "${cand:-not reached}" "$tried"
done

echo "| component | pinned | newest served | tests with the newest |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
