package parsercheck_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/ggufx"
)

// tensorCases are tensors of every type ggufx writes (the plain F32, F16, BF16, F64, I8, I16,
// I32, I64 and the quantized Q8_0, Q4_0) at ranks 1 to 4, each type also from a transposed
// view and as an empty tensor. The shapes make sizes that are not multiples of the alignment,
// so that the padding between tensors is checked too.
func tensorCases() []tensorCase {
	var cs []tensorCase
	for _, typ := range []ggufx.Type{ggufx.F32, ggufx.F16, ggufx.BF16, ggufx.F64, ggufx.I8, ggufx.I16, ggufx.I32, ggufx.I64} {
		for _, shape := range [][]int64{{7}, {3, 5}, {2, 3, 5}, {2, 1, 3, 5}} {
			cs = append(cs, tensorCase{typ: typ, shape: shape})
		}
		cs = append(cs, tensorCase{typ: typ, shape: []int64{5, 3}, transposed: true}, tensorCase{typ: typ, shape: []int64{0, 4}})
	}
	for _, typ := range []ggufx.Type{ggufx.Q8_0, ggufx.Q4_0} {
		for _, shape := range [][]int64{{64}, {3, 32}, {2, 2, 64}, {1, 2, 3, 32}} {
			cs = append(cs, tensorCase{typ: typ, shape: shape})
		}
		cs = append(cs, tensorCase{typ: typ, shape: []int64{3, 32}, transposed: true}, tensorCase{typ: typ, shape: []int64{0, 32}})
	}
	return cs
}

// alignments are general.alignment values to write (0: no key, the default 32).
var alignments = []uint32{0, 8, 16, 32, 64, 256, 4096}

// tensorFile writes every tensor case, with general.alignment a unless a is 0, and reads it.
func tensorFile(t *testing.T, a uint32, m int) ([]ggufx.Entry, [][]byte, int64, written) {
	t.Helper()
	md := &ggufx.Metadata{}
	align := int64(ggufx.DefaultAlignment)
	if a != 0 {
		require.NoError(t, md.Set(ggufx.AlignmentKey, a))
		align = int64(a)
	}
	require.NoError(t, md.Set("general.architecture", "llama"))
	es, want := entries(t, tensorCases())
	return es, want, align, writeAndRead(t, md, es, readModes[m].opts...)
}

func alignName(a uint32) string {
	if a == 0 {
		return "align=default"
	}
	return fmt.Sprintf("align=%d", a)
}

// TestTensorInfosAgree writes tensors of every type and rank at every alignment and requires
// that gguf-parser-go reads, for each, ggufx's name, rank, dimensions (innermost first: the
// core tensor's C-order shape reversed), ggml type number and name, block size and bytes,
// offset (a multiple of the alignment), byte size and element count, and the data section's
// start, the file's size and its metadata as ggufx.Open reports them.
func TestTensorInfosAgree(t *testing.T) {
	for _, a := range alignments {
		for m, mode := range readModes {
			t.Run(alignName(a)+"/"+mode.name, func(t *testing.T) {
				es, _, align, w := tensorFile(t, a, m)
				assertHeader(t, align, w)
				assertMetadata(t, w.f.Metadata(), w)
				assertTensorInfos(t, es, align, w)
			})
		}
	}
}

// TestTensorDataAtParserOffsets requires that the bytes at the absolute offset gguf-parser-go
// computes for each tensor (data section start + tensor offset, for its byte size) are the
// bytes of ggufx's File.Blocks for every type and of File.Tensor for plain types, and that
// those are the written tensor's elements in C order (transposed views included).
func TestTensorDataAtParserOffsets(t *testing.T) {
	for _, a := range alignments {
		for m, mode := range readModes {
			t.Run(alignName(a)+"/"+mode.name, func(t *testing.T) {
				es, want, _, w := tensorFile(t, a, m)
				assertData(t, es, want, w)
			})
		}
	}
}
