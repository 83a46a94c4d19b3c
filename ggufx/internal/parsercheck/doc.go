// Package parsercheck is the cross-check of package ggufx against an independent reader of GGUF
// files, github.com/gpustack/gguf-parser-go: its tests write files with ggufx.WriteFile, parse
// them with gguf_parser.ParseGGUFFile, and require that the parser reads every metadata key,
// value type and value, every tensor info (name, ggml type, dimensions, offset, byte size) and
// the data section's start as ggufx.Open reports them, and that the bytes at the parser's
// offsets are the bytes File.Tensor and File.Blocks return.
//
// It holds no code: only its tests matter. It is a module of its own so that the parser (and
// what it requires) never becomes a dependency of dlpack-go; run it from this directory with
// GOWORK=off go test ./...
//
// The parser writes nothing, so the check runs one way only: ggufx writes, both read. Where
// the parser departs from the format (and from llama.cpp's reader), the tests name the
// departure in TestParserDepartures and keep it out of the comparisons: it trims white space
// around every string it reads (keys, values, tensor names), it refuses tensors of rank 0,
// and it drops the key split.no.
package parsercheck
