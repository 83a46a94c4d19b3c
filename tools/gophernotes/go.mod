// Pins for building the Jupyter kernel gophernotes v0.7.5 with a current Go (see scripts/build-kernel.sh).
// This module holds no Go code: scripts/build-kernel.sh downloads gophernotes at the version pinned here,
// patches a copy of it outside the repository and builds that copy with these requirements.
module github.com/dlpack-go/dlpack/tools/gophernotes

go 1.26.0

// gomacro's type checker predates go/types.Alias: keep the old representation of aliases.
godebug gotypesalias=0

require (
	// gophernotes' own go.mod asks for a gomacro of 2022 that panics on Go ≥ 1.22;
	// this later gomacro commit (absent from the checksum database: go.sum pins it) works.
	github.com/cosmos72/gomacro v0.0.0-20240506194242-2ff796e3da10
	github.com/gopherdata/gophernotes v0.7.5
	golang.org/x/tools v0.52.0
)

require (
	github.com/go-zeromq/goczmq/v4 v4.2.2 // indirect
	github.com/go-zeromq/zmq4 v0.14.1 // indirect
	github.com/gofrs/uuid v4.2.0+incompatible // indirect
	github.com/mattn/go-runewidth v0.0.15 // indirect
	github.com/peterh/liner v1.2.2 // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
