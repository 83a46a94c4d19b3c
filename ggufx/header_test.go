package ggufx_test

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/ggufx"
)

// valid is a small well-formed file: two metadata pairs, an F32 tensor of ne [3, 2] and a Q4_0
// tensor of one block.
func valid() []byte {
	r := start(3, 2, 2)
	r.str("general.name").u32(8).str("tiny")
	r.str("a.list").u32(9).u32(4).u64(2).u32(7).u32(9)
	r.tensor("w", 0, 0, 3, 2)
	r.tensor("q", 2, 32, 32)
	r.data(32, 24, func(i int) byte { return byte(i) })
	r.data(32, 18, nil)
	return r.b
}

func TestParseHeaderValid(t *testing.T) {
	h, err := ggufx.ParseHeader(valid())
	require.NoError(t, err)
	assert.Equal(t, uint32(3), h.Version)
	assert.Equal(t, int64(32), h.Alignment)
	assert.Equal(t, []string{"w", "q"}, h.Names())
	name, err := h.Metadata.String("general.name")
	require.NoError(t, err)
	assert.Equal(t, "tiny", name)
	l, err := h.Metadata.Uint32s("a.list")
	require.NoError(t, err)
	assert.Equal(t, []uint32{7, 9}, l)
	w, err := h.Info("w")
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 2}, w.Dims)
	assert.Equal(t, []int64{2, 3}, w.Shape())
	assert.Equal(t, int64(24), w.Size)
	q, err := h.Info("q")
	require.NoError(t, err)
	assert.Equal(t, ggufx.Q4_0, q.Type)
	assert.Equal(t, int64(18), q.Size)
	assert.Equal(t, int64(1), q.Blocks())
	assert.Zero(t, h.DataOffset%32)
	assert.Equal(t, int64(32+18), h.DataLen)
}

// Every prefix of a valid file is refused with ErrFormat, none panics.
func TestParseHeaderTruncated(t *testing.T) {
	b := valid()
	h, err := ggufx.ParseHeader(b)
	require.NoError(t, err)
	for n := range int(h.DataOffset + h.DataLen) {
		_, err := ggufx.ParseHeader(b[:n])
		require.ErrorIs(t, err, ggufx.ErrFormat, "prefix of %d bytes", n)
	}
}

func TestParseHeaderHostile(t *testing.T) {
	big := uint64(1) << 62
	for _, tc := range []struct {
		name string
		b    []byte
		want error
		msg  string
	}{
		{"magic", append([]byte("GGML"), valid()[4:]...), ggufx.ErrHeader, `magic "GGML"`},
		{"version 1", start(1, 0, 0).b, ggufx.ErrVersion, "version 1"},
		{"version 4", start(4, 0, 0).b, ggufx.ErrVersion, "version 4"},
		{"big-endian", start(3<<24, 0, 0).b, ggufx.ErrVersion, "big-endian"},
		{"kv count", start(3, 0, big).b, ggufx.ErrHeader, "4611686018427387904 metadata pairs"},
		{"tensor count", start(3, big, 0).b, ggufx.ErrHeader, "4611686018427387904 tensors"},
		{"key length", start(3, 0, 1).u64(big).bytes(make([]byte, 16)...).b, ggufx.ErrTruncated, "a string of 4611686018427387904 bytes"},
		{"string length", start(3, 0, 1).str("k").u32(8).u64(1 << 40).b, ggufx.ErrTruncated, `metadata "k"`},
		{"value type", start(3, 0, 1).str("k").u32(13).b, ggufx.ErrHeader, "value type 13"},
		{"array type", start(3, 0, 1).str("k").u32(9).u32(77).u64(0).b, ggufx.ErrHeader, "array element type 77"},
		{"array count", start(3, 0, 1).str("k").u32(9).u32(12).u64(big).b, ggufx.ErrHeader, "array of 4611686018427387904 float64"},
		{"string array count", start(3, 0, 1).str("k").u32(9).u32(8).u64(1 << 40).u64(0).b, ggufx.ErrHeader, "array of 1099511627776 string"},
		{"depth", nested(ggufx.MaxDepth + 1), ggufx.ErrHeader, "nested more than 8"},
		{"bool", start(3, 0, 1).str("k").u32(7).u8(2).b, ggufx.ErrHeader, "bool byte 2"},
		{"bool array", start(3, 0, 1).str("k").u32(9).u32(7).u64(2).u8(1).u8(5).b, ggufx.ErrHeader, "is 5, not 0 or 1"},
		{"key twice", start(3, 0, 2).str("k").u32(0).u8(1).str("k").u32(0).u8(1).b, ggufx.ErrHeader, `"k" given twice`},
		{"alignment type", start(3, 0, 1).str("general.alignment").u32(10).u64(32).b, ggufx.ErrHeader, "general.alignment is uint64 32"},
		{"alignment 12", start(3, 0, 1).str("general.alignment").u32(4).u32(12).b, ggufx.ErrHeader, "is 12, not a positive multiple of 8"},
		{"alignment 0", start(3, 0, 1).str("general.alignment").u32(4).u32(0).b, ggufx.ErrHeader, "is 0"},
		{"rank", start(3, 1, 0).tensor("t", 0, 0, 1, 1, 1, 1, 1).b, ggufx.ErrHeader, `"t" has 5 dimensions`},
		{"dim", start(3, 1, 0).tensor("t", 0, 0, 1<<63).b, ggufx.ErrLayout, "dimension 0 is 9223372036854775808"},
		{"elements", start(3, 1, 0).tensor("t", 0, 0, 1<<32, 1<<32).b, ggufx.ErrLayout, "overflow 2^63 elements"},
		{"bytes", start(3, 1, 0).tensor("t", 0, 0, 1<<40, 1<<22).b, ggufx.ErrLayout, "overflow 2^63 bytes"},
		{"offset", start(3, 1, 0).tensor("t", 0, 1<<63, 1).b, ggufx.ErrLayout, "offset 9223372036854775808"},
		{"tensor twice", start(3, 2, 0).tensor("t", 0, 0, 1).tensor("t", 0, 32, 1).data(32, 36, nil).b, ggufx.ErrHeader, `tensor "t" given twice`},
		{"unaligned", start(3, 1, 0).tensor("t", 0, 8, 1).data(32, 16, nil).b, ggufx.ErrLayout, "offset 8 is not a multiple of the alignment 32"},
		{"past end", start(3, 1, 0).tensor("t", 0, 0, 4).data(32, 15, nil).b, ggufx.ErrLayout, `"t": data [0, 16) of the data section runs past its end (15 bytes`},
		{"empty far past end", start(3, 2, 0).tensor("e", 0, 1<<40, 0).tensor("t", 0, 0, 4).data(32, 15, nil).b, ggufx.ErrLayout, `"t"`},
		{"far past end", start(3, 1, 0).tensor("t", 0, 1<<62, 4).data(32, 15, nil).b, ggufx.ErrLayout, "starts past its end"},
		{"overlap", start(3, 2, 0).tensor("a", 0, 0, 16).tensor("b", 0, 32, 16).data(32, 96, nil).b, ggufx.ErrLayout, `"a" [0, 64) and "b" [32, 96) overlap`},
		{"same offset", start(3, 2, 0).tensor("a", 0, 0, 1).tensor("b", 1, 0, 1).data(32, 4, nil).b, ggufx.ErrLayout, "overlap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ggufx.ParseHeader(tc.b)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
			assert.NoError(t, errstest.Check(err, sentinels...))
			if !errors.Is(err, ggufx.ErrFormat) && !errors.Is(err, ggufx.ErrType) {
				t.Fatalf("no sentinel: %v", err)
			}
		})
	}
}

// nested is a file whose one value is an array nested depth deep.
func nested(depth int) []byte {
	r := start(3, 0, 1).str("k").u32(9)
	for range depth - 1 {
		r.u32(9).u64(1)
	}
	return r.u32(0).u64(1).u8(7).b
}

func TestParseHeaderNested(t *testing.T) {
	h, err := ggufx.ParseHeader(nested(ggufx.MaxDepth))
	require.NoError(t, err)
	v, ok := h.Metadata.Get("k")
	require.True(t, ok)
	for range ggufx.MaxDepth - 1 {
		require.Equal(t, ggufx.TypeArray, v.Type())
		require.Equal(t, ggufx.TypeArray, v.ElemType())
		require.Equal(t, 1, v.Len())
		v, ok = v.Index(0)
		require.True(t, ok)
	}
	assert.Equal(t, []uint8{7}, v.Any())
}

// Version 2 reads as 3 does; general.alignment moves the data section; tensors may come in any
// order of offsets and leave gaps, as long as they are aligned and do not overlap.
func TestParseHeaderVersion2Alignment(t *testing.T) {
	r := start(2, 2, 1).str("general.alignment").u32(4).u32(64)
	r.tensor("late", 0, 64, 2).tensor("early", 0, 0, 2)
	r.data(64, 72, nil)
	h, err := ggufx.ParseHeader(r.b)
	require.NoError(t, err)
	assert.Equal(t, uint32(2), h.Version)
	assert.Equal(t, int64(64), h.Alignment)
	assert.Zero(t, h.DataOffset%64)
	assert.Equal(t, int64(72), h.DataLen)
}

// What the specification allows and llama.cpp's writer never makes still reads: an alignment
// that is a multiple of 8 but not a power of 2, and an empty tensor whose offset lies past the
// end (it has no bytes to find).
func TestParseHeaderLenient(t *testing.T) {
	r := start(3, 2, 1).str("general.alignment").u32(4).u32(24)
	r.tensor("e", 0, 24<<40, 0, 4).tensor("t", 0, 24, 2)
	r.data(24, 32, nil)
	h, err := ggufx.ParseHeader(r.b)
	require.NoError(t, err)
	assert.Equal(t, int64(24), h.Alignment)
	assert.Zero(t, h.DataOffset%24)
	assert.Equal(t, int64(32), h.DataLen)
}

// An empty tensor whose rows a type's blocks do not divide opens with the tensor's ErrType, not a
// division by zero where the message guesses a fork's block layout (the fuzzer found it: its file
// has type 34, ne [0x3030303030303020, 0]).
func TestParseHeaderEmptyUnevenRows(t *testing.T) {
	for _, dims := range [][]uint64{{32, 0}, {96, 0, 3}, {0x3030303030303020, 0}} {
		r := start(3, 1, 0)
		r.tensor("e", uint32(ggufx.Q4_K), 0, dims...)
		h, err := ggufx.ParseHeader(r.b)
		require.NoError(t, err, "%v", dims)
		e, err := h.Info("e")
		require.NoError(t, err)
		assert.Zero(t, e.Len())
		require.ErrorIs(t, e.Err, ggufx.ErrType, "%v", dims)
		assert.Contains(t, e.Err.Error(), "0 elements")
	}
}

// A size larger than what the reader holds costs no more memory than the bytes really there:
// ReadHeader of a 37-byte file said to be 2^41 bytes, whose one string claims 2^40, and of
// files whose arrays claim 2^37 elements, fail as truncated having allocated a few MiB at most.
func TestReadHeaderLyingSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"37 bytes", start(3, 0, 1).u64(1<<40).bytes('a', 'b', 'c', 'd', 'e').b},
		{"string value", start(3, 0, 1).str("k").u32(8).u64(1 << 40).bytes(make([]byte, 64)...).b},
		{"float64 array", start(3, 0, 1).str("k").u32(9).u32(12).u64(1 << 37).bytes(make([]byte, 64)...).b},
		{"uint8 array", start(3, 0, 1).str("k").u32(9).u32(0).u64(1 << 40).bytes(make([]byte, 64)...).b},
		{"string array", start(3, 0, 1).str("k").u32(9).u32(8).u64(1 << 37).str("x").u64(1 << 39).b},
		{"tensor name", start(3, 1, 0).u64(1 << 40).b},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "37 bytes" {
				require.Len(t, tc.b, 37)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ggufx.ReadHeader(bytes.NewReader(tc.b), 1<<41)
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ggufx.ErrTruncated)
			assert.NoError(t, errstest.Check(err, sentinels...))
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated")
		})
	}
}
