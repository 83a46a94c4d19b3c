package ggufx_test

import (
	"encoding/binary"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
)

// mixedTensor is one tensor of mixedFile: its info and its bytes at off in the data section.
type mixedTensor struct {
	name string
	typ  uint32
	dims []uint64
	off  int
	size int
}

// mixedTensors are the tensors of mixedFile: an F32 tensor beside one of each of ggml's 2026
// types (NVFP4, Q1_0, Q2_0), a type number ggml does not have (157, a fork's), a removed one
// (31, Q4_0_4_4), a fork's Q2_0 under id 42 (128 elements in 34 bytes, where ggml's is 64 in
// 18), a Q2_0 whose rows are not whole blocks, an empty tensor of an unknown type, and a last
// F32 tensor.
var mixedTensors = []mixedTensor{
	{"f32", 0, []uint64{8, 2}, 0, 64},
	{"nvfp4", 40, []uint64{64}, 64, 36},
	{"q1", 41, []uint64{128}, 128, 18},
	{"q2", 42, []uint64{64}, 160, 18},
	{"fork157", 157, []uint64{256}, 192, 100},
	{"removed", 31, []uint64{32}, 320, 18},
	{"forkq2", 42, []uint64{4096}, 352, 34 * 32},
	{"q2row", 42, []uint64{96, 1}, 1440, 30},
	{"empty", 200, []uint64{0, 4}, 0, 0},
	{"tail", 0, []uint64{4}, 1472, 16},
}

// mixedFile is a GGUF file of mixedTensors (alignment 32); byte i of each tensor's data is
// i+1, except the F32 tensors, which hold 0, 1, 2, ...
func mixedFile() []byte {
	r := start(3, uint64(len(mixedTensors)), 0)
	data := make([]byte, 1488)
	for _, m := range mixedTensors {
		r.tensor(m.name, m.typ, uint64(m.off), m.dims...)
		for i := range m.size {
			if m.typ == 0 {
				if i%4 == 0 {
					binary.LittleEndian.PutUint32(data[m.off+i:], math.Float32bits(float32(i/4)))
				}
				continue
			}
			data[m.off+i] = byte(i + 1)
		}
	}
	r.data(32, 0, nil)
	r.b = append(r.b, data...)
	return r.b
}

// A file that holds tensors of types ggufx cannot read as elements opens; its other tensors
// read as ever (the F32 ones zero-copy, over the mapping) and those are listed with their
// numbers, their extents and why they are not read.
func TestOpenUnknownTypes(t *testing.T) {
	path := file(t, mixedFile())
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Tensors(), len(mixedTensors))

	for _, name := range []string{"f32", "nvfp4", "q1", "q2", "tail"} {
		ti, err := f.Info(name)
		require.NoError(t, err)
		assert.NoError(t, ti.Err, name)
	}
	for _, tc := range []struct {
		name string
		typ  ggufx.Type
		str  string
		size int64
		msg  string
	}{
		{"fork157", 157, "type 157 (unknown)", 128, `tensor "fork157" is of ggml type 157, which ggml does not have (its types end at 42: a newer ggml's, or a fork's?): 256 elements in 128 bytes (up to tensor "removed"), which File.Blocks shares`},
		{"removed", 31, "type 31 (Q4_0_4_4, removed)", 32, `tensor "removed" is of ggml type 31, Q4_0_4_4, which ggml has removed`},
		{"forkq2", 42, "Q2_0", 1088, `tensor "forkq2": type 42 is 64 elements in 18 bytes in ggml, and its 64 blocks would take 1152 bytes; this file's tensor spans 34-byte blocks of 128 (1088 bytes for 4096 elements), up to tensor "q2row": a fork's Q2_0?`},
		{"q2row", 42, "Q2_0", 32, `tensor "q2row": type 42 is 64 elements in 18 bytes in ggml, and rows of 96 elements are not a whole number of its blocks; this file's tensor spans 32 bytes for 96 elements, up to tensor "tail": a fork's Q2_0?`},
		{"empty", 200, "type 200 (unknown)", 0, `tensor "empty" is of ggml type 200`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ti, err := f.Info(tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.typ, ti.Type, "the raw number")
			assert.Equal(t, tc.str, ti.Type.String())
			assert.Equal(t, tc.size, ti.Size, "the extent up to the next tensor")
			assert.Zero(t, ti.Blocks())
			require.ErrorIs(t, ti.Err, ggufx.ErrType)
			assert.Contains(t, ti.Err.Error(), tc.msg)
			assert.NoError(t, errstest.Check(ti.Err, sentinels...))
			_, err = f.Tensor(tc.name)
			assert.Equal(t, ti.Err, err, "Tensor")
			_, err = f.Dequantize(tc.name, core.Float32)
			assert.Equal(t, ti.Err, err, "Dequantize")
			dst := core.MustNew(core.Float32, ti.Shape()...)
			assert.Equal(t, ti.Err, f.DequantizeInto(tc.name, dst), "DequantizeInto")
			dst.Release()
			b, bi, err := f.Blocks(tc.name)
			require.NoError(t, err)
			defer b.Release()
			assert.Equal(t, ggufx.BlockInfo{Type: tc.typ, BlockBytes: int(tc.size), Blocks: min(tc.size, 1), Shape: ti.Shape()}, bi)
			assert.Equal(t, []int64{min(tc.size, 1), tc.size}, b.Shape())
			got, err := b.ReadOnlyBytes()
			require.NoError(t, err)
			for _, m := range mixedTensors {
				if m.name == tc.name && m.size > 0 {
					assert.Equal(t, byte(1), got[0])
					assert.Equal(t, byte(m.size), got[m.size-1], "the tensor's last byte")
					assert.Equal(t, make([]byte, int(tc.size)-m.size), got[m.size:], "then the padding")
				}
			}
		})
	}
	// ggml's own types are taken as their blocks
	for name, want := range map[string]ggufx.BlockInfo{
		"nvfp4": {Type: ggufx.NVFP4, BlockSize: 64, BlockBytes: 36, Blocks: 1, Shape: []int64{64}},
		"q1":    {Type: ggufx.Q1_0, BlockSize: 128, BlockBytes: 18, Blocks: 1, Shape: []int64{128}},
		"q2":    {Type: ggufx.Q2_0, BlockSize: 64, BlockBytes: 18, Blocks: 1, Shape: []int64{64}},
	} {
		b, bi, err := f.Blocks(name)
		require.NoError(t, err)
		assert.Equal(t, want, bi)
		b.Release()
		_, err = f.Tensor(name)
		assert.ErrorIs(t, err, ggufx.ErrQuantized)
	}

	// the F32 tensors read zero-copy: over the mapping, where a write to the file shows
	x, err := f.Tensor("f32")
	require.NoError(t, err)
	defer x.Release()
	assert.True(t, x.Foreign(), "a view of the mapping")
	assert.Equal(t, []int64{2, 8}, x.Shape())
	v, err := x.ReadOnlyFloat32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, v)
	y, err := f.Tensor("f32")
	require.NoError(t, err)
	defer y.Release()
	assert.Equal(t, x.Data(), y.Data(), "one memory")
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = w.WriteAt(binary.LittleEndian.AppendUint32(nil, math.Float32bits(42)), f.Header().DataOffset+4)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	v, err = x.ReadOnlyFloat32s()
	require.NoError(t, err)
	assert.Equal(t, float32(42), v[1], "the write shows through the view: zero-copy")
	tail, err := f.Tensor("tail")
	require.NoError(t, err)
	defer tail.Release()
	tv, err := tail.ReadOnlyFloat32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 2, 3}, tv)

	// NewReader reads the same header
	r, err := ggufx.NewReader(fileReader(t, path))
	require.NoError(t, err)
	assert.Equal(t, f.Tensors(), r.Tensors())
	b, _, err := r.Blocks("fork157")
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 128}, b.Shape())
	b.Release()
}

// fileReader opens path for NewReader.
func fileReader(t *testing.T, path string) (*os.File, int64) {
	t.Helper()
	rf, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { rf.Close() })
	st, err := rf.Stat()
	require.NoError(t, err)
	return rf, st.Size()
}

// What the type table's paths refuse still refuses the whole file: overlaps and data past the
// end, for known and unknown types alike; only a quantized type's layout that does not fit is
// refused for its tensor alone.
func TestOpenUnknownTypesLayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want error
		msg  string
	}{
		{"unknown past end", start(3, 1, 0).tensor("t", 157, 64, 32).data(32, 64, nil).b, ggufx.ErrLayout, `"t": data at 64 of the data section starts past its end (64 bytes`},
		{"unknown at another's offset", start(3, 2, 0).tensor("a", 157, 0, 32).tensor("b", 0, 0, 4).data(32, 64, nil).b, ggufx.ErrLayout, "overlap"},
		{"F32 into an unknown", start(3, 2, 0).tensor("a", 0, 0, 16).tensor("b", 157, 32, 32).data(32, 96, nil).b, ggufx.ErrLayout, `"a" [0, 64) and "b" [32, 33) overlap`},
		{"quantized cut short", start(3, 1, 0).tensor("t", 2, 0, 64).data(32, 20, nil).b, ggufx.ErrLayout, `"t": data [0, 36) of the data section runs past its end (20 bytes`},
		{"fork at the end", start(3, 1, 0).tensor("t", 42, 0, 4096).data(32, 1088, nil).b, ggufx.ErrLayout, "runs past its end (1088 bytes, from file offset 64) (or 34-byte blocks of 128: a fork's Q2_0?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ggufx.ParseHeader(tc.b)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
			assert.NoError(t, errstest.Check(err, sentinels...))
		})
	}
}

func TestTypeNames(t *testing.T) {
	assert.Equal(t, "Q2_0", ggufx.Q2_0.String())
	assert.Equal(t, ggufx.Q2_0, ggufx.LastType)
	assert.Equal(t, "type 43 (unknown)", ggufx.Type(43).String())
	assert.Equal(t, "type 4 (Q4_2, removed)", ggufx.Type(4).String())
	for n := range ggufx.LastType + 1 {
		assert.True(t, n.Known() != n.Removed(), "%d is known or removed", n)
	}
	assert.False(t, ggufx.Type(157).Known() || ggufx.Type(157).Removed())
}

// Blocks larger than ggml's leave a gap before the next tensor, which no writer leaves (ggml
// refuses it): the tensor is refused, not read with ggml's smaller blocks.
func TestOpenLargerBlocks(t *testing.T) {
	h, err := ggufx.ParseHeader(start(3, 2, 0).tensor("q", 2, 0, 32).tensor("f", 0, 64, 4).data(32, 80, nil).b)
	require.NoError(t, err)
	q, err := h.Info("q")
	require.NoError(t, err)
	require.ErrorIs(t, q.Err, ggufx.ErrType)
	assert.Contains(t, q.Err.Error(), `tensor "q": type 2 is 32 elements in 18 bytes in ggml, and its 1 blocks take 18 bytes, not the 64 before the next tensor; this file's tensor spans 64 bytes for 32 elements, up to tensor "f": a fork's Q4_0?`)
	assert.Equal(t, int64(64), q.Size)
}

// The fuzz seed testdata/ggufpy.py made from GGUFWriter's file, patched to hold an unknown
// type number, a removed one and a fork's Q2_0 layout, reads as its script says.
func TestSeedFromGGUFPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/fuzz/FuzzOpen/py-unknown")
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	require.Equal(t, "go test fuzz v1", lines[0])
	lit, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	require.NoError(t, err)
	h, err := ggufx.ParseHeader([]byte(lit))
	require.NoError(t, err)
	want := map[string]string{"a": "ggml type 157", "b": "ggml type 31, Q4_0_4_4", "fork": "this file's tensor spans 34-byte blocks of 128"}
	for _, ti := range h.Tensors {
		if w, ok := want[ti.Name]; ok {
			require.ErrorIs(t, ti.Err, ggufx.ErrType, ti.Name)
			assert.Contains(t, ti.Err.Error(), w)
		} else {
			assert.NoError(t, ti.Err, ti.Name)
		}
	}
}
