#!/usr/bin/env bash
# Device check of packages gpu and gpu/cuda on a Linux machine with an NVIDIA GPU and its
# driver, and Python with PyTorch, CuPy and NumPy. It needs no Go toolchain, no CUDA SDK and no
# network: it runs the artefacts devicecheck/devicebuild.sh put in .devicebuild/ (carry that
# folder along):
#   1. the GPU tests of gpu/cuda and gpu, with DLPACK_REQUIRE_GPU=1 so that they fail rather
#      than skip, and a short transfer benchmark;
#   2. check_cuda.py: PyTorch and CuPy exchanging CUDA tensors with Go through the product's
#      Python exchange (dlpackgo and pyexchange, stream semantics by SetStreamSync),
#      and Go's H2D/D2H bandwidth next to torch's;
#   3. pyexchange/python/devicecheck_exchange.py: DLPack 1.3's C exchange API against torch's own, on
#      CPU and CUDA tensors, with timings;
#   4. safetensorsx's TestHuggingFaceSafetensors against the Python safetensors package;
#   5. devicecheck/check_pyarrow.py: the Arrow C Data Interface, Arrow Flight and Parquet
#      (arrowx/parquetx and pyarrow.parquet) against pyarrow.
# Usage (from anywhere): bash devicecheck/devicecheck.sh     Expected run time: about 2 minutes.
# First it prints what .devicebuild/ was built from (the commit, and whether that tree was dirty)
# and warns, without failing, when this tree's build inputs are not the build's (stale binaries).
# Every step has a timeout (SIGKILL 10 s after it), cut to what is left of a budget for the whole
# run (DEVICECHECK_BUDGET, 480 s; the steps' own timeouts add up to over 15 minutes): a step that
# hangs costs its timeout, not the run, and the summary comes within the budget and a few seconds,
# under the device tool's 10-minute limit for one command. A step that finds no time left is
# reported as failed ("no time left").
# Exit status: 0 everything passed, 1 something failed, 2 no GPU ("NO GPU: device checks not run").
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B="$ROOT/.devicebuild"
LOG=$(mktemp -d)
status=0
summary=()
START=$(date +%s)
BUDGET=${DEVICECHECK_BUDGET:-480}

# budget NAME N: sets T to N seconds, or to what is left of the run's budget if that is less; with
# under 5 s left it reports NAME as failed, not run, and returns 1 (timeout 0 would mean no limit).
budget() {
	local left=$((START + BUDGET - $(date +%s)))
	if [ $left -lt 5 ]; then
		echo "FAIL $1: not run, no time left of the ${BUDGET}s budget"
		summary+=("FAIL $1: not run (no time left of the ${BUDGET}s budget)")
		status=1
		return 1
	fi
	T=$(($2 < left ? $2 : left))
}

# timed_out NAME RC: says that step NAME timed out (after T seconds) when its exit status RC is
# timeout's.
timed_out() {
	[ "$2" -eq 124 ] && echo "FAIL $1: timed out after ${T}s"
	return 0
}

# script_verdict NAME RC SECONDS NOT_RUN_REASON [PASS_DETAIL] records the outcome of a Python
# step whose script exits 0 when it passed and 2 when this machine lacks what it checks.
script_verdict() {
	case $2 in
	0) summary+=("PASS $1${5:+: $5} ($3s)") ;;
	2) summary+=("NOT RUN $1: $4") ;;
	*)
		timed_out "$1" "$2"
		summary+=("FAIL $1 (exit $2, $3s)")
		status=1
		;;
	esac
}

# What .devicebuild/ was built from (devicebuild.sh records it in BUILD and SOURCES.sha256), printed
# first, and whether this tree still holds those sources: the build inputs against their recorded
# checksums (no git needed: a copy of the tree without .git is checked too) and, where this tree
# has its git metadata, its commit against the recorded one. A mismatch is a warning, not a
# failure (repeated in the summary): the binaries may not be this tree's code.
build_warn=()
warn_build() {
	echo "WARNING: $*"
	build_warn+=("$*")
}
check_build() {
	local rebuild="Rebuild with devicecheck/devicebuild.sh on a machine with Go and carry .devicebuild/ again."
	if [ ! -f "$B/BUILD" ]; then
		warn_build ".devicebuild/ records no commit (built by an older devicebuild.sh, or a build that stopped): its binaries may not be this tree's. $rebuild"
		return
	fi
	local built here="" here_dirty="" top sums="" n bad=() new=() f
	built=$(sed -n 's/^commit //p' "$B/BUILD")
	echo ".devicebuild: commit $built, dirty $(sed -n 's/^dirty //p' "$B/BUILD"); $(grep -m1 '^built ' "$B/BUILD")"
	top=$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null) || top=""
	if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ]; then
		here=$(git rev-parse HEAD 2>/dev/null)
		[ -z "$(git status --porcelain 2>/dev/null)" ] || here_dirty=", with changes"
	fi
	if [ -s "$B/SOURCES.sha256" ] && command -v sha256sum >/dev/null 2>&1; then
		n=$(wc -l <"$B/SOURCES.sha256")
		mapfile -t bad < <(sha256sum --check --quiet "$B/SOURCES.sha256" 2>/dev/null | sed -n 's/: FAILED.*$//p')
		# new files in the build's package directories
		local listed
		listed=$(sed 's/^[0-9a-f]*  //' "$B/SOURCES.sha256")
		mapfile -t new < <(sed -n 's|/[^/]*$||p' <<<"$listed" | sort -u | while IFS= read -r d; do
			[ ! -d "$d" ] || find "$d" -maxdepth 1 -type f \( -name '*.go' -o -name '*.c' -o -name '*.h' -o -name '*.s' \)
		done)
		for f in "${new[@]}"; do
			grep -qxF -- "$f" <<<"$listed" || bad+=("$f (new)")
		done
		if ((${#bad[@]})); then
			sums="build inputs changed since it was built (${#bad[@]}): $(printf '%s, ' "${bad[@]:0:8}" | sed 's/, $//')"
			((${#bad[@]} <= 8)) || sums+=", ..."
		else
			sums=ok
		fi
	fi
	if [ "$sums" = ok ]; then
		if [ -n "$here" ] && [ "$here" != "$built" ]; then
			echo ".devicebuild: this tree is at commit $here$here_dirty, but its $n build inputs are the build's: the binaries are this tree's"
		else
			echo ".devicebuild: its $n build inputs are this tree's"
		fi
	elif [ -n "$sums" ]; then
		warn_build ".devicebuild/ is stale: $sums${here:+; this tree is at commit $here$here_dirty}. $rebuild"
	elif [ -n "$here" ] && [ "$here" != "$built" ]; then
		warn_build ".devicebuild/ was built from commit $built, this tree is at $here$here_dirty: its binaries may be stale. $rebuild"
	elif [ -n "$here" ] && [ -z "$here_dirty" ] && grep -qx 'dirty no' "$B/BUILD"; then
		echo ".devicebuild: built from this tree's commit, with no changes on either side"
	else
		warn_build ".devicebuild/ has no checksums of its sources to compare with this tree's (no SOURCES.sha256${here:+, and uncommitted changes on one side}): its binaries may be stale. $rebuild"
	fi
}
[ ! -d "$B" ] || check_build

for f in cuda.test gpu.test libdlpackgpu.so libdlpackgo_test.so safetensorsx.test libdlpackarrow.so.xz; do
	if [ ! -f "$B/$f" ]; then
		echo "FAIL missing $B/$f: run devicecheck/devicebuild.sh on a machine with Go, and carry .devicebuild/"
		exit 1
	fi
done
chmod +x "$B/cuda.test" "$B/gpu.test" "$B/safetensorsx.test" 2>/dev/null

# pyfind MODULE...: the interpreter by the rule of package pyfind (the one rule of this
# repository; see its documentation): $PYTHON when it is set, taken as it is; else the first of
# python3 on $PATH and Debian's /usr/bin/python3 that imports every module. Where none does, it
# prints nothing, and the steps that need Python report that none has torch.
pyfind() {
	if [ -n "${PYTHON:-}" ]; then
		echo "$PYTHON"
		return
	fi
	local c imports
	imports=$(printf 'import %s; ' "$@")
	for c in python3 /usr/bin/python3; do
		if command -v "$c" >/dev/null 2>&1 && "$c" -c "$imports" >/dev/null 2>&1; then
			echo "$c"
			return
		fi
	done
}
PY=$(pyfind torch)

# Is there a device at all? Ask the driver exactly as the tests do.
probe=$(cd gpu/cuda && DLPACK_REQUIRE_GPU=0 timeout 60 "$B/cuda.test" -test.run '^TestGPUDeviceInfo$' -test.v 2>&1)
if echo "$probe" | grep -q -- '--- SKIP'; then
	echo "$probe" | grep -m1 'no CUDA device'
	if [ -n "$PY" ]; then timeout 60 "$PY" devicecheck/check_cuda.py; fi
	echo "NO GPU: device checks not run"
	exit 2
fi
command -v nvidia-smi >/dev/null 2>&1 && timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

export DLPACK_REQUIRE_GPU=1

# run_tests NAME DIR TIMEOUT BINARY ARGS...: runs a test binary in its package directory, shows
# each test's result and log lines, and fails on a failure, a timeout or a skipped GPU test.
run_tests() {
	local name=$1 dir=$2 limit=$3 bin=$4
	shift 4
	budget "$name" "$limit" || return 0
	limit=$T
	local t0=$(date +%s)
	local log="$LOG/$(echo "$name" | tr -c 'A-Za-z0-9\n' '_').txt"
	(cd "$dir" && timeout -k 10 "$limit" "$bin" -test.v -test.count=1 "$@") >"$log" 2>&1
	local rc=$?
	grep -E '^(--- |    --- |ok|FAIL|PASS|panic:)|_test.go:[0-9]+: |^Benchmark' "$log" | grep -v -- '^    --- PASS' | head -150
	local pass fail skip what
	pass=$(grep -c -- '--- PASS: TestGPU' "$log")
	what="$pass GPU tests"
	if [ "$pass" -eq 0 ] && grep -qE '^Benchmark.* ns/op' "$log"; then # a benchmark run
		what="$(grep -cE '^Benchmark.* ns/op' "$log") benchmarks"
	fi
	fail=$(grep -c -- '--- FAIL' "$log")
	skip=$(grep -c -- '--- SKIP: TestGPU' "$log")
	local dt=$(($(date +%s) - t0))
	if [ $rc -ne 0 ] || [ "$skip" -ne 0 ] || [ "$fail" -ne 0 ]; then
		timed_out "$name" $rc
		tail -40 "$log"
		echo "FAIL $name (exit $rc, $fail failed, $skip GPU tests skipped, ${dt}s)"
		summary+=("FAIL $name")
		status=1
	else
		echo "PASS $name ($what passed, ${dt}s)"
		summary+=("PASS $name ($what)")
	fi
}

run_tests "go test ./gpu/cuda" gpu/cuda 60 "$B/cuda.test"
run_tests "go test ./gpu" gpu 90 "$B/gpu.test"
run_tests "go test -bench Transfer ./gpu" gpu 40 "$B/gpu.test" -test.run '^$' -test.bench Transfer -test.benchtime 20x

if [ -z "$PY" ]; then
	echo "FAIL python exchange: no Python with torch found (set PYTHON=...)"
	summary+=("FAIL python exchange: no torch")
	status=1
elif budget "python exchange" 100; then
	t0=$(date +%s)
	DLPACK_GPU_LIB="$B/libdlpackgpu.so" timeout -k 10 "$T" "$PY" devicecheck/check_cuda.py
	rc=$?
	dt=$(($(date +%s) - t0))
	if [ $rc -eq 0 ]; then
		summary+=("PASS python exchange (${dt}s)")
	else
		timed_out "python exchange" $rc
		summary+=("FAIL python exchange (exit $rc, ${dt}s)")
		status=1
	fi
fi

# pyexchange/python's host tests against the NumPy and PyTorch of this machine (2.x: versioned
# capsules from real producers and consumers).
if [ -n "$PY" ] && [ -f "$B/libdlpackgo_test.so" ] && budget "host python exchange" 120; then
	"$PY" -c 'import numpy, torch; print("host exchange with numpy", numpy.__version__, "torch", torch.__version__)'
	t0=$(date +%s)
	(cd pyexchange/python && DLPACKGO_TESTLIB="$B/libdlpackgo_test.so" PYTHONDONTWRITEBYTECODE=1 timeout -k 10 "$T" "$PY" -m unittest test_dlpackgo) >"$LOG/pyhost.txt" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	grep -E '^(FAIL|ERROR):|Error|^Ran |^OK|^FAILED' "$LOG/pyhost.txt" | head -60
	if [ $rc -eq 0 ]; then
		summary+=("PASS host python exchange, numpy/torch 2.x (${dt}s)")
	else
		timed_out "host python exchange" $rc
		tail -80 "$LOG/pyhost.txt"
		summary+=("FAIL host python exchange, numpy/torch 2.x (exit $rc, ${dt}s)")
		status=1
	fi
fi

# DLPack 1.3's C exchange API against PyTorch's own (pyexchange/python/devicecheck_exchange.py), and
# test_exchange_api.py on this Python. xharness (pyexchange/internal/xharness) is built for this Python
# when gcc and Python.h are here; without it the C-level timings and test_exchange_api are not run.
if [ -n "$PY" ] && [ -f "$B/libdlpackgo_test.so" ]; then
	XH=$(mktemp -d)
	inc=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
	suf=$("$PY" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
	if command -v gcc >/dev/null 2>&1 && [ -f "$inc/Python.h" ] &&
		gcc -shared -fPIC -O2 -I"$inc" -I"$ROOT/core/cdlpack" -o "$XH/xharness$suf" pyexchange/internal/xharness/xharness.c; then
		export XHARNESS_DIR=$XH
	else
		echo "xharness not built (no gcc or no $inc/Python.h): no C-level timings, no test_exchange_api"
		summary+=("NOT RUN test_exchange_api and C-level exchange timings (no gcc/Python.h)")
	fi
	if budget "exchange API against torch's" 150; then
		t0=$(date +%s)
		(cd pyexchange/python && DLPACKGO_TESTLIB="$B/libdlpackgo_test.so" PYTHONDONTWRITEBYTECODE=1 timeout -k 10 "$T" "$PY" devicecheck_exchange.py)
		rc=$?
		script_verdict "exchange API against torch's" $rc $(($(date +%s) - t0)) "this torch has no __dlpack_c_exchange_api__"
	fi
	if [ -n "${XHARNESS_DIR:-}" ] && budget "test_exchange_api (xharness)" 120; then
		(cd pyexchange/python && DLPACKGO_TESTLIB="$B/libdlpackgo_test.so" PYTHONDONTWRITEBYTECODE=1 timeout -k 10 "$T" "$PY" -m unittest test_exchange_api) >"$LOG/xapi.txt" 2>&1
		rc=$?
		grep -E '^(FAIL|ERROR):|^Ran |^OK|^FAILED' "$LOG/xapi.txt" | head -30
		if [ $rc -eq 0 ]; then
			summary+=("PASS test_exchange_api (xharness)")
		else
			timed_out "test_exchange_api" $rc
			tail -60 "$LOG/xapi.txt"
			summary+=("FAIL test_exchange_api (exit $rc)")
			status=1
		fi
	fi
fi

# safetensorsx against Hugging Face's safetensors package, where this Python has it.
if [ -n "$PY" ] && [ -f "$B/safetensorsx.test" ] && budget "safetensorsx against Python safetensors" 60; then
	(cd safetensorsx && DLPACK_PYTHON="$(command -v "$PY")" timeout -k 10 "$T" "$B/safetensorsx.test" -test.run '^TestHuggingFaceSafetensors$' -test.v -test.count=1) >"$LOG/safetensors.txt" 2>&1
	rc=$?
	grep -E '^(--- |ok|FAIL|PASS)|_test.go:[0-9]+: ' "$LOG/safetensors.txt" | head -20
	if [ $rc -ne 0 ]; then
		timed_out "safetensorsx against Python safetensors" $rc
		tail -30 "$LOG/safetensors.txt"
		summary+=("FAIL safetensorsx against Python safetensors (exit $rc)")
		status=1
	elif grep -q -- '--- SKIP' "$LOG/safetensors.txt"; then
		summary+=("NOT RUN safetensorsx against Python safetensors: not installed for $PY")
	else
		summary+=("PASS safetensorsx against Python safetensors (both ways)")
	fi
fi

# arrowx against pyarrow (devicecheck/check_pyarrow.py): the Arrow C Data Interface both ways,
# Arrow Flight between a Go server and pyarrow.flight, and Parquet files each writes and the other
# reads, where this Python has pyarrow. The library travels compressed (devicebuild.sh) and is
# unpacked next to the logs first.
if [ -n "$PY" ] && [ -f "$B/libdlpackarrow.so.xz" ] && budget "arrowx against pyarrow" 120; then
	t0=$(date +%s)
	"$PY" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
		"$B/libdlpackarrow.so.xz" "$LOG/libdlpackarrow.so"
	DLPACK_ARROW_LIB="$LOG/libdlpackarrow.so" PYTHONDONTWRITEBYTECODE=1 timeout -k 10 "$T" "$PY" devicecheck/check_pyarrow.py
	rc=$?
	script_verdict "arrowx against pyarrow" $rc $(($(date +%s) - t0)) "no pyarrow in $PY" "C Data Interface, Flight, Parquet"
fi

echo
echo "==== device check summary ===="
for s in "${build_warn[@]}"; do echo "WARNING $s"; done
for s in "${summary[@]}"; do echo "$s"; done
if [ $status -eq 0 ]; then echo "ALL PASSED"; else echo "SOME CHECKS FAILED (logs in $LOG)"; fi
exit $status
