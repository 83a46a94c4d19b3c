#!/usr/bin/env bash
# conformance.sh runs the conformance suite, whose every row compares dlpack-go with an implementation
# that is not ours (tools/conformance lists the rows and their tests), and writes the tables of
# docs/conformance.md from its report: run it at each release and commit the file. With --check (as
# scripts/test.sh runs it) it writes nothing and fails unless the file's tables equal the report's, so
# a table that no longer tells the truth fails the README's test command. The references install with
# scripts/setup.sh; the suite's report (go test -json) is kept in artifacts/conformance.json.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:---write}" in
--write) mode=-write ;;
--check) mode=-check ;;
*) echo "usage: scripts/conformance.sh [--write|--check]" >&2; exit 2 ;;
esac
read -r _ pattern pkgs < <(go run ./tools/conformance -tests)
mkdir -p artifacts
status=0
# shellcheck disable=SC2086 # pkgs is a list of package patterns
CI="${CI:-}" go test -count=1 -json -timeout 30m -run "$pattern" $pkgs >artifacts/conformance.json || status=$?
go run ./tools/conformance "$mode" docs/conformance.md <artifacts/conformance.json || status=$?
if [ "$status" -ne 0 ]; then
	echo "conformance: the suite failed, or its tables disagree (details in artifacts/conformance.json):" >&2
	grep '"Action":"fail"' artifacts/conformance.json | head -20 >&2 || true
	exit "$status"
fi
