#!/usr/bin/env bash
# Builds the gophernotes Jupyter kernel (v0.7.5) so that it works with a current Go, and
# installs a kernel spec named "go-dlpack" that notebooks in examples/notebooks use.
#
# gophernotes v0.7.5 as released panics on Go >= 1.22. What makes it work:
#   - the gomacro commit and golang.org/x/tools version pinned in go.mod beside this script,
#     with "godebug gotypesalias=0" there;
#   - jsoner.patch: the JSONer proxy of x_package.go must return map[string]interface{}, as
#     the JSONer interface it stands for does.
# And what makes it pleasant (gomacro.patch, on gomacro's import code):
#   - an import cell prints nothing but errors: gomacro's "warning: skipping import of func
#     iter.Pull ... generic functions are not supported" lines (one per generic function or type
#     of every package a plugin pulls in) are gone; the notebooks README says it once;
#   - a notebook in a folder with a go.mod (or under one) gets that module's say: its module
#     path resolves to its folder, and its require and replace directives hold in the plugins
#     gomacro builds (a required module keeps the version named, where gomacro would "go get"
#     the latest);
#   - GOMACRO_REPLACE="module=dir ..." in the kernel's environment resolves imports of those
#     modules by their module path to those directories, unless that go.mod names them (the
#     kernel spec sets it to this checkout for github.com/dlpack-go/dlpack), as gomacro already
#     did for imports by relative path.
# The repository carries only those pins and the patches. This script downloads gophernotes
# through the Go module proxy (go.sum checks what comes back), patches a copy of it in a
# temporary directory and builds that copy with the pinned requirements.
#
# It is idempotent: the binary is cached under $DLPACK_GOPHERNOTES_HOME (default
# ~/.cache/dlpack-gophernotes) with a stamp of everything it was built from, and rebuilt only
# when that changes. The kernel spec is rewritten every time (it is tiny).
#
# Needs: Go (the toolchain that builds the kernel also builds the plugins the kernel compiles
# for each import cell, so it must stay installed), a C compiler (Go plugins need cgo), and
# Jupyter (Debian 12: python3-jupyter-client python3-nbclient python3-nbformat
# python3-ipykernel jupyter-nbconvert) to use the kernel.
#
# Prints the path of the kernel binary on its last line.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools/gophernotes" && pwd)
home=${DLPACK_GOPHERNOTES_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-gophernotes}
kernel_name=go-dlpack
kernels_dir=${JUPYTER_DATA_DIR:-$HOME/.local/share/jupyter}/kernels

gobin=$(command -v go) || { echo "build-kernel.sh: go is not on PATH" >&2; exit 1; }
goroot=$("$gobin" env GOROOT)
go="$goroot/bin/go"
export GOTOOLCHAIN=local CGO_ENABLED=1
# go.sum pins every module (gomacro is not in the checksum database); nothing new may be added.
# The kernel is its own module (tools/gophernotes), outside the repository's go.work.
export GOFLAGS=-mod=readonly GOWORK=off

repo=$(cd "$here/../.." && pwd)
stamp=$(cat "$here/go.mod" "$here/go.sum" "$here/jsoner.patch" "$here/gomacro.patch" "$repo/scripts/build-kernel.sh" | sha256sum | cut -c1-16)
stamp="$stamp $("$go" version)"
bin="$home/bin/gophernotes"

if [[ -x "$bin" && -f "$home/stamp" && "$(cat "$home/stamp")" == "$stamp" ]]; then
	echo "build-kernel.sh: gophernotes is up to date in $bin" >&2
else
	echo "build-kernel.sh: building gophernotes v0.7.5 into $bin" >&2
	# The version to patch is the one go.mod requires.
	(cd "$here" && "$go" mod download github.com/gopherdata/gophernotes)
	src=$(cd "$here" && "$go" list -m -f '{{.Dir}}' github.com/gopherdata/gophernotes)
	[[ -f "$src/x_package.go" ]] || { echo "build-kernel.sh: no gophernotes source in '$src'" >&2; exit 1; }

	work=$(mktemp -d)
	trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
	cp -R "$src" "$work/gophernotes"
	chmod -R u+w "$work/gophernotes"
	gomacro=$(cd "$here" && "$go" mod download github.com/cosmos72/gomacro && "$go" list -m -f '{{.Dir}}' github.com/cosmos72/gomacro)
	[[ -f "$gomacro/base/genimport/importer.go" ]] || { echo "build-kernel.sh: no gomacro source in '$gomacro'" >&2; exit 1; }
	cp -R "$gomacro" "$work/gomacro"
	chmod -R u+w "$work/gomacro"
	# git is there wherever the repository was cloned; patch(1) may not be
	apply() { # dir patch
		if command -v git >/dev/null; then
			(cd "$1" && git apply -p1 "$2")
		else
			patch --quiet --directory="$1" --strip=1 --forward <"$2"
		fi
	}
	apply "$work/gophernotes" "$here/jsoner.patch"
	grep -q 'JSON() map\[string\]interface{}' "$work/gophernotes/x_package.go" ||
		{ echo "build-kernel.sh: jsoner.patch did not apply" >&2; exit 1; }
	apply "$work/gomacro" "$here/gomacro.patch"
	grep -q GOMACRO_REPLACE "$work/gomacro/base/genimport/importer.go" ||
		{ echo "build-kernel.sh: gomacro.patch did not apply" >&2; exit 1; }

	# Build with this directory's go.mod as the main module (its pins and its godebug line),
	# gophernotes replaced by the patched copy.
	cp "$here/go.mod" "$here/go.sum" "$work/"
	(cd "$work" && "$go" mod edit -replace github.com/gopherdata/gophernotes=./gophernotes \
		-replace github.com/cosmos72/gomacro=./gomacro &&
		"$go" build -o "$work/gophernotes.bin" github.com/gopherdata/gophernotes)
	"$go" version -m "$work/gophernotes.bin" | grep -q 'DefaultGODEBUG=.*gotypesalias=0' ||
		{ echo "build-kernel.sh: the binary lacks gotypesalias=0" >&2; exit 1; }

	mkdir -p "$home/bin"
	mv -f "$work/gophernotes.bin" "$bin"
	cp -f "$src/kernel/logo-32x32.png" "$home/bin/logo-32x32.png"
	chmod u+w "$home/bin/logo-32x32.png"
	echo "$stamp" >"$home/stamp"
fi

# The kernel spec. gomacro compiles each import cell into a plugin in a fresh module under
# $GOPATH/src/gomacro.imports; an import path that starts with ./ or ../ names a directory
# on disk, and gomacro adds a replace directive for the module that holds it.
# Imports by module path (github.com/dlpack-go/dlpack/core) get the same replace through
# GOMACRO_REPLACE (gomacro.patch), so a notebook in any folder runs this checkout.
# gomacro then runs "go get github.com/dlpack-go/dlpack/<pkg>" in the plugin's module. The go
# command asks for a version of the module even though it is replaced; when the answer is
# "not found" it settles for v0.0.0-00010101000000-000000000000, i.e. the replacement. Direct
# (VCS) lookups end in a network error instead, so the module must not be GONOPROXY:
# GOPRIVATE (no checksum database for it) with GONOPROXY=none (ask the proxy, which does not
# have it).
# Cells are built as plugins (-buildmode=plugin), where the assembly of pierrec/lz4/v4 v4.1.33
# (arrow-go v18.9's IPC compression, imported by the Flight notebook) does not link ("R15 is
# clobbered"): the kernel builds with -tags=noasm, which every such package honours with its
# portable code.
mkdir -p "$kernels_dir/$kernel_name"
cp -f "$home/bin/logo-32x32.png" "$kernels_dir/$kernel_name/logo-32x32.png"
cat >"$kernels_dir/$kernel_name/kernel.json" <<EOF
{
  "argv": ["$bin", "{connection_file}"],
  "display_name": "Go (gophernotes, dlpack-go)",
  "language": "go",
  "env": {
    "GOROOT": "$goroot",
    "PATH": "$goroot/bin:$PATH",
    "GOTOOLCHAIN": "local",
    "CGO_ENABLED": "1",
    "GOPRIVATE": "github.com/dlpack-go/dlpack",
    "GONOPROXY": "none",
    "GOFLAGS": "-mod=mod -tags=noasm",
    "GOMACRO_REPLACE": "github.com/dlpack-go/dlpack=$repo"
  }
}
EOF
echo "build-kernel.sh: kernel spec $kernel_name in $kernels_dir/$kernel_name" >&2
echo "$bin"
