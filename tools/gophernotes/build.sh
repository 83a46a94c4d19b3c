#!/usr/bin/env bash
# Builds the gophernotes Jupyter kernel (v0.7.5) so that it works with a current Go, and
# installs a kernel spec named "go-dlpack" that notebooks in examples/notebooks use.
#
# gophernotes v0.7.5 as released panics on Go >= 1.22. What makes it work:
#   - the gomacro commit and golang.org/x/tools version pinned in go.mod beside this script,
#     with "godebug gotypesalias=0" there;
#   - jsoner.patch: the JSONer proxy of x_package.go must return map[string]interface{}, as
#     the JSONer interface it stands for does.
# The repository carries only those pins and the patch. This script downloads gophernotes
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

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
home=${DLPACK_GOPHERNOTES_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-gophernotes}
kernel_name=go-dlpack
kernels_dir=${JUPYTER_DATA_DIR:-$HOME/.local/share/jupyter}/kernels

gobin=$(command -v go) || { echo "build.sh: go is not on PATH" >&2; exit 1; }
goroot=$("$gobin" env GOROOT)
go="$goroot/bin/go"
export GOTOOLCHAIN=local CGO_ENABLED=1
# go.sum pins every module (gomacro is not in the checksum database); nothing new may be added.
export GOFLAGS=-mod=readonly

stamp=$(cat "$here/go.mod" "$here/go.sum" "$here/jsoner.patch" "$here/build.sh" | sha256sum | cut -c1-16)
stamp="$stamp $("$go" version)"
bin="$home/bin/gophernotes"

if [[ -x "$bin" && -f "$home/stamp" && "$(cat "$home/stamp")" == "$stamp" ]]; then
	echo "build.sh: gophernotes is up to date in $bin" >&2
else
	echo "build.sh: building gophernotes v0.7.5 into $bin" >&2
	# The version to patch is the one go.mod requires.
	(cd "$here" && "$go" mod download github.com/gopherdata/gophernotes)
	src=$(cd "$here" && "$go" list -m -f '{{.Dir}}' github.com/gopherdata/gophernotes)
	[[ -f "$src/x_package.go" ]] || { echo "build.sh: no gophernotes source in '$src'" >&2; exit 1; }

	work=$(mktemp -d)
	trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
	cp -R "$src" "$work/gophernotes"
	chmod -R u+w "$work/gophernotes"
	# git is there wherever the repository was cloned; patch(1) may not be
	if command -v git >/dev/null; then
		(cd "$work/gophernotes" && git apply -p1 "$here/jsoner.patch")
	else
		patch --quiet --directory="$work/gophernotes" --strip=1 --forward <"$here/jsoner.patch"
	fi
	grep -q 'JSON() map\[string\]interface{}' "$work/gophernotes/x_package.go" ||
		{ echo "build.sh: jsoner.patch did not apply" >&2; exit 1; }

	# Build with this directory's go.mod as the main module (its pins and its godebug line),
	# gophernotes replaced by the patched copy.
	cp "$here/go.mod" "$here/go.sum" "$work/"
	(cd "$work" && "$go" mod edit -replace github.com/gopherdata/gophernotes=./gophernotes &&
		"$go" build -o "$work/gophernotes.bin" github.com/gopherdata/gophernotes)
	"$go" version -m "$work/gophernotes.bin" | grep -q 'DefaultGODEBUG=.*gotypesalias=0' ||
		{ echo "build.sh: the binary lacks gotypesalias=0" >&2; exit 1; }

	mkdir -p "$home/bin"
	mv -f "$work/gophernotes.bin" "$bin"
	cp -f "$src/kernel/logo-32x32.png" "$home/bin/logo-32x32.png"
	chmod u+w "$home/bin/logo-32x32.png"
	echo "$stamp" >"$home/stamp"
fi

# The kernel spec. gomacro compiles each import cell into a plugin in a fresh module under
# $GOPATH/src/gomacro.imports; an import path that starts with ./ or ../ names a directory
# on disk, and gomacro adds a replace directive for the module that holds it. Notebooks
# therefore import this repository's packages by paths relative to their own directory
# (Jupyter starts the kernel there), and always get the local checkout.
# gomacro then runs "go get github.com/dlpack-go/dlpack/<pkg>" in the plugin's module. The go
# command asks for a version of the module even though it is replaced; when the answer is
# "not found" it settles for v0.0.0-00010101000000-000000000000, i.e. the replacement. Direct
# (VCS) lookups end in a network error instead, so the module must not be GONOPROXY:
# GOPRIVATE (no checksum database for it) with GONOPROXY=none (ask the proxy, which does not
# have it).
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
    "GOFLAGS": "-mod=mod"
  }
}
EOF
echo "build.sh: kernel spec $kernel_name in $kernels_dir/$kernel_name" >&2
echo "$bin"
