package ggufx_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/ggufx/internal/ggmlref"
)

// quantizeRows are float32 rows of every kind a quantizer meets: normal weights at several
// scales, rows with one outlier, ties of the rounding (x/d a half-integer), zeros, a constant,
// subnormals and values whose scale is not a finite half (too small, too large).
func quantizeRows(perRow int) (rows []float32, nrows int) {
	rng := rand.New(rand.NewPCG(49, 3))
	add := func(f func(i int) float32) {
		for i := range perRow {
			rows = append(rows, f(i))
		}
		nrows++
	}
	for _, scale := range []float32{1, 1e-3, 3, 100, 6e4} {
		for range 8 {
			add(func(int) float32 { return float32(rng.NormFloat64()) * scale })
		}
	}
	add(func(i int) float32 { return float32(i%7) - 3 })            // small integers: exact ties for Q4_0
	add(func(i int) float32 { return float32(i%32)*0.5 - 8 })       // half steps
	add(func(i int) float32 { return float32(i%32-16) * 127 / 64 }) // x/d = k/2 for Q8_0
	add(func(int) float32 { return 0 })
	add(func(int) float32 { return -2.5 })
	add(func(i int) float32 { return float32(i%5) * 1e-40 }) // subnormals
	add(func(i int) float32 { return float32(i%3) * 1e-8 })  // a scale under the smallest half
	add(func(i int) float32 { return float32(i%3-1) * 1e7 }) // a scale over the largest half
	add(func(i int) float32 {
		if i%32 == 5 {
			return -50
		}
		return float32(rng.NormFloat64())
	})
	for k := range 64 { // random values exactly on the rounding's ties
		add(func(i int) float32 {
			q := float32(rng.IntN(255)-127) + 0.5
			if i%32 == 0 {
				return 127 * float32(k+1) / 8
			}
			return q * float32(k+1) / 8 * 0.999
		})
	}
	for range 256 { // scales from subnormal to near the largest float32, mixed signs
		scale := float32(math.Pow(2, rng.Float64()*250-125))
		add(func(int) float32 { return float32(rng.NormFloat64()) * scale })
	}
	return rows, nrows
}

// TestQuantizeLikeGGML: Write's quantizers (Q8_0, Q4_0) make the very blocks ggml's own
// ggml_quantize_chunk makes from the same float32 rows, byte for byte.
func TestQuantizeLikeGGML(t *testing.T) {
	l := ggmlref.Load(t)
	for _, perRow := range []int{32, 256, 4096} {
		rows, nrows := quantizeRows(perRow)
		for _, typ := range []ggufx.Type{ggufx.Q8_0, ggufx.Q4_0} {
			t.Run(fmt.Sprintf("%s/rows-of-%d", typ, perRow), func(t *testing.T) { quantizeLikeGGML(t, l, typ, rows, nrows, perRow) })
		}
	}
}

// quantizeLikeGGML compares Write's blocks of rows as typ with ggml_quantize_chunk's.
func quantizeLikeGGML(t *testing.T, l *ggmlref.Lib, typ ggufx.Type, rows []float32, nrows, perRow int) {
	want, err := l.Quantize(int(typ), rows, nrows, perRow, nil)
	require.NoError(t, err)
	src, err := core.FromSlice(rows, int64(nrows), int64(perRow))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, ggufx.Write(&buf, nil, []ggufx.Entry{ggufx.Quantized("q", src, typ)}))
	f, err := ggufx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	b, _, err := f.Blocks("q")
	require.NoError(t, err)
	got, err := b.ReadOnlyBytes()
	require.NoError(t, err)
	bb := typ.BlockBytes()
	for i := 0; i < len(want); i += bb {
		if !bytes.Equal(want[i:i+bb], got[i:i+bb]) {
			blk := i / bb
			t.Fatalf("%s, rows of %d: block %d differs from ggml's:\n ggml %x\n ours %x\n from %v", typ, perRow, blk, want[i:i+bb], got[i:i+bb], rows[blk*32:blk*32+32])
		}
	}
	require.Equal(t, want, got)
	b.Release()
}
