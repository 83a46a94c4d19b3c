package ggufx_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
)

// sentinels are ggufx's own: none of their texts may lead a message before its cause (the
// tests of this package hold the messages they provoke to errstest.Check with them).
var sentinels = []error{
	ggufx.ErrFormat, ggufx.ErrHeader, ggufx.ErrVersion, ggufx.ErrLayout, ggufx.ErrTruncated, ggufx.ErrType,
	ggufx.ErrQuantized, ggufx.ErrNotFound, ggufx.ErrValueType, ggufx.ErrName, ggufx.ErrClosed, ggufx.ErrSplit,
}

// TestErrorMessages provokes ggufx's refusals (malformed, truncated and hostile headers, bad
// layouts, quantized and unknown types, closed files, metadata of another type, tensors it
// cannot write, inconsistent split models) and holds each message to the module's rule: what
// was wrong first, each package prefix once, errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	big := uint64(1) << 62
	parse := func(b []byte) func() error {
		return func() error { _, err := ggufx.ParseHeader(b); return err }
	}
	open := func(b []byte) func() error {
		return func() error { _, err := ggufx.Open(file(t, b)); return err }
	}
	f, err := ggufx.Open(file(t, valid()))
	require.NoError(t, err)
	defer f.Close()
	closed, err := ggufx.Open(file(t, valid()))
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	md := f.Metadata()
	mixed, err := ggufx.Open(file(t, mixedFile()))
	require.NoError(t, err)
	defer mixed.Close()
	released := core.MustNew(core.Float32, 1)
	released.Release()
	nan := core.MustNew(core.Float32, 1, 32)
	v, _ := nan.Float32s()
	v[5] = float32(math.NaN())
	write := func(es ...ggufx.Entry) func() error {
		return func() error { return ggufx.Write(&bytes.Buffer{}, nil, es) }
	}
	split := func(fix func(no int, md *ggufx.Metadata), rm int) func() error {
		return func() error {
			dir := t.TempDir()
			first := writeShards(t, dir, 3, fix)
			if rm >= 0 {
				require.NoError(t, os.Remove(ggufx.SplitPath(filepath.Join(dir, "model"), rm, 3)))
			}
			s, err := ggufx.OpenSplit(first)
			if err == nil {
				s.Close()
			}
			return err
		}
	}
	cases := []errstest.Case{
		{Name: "empty file", Want: ggufx.ErrTruncated, Err: open(nil)},
		{Name: "magic", Want: ggufx.ErrHeader, Err: parse(append([]byte("GGML"), valid()[4:]...))},
		{Name: "version 1", Want: ggufx.ErrVersion, Err: open(start(1, 0, 0).b)},
		{Name: "big-endian", Want: ggufx.ErrVersion, Err: parse(start(3<<24, 0, 0).b)},
		{Name: "kv count", Want: ggufx.ErrHeader, Err: parse(start(3, 0, big).b)},
		{Name: "key length", Want: ggufx.ErrTruncated, Err: parse(start(3, 0, 1).u64(big).bytes(make([]byte, 16)...).b)},
		{Name: "value type", Want: ggufx.ErrHeader, Err: parse(start(3, 0, 1).str("k").u32(13).b)},
		{Name: "depth", Want: ggufx.ErrHeader, Err: parse(nested(ggufx.MaxDepth + 1))},
		{Name: "key twice", Want: ggufx.ErrHeader, Err: parse(start(3, 0, 2).str("k").u32(0).u8(1).str("k").u32(0).u8(1).b)},
		{Name: "alignment 12", Want: ggufx.ErrHeader, Err: parse(start(3, 0, 1).str("general.alignment").u32(4).u32(12).b)},
		{Name: "ggml type", Want: ggufx.ErrType, Err: func() error { _, err := mixed.Tensor("fork157"); return err }},
		{Name: "removed type", Want: ggufx.ErrType, Err: func() error { _, err := mixed.Dequantize("removed", core.Float32); return err }},
		{Name: "fork's layout", Want: ggufx.ErrType, Err: func() error { _, err := mixed.Tensor("forkq2"); return err }},
		{Name: "row", Want: ggufx.ErrType, Err: func() error { _, err := mixed.Dequantize("q2row", core.Float32); return err }},
		{Name: "unknown past end", Want: ggufx.ErrLayout, Err: parse(start(3, 1, 0).tensor("t", 99, 0, 1).b)},
		{Name: "past end", Want: ggufx.ErrLayout, Err: open(start(3, 1, 0).tensor("t", 0, 0, 4).data(32, 15, nil).b)},
		{Name: "overlap", Want: ggufx.ErrLayout, Err: parse(start(3, 2, 0).tensor("a", 0, 0, 16).tensor("b", 0, 32, 16).data(32, 96, nil).b)},
		{Name: "missing file", Want: os.ErrNotExist, Err: func() error { _, err := ggufx.Open("/no/such/file.gguf"); return err }},
		{Name: "Tensor of a quantized tensor", Want: ggufx.ErrQuantized, Err: func() error { _, err := f.Tensor("q"); return err }},
		{Name: "no such tensor", Want: ggufx.ErrNotFound, Err: func() error { _, err := f.Tensor("nope"); return err }},
		{Name: "closed", Want: ggufx.ErrClosed, Err: func() error { _, err := closed.Tensor("w"); return err }},
		{Name: "Dequantize to float64", Want: ggufx.ErrType, Err: func() error { _, err := f.Dequantize("q", core.Float64); return err }},
		{Name: "metadata of another type", Want: ggufx.ErrValueType, Err: func() error { _, err := md.Uint32("general.name"); return err }},
		{Name: "no such metadata", Want: ggufx.ErrNotFound, Err: func() error { _, err := md.String("missing"); return err }},
		{Name: "Set of a Go int", Want: ggufx.ErrValueType, Err: func() error { return (&ggufx.Metadata{}).Set("k", 1) }},
		{Name: "write: nil", Want: core.ErrNil, Err: write(ggufx.Plain("a", nil))},
		{Name: "write: released", Want: core.ErrReleased, Err: write(ggufx.Plain("a", released))},
		{Name: "write: uint8", Want: ggufx.ErrType, Err: write(ggufx.Plain("a", core.MustNew(core.Uint8, 2)))},
		{Name: "write: NaN in Q8_0", Want: ggufx.ErrType, Err: write(ggufx.Quantized("a", nan, ggufx.Q8_0))},
		{Name: "split: missing shard", Want: os.ErrNotExist, Err: split(nil, 2)},
		{Name: "split: count of another type", Want: ggufx.ErrSplit, Err: split(func(no int, md *ggufx.Metadata) { md.Set(ggufx.SplitCountKey, uint32(3)) }, -1)},
		{Name: "split: shard number", Want: ggufx.ErrSplit, Err: split(func(no int, md *ggufx.Metadata) { md.Set(ggufx.SplitNoKey, uint16(no%2)) }, -1)},
		{Name: "split: tensor twice", Want: ggufx.ErrSplit, Err: split(func(no int, md *ggufx.Metadata) {
			if no == 2 {
				md.Set("dup", true)
			}
		}, -1)},
	}
	errstest.Run(t, `^ggufx: `, cases, sentinels...)
}
