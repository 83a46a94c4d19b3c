package memory

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
)

// TestPlanUsesTiles checks which copies take the tiled transpose path, after the plan has
// dropped size-1 dimensions and merged contiguous neighbours.
func TestPlanUsesTiles(t *testing.T) {
	x := core.MustNew(core.Float32, 3, 64, 1, 80)
	xs, err := x.Bytes()
	require.NoError(t, err)
	for i := range xs {
		xs[i] = byte(i * 7)
	}
	y := core.MustNew(core.Float32, 64, 1, 80)
	z := core.MustNew(core.Float32, 20, 32, 40)
	tests := []struct {
		name  string
		view  func() (*core.Tensor, error)
		order Order
		tiled bool
		shape []int64 // of the plan, as the kernel walks it
	}{
		{"contiguous", func() (*core.Tensor, error) { return x, nil }, COrder, false, []int64{3 * 64 * 80}},
		{"inner pair swapped (n-d)", func() (*core.Tensor, error) { return x.Permute(0, 3, 2, 1) }, COrder, true, []int64{3, 80, 64}},
		{"2-d transpose", func() (*core.Tensor, error) { return y.Transpose() }, COrder, true, []int64{80, 64}},
		{"3-d transpose, axes reordered", func() (*core.Tensor, error) { return z.Transpose() }, COrder, true, []int64{32, 40, 20}},
		{"transpose with a short inner side", func() (*core.Tensor, error) { return x.Transpose() }, COrder, false, []int64{80, 64, 3}},
		{"C source into Fortran order", func() (*core.Tensor, error) { return y, nil }, FortranOrder, true, []int64{64, 80}},
		{"C source into Fortran order, short side", func() (*core.Tensor, error) { return x, nil }, FortranOrder, false, []int64{3, 64, 80}},
		{"outer pair swapped", func() (*core.Tensor, error) { return x.Permute(1, 0, 2, 3) }, COrder, false, []int64{64, 3, 80}},
		{"reversed rows", func() (*core.Tensor, error) { return x.Reverse(3) }, COrder, false, []int64{3 * 64, 80}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := tt.view()
			require.NoError(t, err)
			dst := core.MustNew(core.Float32, src.Shape()...)
			if tt.order == FortranOrder {
				rs := src.Shape()
				for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
					rs[i], rs[j] = rs[j], rs[i]
				}
				dst, err = core.MustNew(core.Float32, rs...).Transpose()
				require.NoError(t, err)
			}
			p, ok := tiledPlan(newPlan(dst, src))
			assert.Equal(t, tt.shape, p.shape)
			assert.Equal(t, tt.tiled, ok)
			// and the copy is right
			require.NoError(t, Copy(dst, src))
			for _, idx := range [][]int64{make([]int64, src.Ndim()), lastIndex(src)} {
				w, err := core.At[float32](src, idx...)
				require.NoError(t, err)
				g, err := core.At[float32](dst, idx...)
				require.NoError(t, err)
				assert.Equal(t, w, g)
			}
		})
	}
}

func lastIndex(t *core.Tensor) []int64 {
	idx := t.Shape()
	for i := range idx {
		idx[i]--
	}
	return idx
}

// TestTransposeKernel compares the blocked transpose kernel with the plain definition for every
// word size, both forms (destination or source compact along the inner index), sizes that are
// not multiples of the micro-tile or the block, padded rows and negative leading strides.
func TestTransposeKernel(t *testing.T) {
	t.Run("1", func(t *testing.T) { testTransposeKernel[uint8](t) })
	t.Run("2", func(t *testing.T) { testTransposeKernel[uint16](t) })
	t.Run("4", func(t *testing.T) { testTransposeKernel[uint32](t) })
	t.Run("8", func(t *testing.T) { testTransposeKernel[uint64](t) })
	t.Run("16", func(t *testing.T) { testTransposeKernel[[2]uint64](t) })
	if haveStrip32 { // the portable path for 4-byte words, too
		haveStrip32 = false
		t.Run("4/portable", func(t *testing.T) { testTransposeKernel[uint32](t) })
		haveStrip32 = true
	}
	// the same cases split across goroutines (blocks of 128 rows or more)
	saved := parallelBytes
	parallelBytes = 1
	defer func() { parallelBytes = saved }()
	t.Run("4/split", func(t *testing.T) { testTransposeKernel[uint32](t) })
	t.Run("8/split", func(t *testing.T) { testTransposeKernel[uint64](t) })
	t.Run("1/split", func(t *testing.T) { testTransposeKernel[uint8](t) })
}

func testTransposeKernel[W word](t *testing.T) {
	val := func(k int64) W { // a distinct pattern in every byte of the word
		var w W
		b := unsafe.Slice((*byte)(unsafe.Pointer(&w)), unsafe.Sizeof(w))
		for i := range b {
			b[i] = byte(k*7 + int64(i)*131 + k>>8)
		}
		return w
	}
	for _, rows := range []int64{1, 3, 4, 5, 63, 64, 65, 130} {
		for _, cols := range []int64{1, 2, 7, 32, 33, 129, 1031} {
			for _, pad := range []int64{0, 3} {
				for _, neg := range []bool{false, true} {
					for _, dstCompactJ := range []bool{true, false} {
						// form 1: dst[d+i*dr+j], src[s+i+j*sc]; form 2: dst[d+i+j*dc], src[s+i*sr+j]
						var dr, dc, sr, sc int64
						if dstCompactJ {
							dr, dc, sr, sc = cols+pad, 1, 1, rows+pad
						} else {
							dr, dc, sr, sc = 1, rows+pad, cols+pad, 1
						}
						n := (rows + pad) * (cols + pad)
						src := make([]W, n)
						for k := range src {
							src[k] = val(int64(k))
						}
						dst := make([]W, n)
						var d, s int64
						if neg { // walk the leading (non-unit) strides backwards
							if dstCompactJ {
								d, dr = (rows-1)*dr, -dr
								s, sc = (cols-1)*sc, -sc
							} else {
								d, dc = (cols-1)*dc, -dc
								s, sr = (rows-1)*sr, -sr
							}
						}
						want := make([]W, n)
						for i := range rows {
							for j := range cols {
								want[d+i*dr+j*dc] = src[s+i*sr+j*sc]
							}
						}
						transpose(dst, src, d, s, grid{rows: rows, cols: cols, dr: dr, dc: dc, sr: sr, sc: sc}, int(rows*cols)*int(unsafe.Sizeof(dst[0])))
						require.Equal(t, want, dst, "rows %d cols %d pad %d negative %v dst compact along j %v",
							rows, cols, pad, neg, dstCompactJ)
					}
				}
			}
		}
	}
}

// TestFloat16KernelsAgree compares the F16C kernel with the portable toFloat16 on every 1021st
// float32 bit pattern and the edges of float16's ranges (TestFloat16Exact compares the default
// path with x448/float16 itself).
func TestFloat16KernelsAgree(t *testing.T) {
	if !haveF16C {
		t.Skip("no F16C kernel in this build (not amd64, or -tags purego) or on this CPU: castFloat32ToFloat16 uses toFloat16 alone, which TestFloat16Exact checks")
	}
	var src []float32
	for u := uint64(0); u <= math.MaxUint32; u += 1021 {
		src = append(src, math.Float32frombits(uint32(u)))
	}
	for _, b := range []uint32{0x7f800000, 0x7f800001, 0x7fbfffff, 0x7fc00000, 0x477fefff, 0x477ff000,
		0x38800000, 0x387fffff, 0x33000000, 0x33000001, 0x32ffffff, 0} {
		for d := range uint32(64) {
			src = append(src, math.Float32frombits(b-32+d), math.Float32frombits((b-32+d)|0x80000000))
		}
	}
	src = src[:len(src)&^7]
	got := make([]uint16, len(src))
	cvtFloat32ToFloat16(&got[0], &src[0], len(src))
	bad := 0
	for i, f := range src {
		if want := toFloat16(f).Bits(); got[i] != want && bad < 10 {
			bad++
			t.Errorf("float32 bits %#08x: F16C %#04x, toFloat16 %#04x", math.Float32bits(f), got[i], want)
		}
	}
	// the non-temporal twin writes the same bits (a large Go allocation starts on a page)
	m := len(src) &^ 15
	nt := make([]uint16, m)
	require.Zero(t, uintptr(unsafe.Pointer(&nt[0]))%32)
	cvtFloat32ToFloat16NT(&nt[0], &src[0], m)
	require.Equal(t, got[:m], nt)
}

// TestFloat16RowsNonTemporal converts rows that reach cachedMax, both ways, at every
// alignment of the destination, and compares them with the element conversions.
func TestFloat16RowsNonTemporal(t *testing.T) {
	defer func(saved int) { cachedMax = saved }(cachedMax)
	cachedMax = 12 << 20  // as on the machine of BENCHMARKS.md, whatever this one's cache
	n := cachedMax/6 + 37 // source and result: 6 bytes an element both ways
	src := make([]float16.Float16, n)
	for i := range src {
		src[i] = float16.Frombits(uint16(i * 40503))
	}
	wideBuf := make([]float32, n+16)
	narrowBuf := make([]uint16, n+16)
	for off := range 16 {
		wide := wideBuf[off : off+n]
		k := float16sToFloat32s(wide, src)
		for i := k; i < n; i++ {
			wide[i] = src[i].Float32()
		}
		for i, h := range src {
			if math.Float32bits(wide[i]) != math.Float32bits(h.Float32()) {
				require.Equal(t, math.Float32bits(h.Float32()), math.Float32bits(wide[i]), "offset %d, element %d", off, i)
			}
		}
		narrow := narrowBuf[off : off+n]
		float32sToFloat16s(narrow, wide)
		for i, f := range wide {
			if want := toFloat16(f).Bits(); narrow[i] != want {
				require.Equal(t, want, narrow[i], "offset %d, element %d", off, i)
			}
		}
	}
}

// TestFloat16ToFloat32Exhaustive converts every float16 bit pattern, in order and shuffled, and
// compares the bits with float16.Float32, on F16C where the CPU has it and on the portable path.
func TestFloat16ToFloat32Exhaustive(t *testing.T) {
	all := make([]float16.Float16, 1<<16)
	for i := range all {
		all[i] = float16.Frombits(uint16(i))
	}
	scattered := slices.Clone(all)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(scattered), func(i, j int) {
		scattered[i], scattered[j] = scattered[j], scattered[i]
	})
	for _, f16c := range []bool{true, false} {
		if f16c && !haveF16C {
			continue // TestFloat16KernelsAgree says why
		}
		saved := haveF16C
		haveF16C = f16c
		for name, src := range map[string][]float16.Float16{"ordered": all, "scattered": scattered} {
			src = src[:len(src)-3] // a row tail too
			dst := make([]float32, len(src))
			k := float16sToFloat32s(dst, src)
			if f16c {
				require.Equal(t, len(src)&^7, k, name)
			} else {
				require.Equal(t, len(src), k, name)
			}
			for i := k; i < len(src); i++ {
				dst[i] = src[i].Float32()
			}
			bad := 0
			for i, h := range src {
				if want := h.Float32(); math.Float32bits(dst[i]) != math.Float32bits(want) && bad < 10 {
					bad++
					t.Errorf("%s, F16C %v: float16 %#04x → %#08x, want %#08x", name, f16c, h.Bits(),
						math.Float32bits(dst[i]), math.Float32bits(want))
				}
			}
		}
		haveF16C = saved
	}
}

// TestBFloat16Rows converts every bfloat16 value to float32 and back through Copy's row kernels
// and compares with the element conversions of package core.
func TestBFloat16Rows(t *testing.T) {
	all := make([]core.BF16, 1<<16)
	for i := range all {
		all[i] = core.BF16(i)
	}
	f32 := core.MustNew(core.Float32, 1<<16)
	require.NoError(t, Copy(f32, core.MustFromSlice(all)))
	got, err := core.Elements[float32](f32)
	require.NoError(t, err)
	back := core.MustNew(core.BFloat16, 1<<16)
	require.NoError(t, Copy(back, f32))
	again, err := core.Elements[core.BF16](back)
	require.NoError(t, err)
	for i, b := range all {
		require.Equal(t, math.Float32bits(b.Float32()), math.Float32bits(got[i]), "bfloat16 %#04x", uint16(b))
		require.Equal(t, core.BF16FromFloat32(got[i]), again[i], "bfloat16 %#04x and back", uint16(b))
	}
}

// TestSplitPlan checks which copies splitPlan cuts across processors, from which size and into
// how many pieces: copies through the cache from parallelBytes, piecesPerWorker pieces per
// processor; copies of contiguous rows past cachedMax (non-temporal stores) only from splitBytes,
// one piece per processor; transposes of several blocks from parallelBytes; 2-D transposes
// never (transposeBlocks splits them).
func TestSplitPlan(t *testing.T) {
	savedMax, savedPar, savedSplit, savedProcs := cachedMax, parallelBytes, splitBytes, runtime.GOMAXPROCS(2)
	defer func() {
		cachedMax, parallelBytes, splitBytes = savedMax, savedPar, savedSplit
		runtime.GOMAXPROCS(savedProcs)
	}()
	cachedMax, parallelBytes, splitBytes = 512<<10, 64<<10, 12<<20
	base := core.MustNew(core.Float64, 16, 128, 1024) // 16 MiB: rows of 8 KiB, blocks of 1 MiB
	flat, err := base.Reshape(16, 128*1024)           // rows of 1 MiB
	require.NoError(t, err)
	view := func(f func() (*core.Tensor, error)) *core.Tensor {
		v, err := f()
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		name   string
		src    *core.Tensor
		ntRows bool
		pieces int // 0: not split
	}{
		{"reversed rows of 8 KiB: through the cache", view(func() (*core.Tensor, error) { return base.Reverse(1) }), false, 2 * piecesPerWorker},
		{"stepped rows: through the cache", view(func() (*core.Tensor, error) { return base.Slice(2, core.Begin, core.End, 2) }), false, 2 * piecesPerWorker},
		{"a copy through the cache smaller than parallelBytes", view(func() (*core.Tensor, error) { return core.MustNew(core.Float64, 4, 16).Reverse(1) }), false, 0},
		{"reversed rows of 1 MiB, past cachedMax", view(func() (*core.Tensor, error) { return flat.Reverse(0) }), true, 2},
		{"contiguous rows past cachedMax, smaller than splitBytes", view(func() (*core.Tensor, error) { return flat.Slice(0, 0, 8, 1) }), true, 0},
		{"a permutation of 1 MiB blocks", view(func() (*core.Tensor, error) { return base.Permute(0, 2, 1) }), false, 2 * piecesPerWorker},
		{"a 2-D transpose", view(func() (*core.Tensor, error) {
			v, err := flat.Reshape(2048, 1024)
			if err != nil {
				return nil, err
			}
			return v.Transpose()
		}), false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := core.MustNew(core.Float64, tc.src.Shape()...)
			hs, err := core.Hold(dst, tc.src)
			require.NoError(t, err)
			defer hs.Release()
			p := newPlan(dst, tc.src)
			tp, tiled := tiledPlan(p)
			if tiled {
				p = tp
			} else {
				assert.Equal(t, tc.ntRows, ntRows(p, 8))
			}
			parts, workers := splitPlan(p, tiled, 8)
			assert.Len(t, parts, tc.pieces)
			if tc.pieces > 0 {
				assert.Equal(t, 2, workers)
			}
			var bytes int64
			for _, q := range parts {
				bytes += 8 * q.shape[0] * (p.dlen / 8 / p.shape[0])
			}
			if len(parts) > 0 {
				assert.Equal(t, tc.src.NumBytes(), bytes, "the pieces cover the copy")
			}
		})
	}
}
