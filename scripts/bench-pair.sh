#!/usr/bin/env bash
# bench-pair.sh: compares the speed of onnxx's runs at two revisions, in pairs of processes.
#
#   bash scripts/bench-pair.sh [-n SETS] BEFORE [AFTER]
#
# BEFORE and AFTER are git revisions (AFTER: the work tree as it is). It builds the test binary
# of onnxx/ortgo at each, then runs BenchmarkSmallModelRounds SETS times (default 20) with each,
# alternating, so that both see the same drift of a shared machine. Each process reports every
# path's median ratio to onnxruntime_go's run in the same rounds; this prints, per path, the
# median over the processes of each revision, CPU time and wall time. A ratio below 1 is faster
# than onnxruntime_go with reused tensors.
set -euo pipefail
sets=20
if [ "${1:-}" = -n ]; then sets=$2; shift 2; fi
before=${1:?usage: bench-pair.sh [-n SETS] BEFORE [AFTER]}
after=${2:-}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/src-before" >/dev/null 2>&1 || true; git -C "$root" worktree remove --force "$work/src-after" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

build() { # build NAME REV: the ortgo test binary of REV (empty: the work tree) as $work/NAME.test
	local src=$root
	if [ -n "$2" ]; then
		src=$work/src-$1
		git -C "$root" worktree add -q --detach "$src" "$2"
	fi
	(cd "$src/onnxx/ortgo" && go test -c -o "$work/$1.test" .)
}
build before "$before"
build after "$after"

printf '%-30s %8s %8s %13s   (ratio to onnxruntime_go: medians of %d processes each)\n' path before after after/before "$sets"
for i in $(seq "$sets"); do
	for side in before after; do
		(cd "$root/onnxx/ortgo" && "$work/$side.test" -test.run '^$' -test.bench '^BenchmarkSmallModelRounds$' -test.benchtime=1x) |
			awk -v side="$side" '/^BenchmarkSmallModelRounds/ { for (i = 3; i < NF; i += 2) if ($(i+1) ~ /-ratio$/) print side, $(i+1), $i }'
	done
done | awk '
	{ k = $1 " " $2; v[k, ++n[k]] = $3; paths[$2] = 1 }
	function median(k,   m, i, j, t, a) {
		m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
		for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
		return a[int((m + 1) / 2)]
	}
	END {
		for (p in paths) printf "%-30s %8.3f %8.3f %13.3f\n", p, median("before " p), median("after " p), median("after " p) / median("before " p)
	}' | sort
