package memory

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// TestTransposeKernelNonTemporal runs the transpose kernels down their non-temporal path
// (cachedMax 0: every destination counts as too large for the cache) on 32-byte aligned
// destinations, in one piece and split across goroutines, for 4- and 8-byte words, with the
// tiles taken along the bands and down the columns (downWalk, whichever this CPU takes), and on
// misaligned destinations, which must fall back to ordinary stores; it compares each with the
// plain definition.
func TestTransposeKernelNonTemporal(t *testing.T) {
	savedMax, savedPar, savedDown := cachedMax, parallelBytes, downWalk
	defer func() { cachedMax, parallelBytes, downWalk = savedMax, savedPar, savedDown }()
	cachedMax = 0
	for _, down := range []bool{false, true} {
		downWalk = down
		for _, par := range []int{savedPar, 1} {
			parallelBytes = par
			name := fmt.Sprintf("down=%t/split=%t", down, par == 1)
			t.Run(name+"/4", func(t *testing.T) { testTransposeNT[uint32](t) })
			t.Run(name+"/8", func(t *testing.T) { testTransposeNT[uint64](t) })
		}
	}
}

func testTransposeNT[W uint32 | uint64](t *testing.T) {
	var w W
	size := int64(unsafe.Sizeof(w))
	// columns of 1100 and 2100 words reach downColumn for both word sizes, and 520 for 8-byte
	// words: with downWalk those tiles walk down the columns (tilesDown), in one piece and, split
	// across goroutines, in pieces of 550 and 1056 rows (the 4-byte words of the first in bands
	// again); 160 and 144 columns hold whole staged blocks (transposeStaged) and columns left of
	// them, and 1100 and 2100 rows a last block of fewer than stageRows rows and rows left of the
	// tiles
	for _, shape := range [][2]int64{{16, 16}, {64, 48}, {100, 37}, {300, 520}, {520, 300}, {1100, 53}, {2100, 41},
		{1100, 160}, {2100, 144}, {600, 100}} {
		for _, shift := range []int64{0, 1} { // 1: the destination starts one word past a 64-byte boundary
			rows, cols := shape[0], shape[1]
			srcT := core.MustNew(core.DTypeOf[W](), cols, rows) // transposed into rows×cols
			sv, err := core.Elements[W](srcT)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
			for i := range sv {
				sv[i] = W(r.Uint64())
			}
			view, err := srcT.Transpose()
			require.NoError(t, err)
			buf := core.MustNew(core.DTypeOf[W](), rows*cols+8)
			bv, err := core.Elements[W](buf)
			require.NoError(t, err)
			dst, err := core.FromSliceStrided(bv, shift, []int64{rows, cols}, nil)
			require.NoError(t, err)
			require.Zero(t, uintptr(buf.Data())%64)
			require.NoError(t, Copy(dst, view))
			for i := range rows {
				for j := range cols {
					if bv[shift+i*cols+j] != sv[j*rows+i] {
						t.Fatalf("%d-byte words, %d×%d, shift %d: [%d, %d] = %#x, want %#x",
							size, rows, cols, shift, i, j, bv[shift+i*cols+j], sv[j*rows+i])
					}
				}
			}
			// the same with the source's columns in reverse order (a negative column stride for
			// the kernels) into a destination whose rows run backwards (a negative row stride)
			rev, err := view.Reverse(1)
			require.NoError(t, err)
			back, err := dst.Reverse(0)
			require.NoError(t, err)
			clear(bv)
			require.NoError(t, Copy(back, rev))
			for i := range rows {
				for j := range cols {
					if got, want := bv[shift+(rows-1-i)*cols+j], sv[(cols-1-j)*rows+i]; got != want {
						t.Fatalf("%d-byte words, %d×%d, shift %d, reversed: [%d, %d] = %#x, want %#x",
							size, rows, cols, shift, i, j, got, want)
					}
				}
			}
		}
	}
}

// TestPermutationNonTemporal copies permutations of more than two dimensions (a 2-D transpose
// per block, as tiledPlan makes of them) whose blocks each fit under cachedMax but whose whole
// destination does not: the blocks are written with non-temporal stores, chosen for the whole
// destination (the whole-line tiles for 8-byte words on 64-byte aligned rows), in one piece and
// split across goroutines, and compared element by element with the source. (The test sets
// cachedMax to 1.5 blocks.)
func TestPermutationNonTemporal(t *testing.T) {
	savedMax, savedPar := cachedMax, parallelBytes
	defer func() { cachedMax, parallelBytes = savedMax, savedPar }()
	for _, par := range []int{savedPar, 1} {
		parallelBytes = par
		t.Run(fmt.Sprintf("split=%t/4", par == 1), func(t *testing.T) { testPermutationNT[uint32](t) })
		t.Run(fmt.Sprintf("split=%t/8", par == 1), func(t *testing.T) { testPermutationNT[uint64](t) })
	}
}

func testPermutationNT[W uint32 | uint64](t *testing.T) {
	var w W
	size := int64(unsafe.Sizeof(w))
	// BenchmarkNumPyCopies' permutation, smaller: (rows, cols) as (4, rows/4, 32, cols/32),
	// dimensions 0, 3, 1, 2; and one whose rows are not whole lines (cols/32 = 20 words)
	for _, shape := range [][2]int64{{128, 512}, {256, 1024}, {64, 640}} {
		rows, cols := shape[0], shape[1]
		src := core.MustNew(core.DTypeOf[W](), rows, cols)
		sv, err := core.Elements[W](src)
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
		for i := range sv {
			sv[i] = W(r.Uint64())
		}
		r4, err := src.Reshape(4, rows/4, 32, cols/32)
		require.NoError(t, err)
		view, err := r4.Permute(0, 3, 1, 2)
		require.NoError(t, err)
		dst := core.MustNew(core.DTypeOf[W](), view.Shape()...)
		p, tiled := tiledPlan(newPlan(dst, view))
		require.True(t, tiled, "%d×%d", rows, cols)
		a, b := len(p.shape)-2, len(p.shape)-1
		require.Greater(t, len(p.shape), 2, "blocks")
		cachedMax = int(p.shape[a] * p.shape[b] * size * 3 / 2) // each block under cachedMax
		require.Greater(t, p.dlen, int64(cachedMax), "the whole destination past it")
		require.NoError(t, Copy(dst, view))
		dv, err := core.Elements[W](dst)
		require.NoError(t, err)
		k := 0
		for idx := range core.Indices(view.Shape()) {
			want, err := core.At[W](view, idx...)
			require.NoError(t, err)
			if dv[k] != want {
				t.Fatalf("%d-byte words, %d×%d: at %v: %#x, want %#x", size, rows, cols, idx, dv[k], want)
			}
			k++
		}
	}
}

// TestFloat64Float32KernelsAgree compares the AVX conversions between float64 and float32 with
// Go's on random bit patterns and the edges: NaNs with payloads, infinities, overflow, the
// float32 subnormals, zeros and ties.
func TestFloat64Float32KernelsAgree(t *testing.T) {
	if !haveStrip32 {
		t.Skip("no AVX kernels in this build (not amd64, or -tags purego) or on this CPU: convertRow uses Go's conversion alone")
	}
	r := rand.New(rand.NewPCG(3, 4))
	var wide []float64
	for range 1 << 16 {
		wide = append(wide, math.Float64frombits(r.Uint64()))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000123),
		math.MaxFloat32, math.MaxFloat64, math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32 / 2,
		math.SmallestNonzeroFloat32 * 1.5, 1 + 1.0/(1<<24), 1 + 3.0/(1<<24), 3.4028235677973366e38} {
		wide = append(wide, f, -f)
	}
	for len(wide)%8 != 0 {
		wide = append(wide, 1.5)
	}
	narrow := make([]float32, len(wide))
	cvtFloat64ToFloat32(&narrow[0], &wide[0], len(wide))
	for i, f := range wide {
		require.Equal(t, math.Float32bits(float32(f)), math.Float32bits(narrow[i]), "float64 bits %#016x", math.Float64bits(f))
	}
	back := make([]float64, len(narrow))
	cvtFloat32ToFloat64(&back[0], &narrow[0], len(narrow))
	for i, f := range narrow {
		require.Equal(t, math.Float64bits(float64(f)), math.Float64bits(back[i]), "float32 bits %#08x", math.Float32bits(f))
	}
	// the non-temporal twins: the same bits (large Go allocations start on a page)
	m := len(wide) &^ 15
	narrowNT, backNT := make([]float32, m), make([]float64, m)
	require.Zero(t, uintptr(unsafe.Pointer(&narrowNT[0]))%32)
	require.Zero(t, uintptr(unsafe.Pointer(&backNT[0]))%32)
	cvtFloat64ToFloat32NT(&narrowNT[0], &wide[0], m)
	cvtFloat32ToFloat64NT(&backNT[0], &narrow[0], m)
	for i := range m {
		require.Equal(t, math.Float32bits(narrow[i]), math.Float32bits(narrowNT[i]), "float64 bits %#016x", math.Float64bits(wide[i]))
		require.Equal(t, math.Float64bits(back[i]), math.Float64bits(backNT[i]), "float32 bits %#08x", math.Float32bits(narrow[i]))
	}
}

// TestCopyRowCached copies contiguous rows of sizes around copyCached's 128-byte unit and its
// 1 MiB threshold.
func TestCopyRowCached(t *testing.T) {
	for _, n := range []int{1 << 20, 1<<20 + 8, 1<<20 + 1000, 3<<20 - 8} {
		src := make([]uint64, n/8)
		for i := range src {
			src[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
		}
		dst := make([]uint64, len(src))
		copyRow(dst, src)
		require.Equal(t, src, dst, "%d bytes", n)
	}
}

// TestCopySplit copies views of many shapes with every copy split across goroutines
// (parallelBytes 1) and compares the bytes with the same copies on one goroutine.
func TestCopySplit(t *testing.T) {
	saved, savedSplit := parallelBytes, splitBytes
	defer func() { parallelBytes, splitBytes = saved, savedSplit }()
	splitBytes = 1
	for _, dt := range []core.DLDataType{core.Uint8, core.Uint16, core.Float32, core.Float64, core.Complex128} {
		base := core.MustNew(dt, 6, 40, 66)
		b, err := base.Bytes()
		require.NoError(t, err)
		for i := range b {
			b[i] = byte(i*7 + i>>8)
		}
		views := map[string]func() (*core.Tensor, error){
			"contiguous": func() (*core.Tensor, error) { return base, nil },
			"reversed":   func() (*core.Tensor, error) { return base.Reverse(1) },
			"stepped":    func() (*core.Tensor, error) { return base.Slice(2, core.Begin, core.End, 2) },
			"transposed": func() (*core.Tensor, error) { return base.Transpose() },
			"permuted":   func() (*core.Tensor, error) { return base.Permute(0, 2, 1) },
			"flat-stepped": func() (*core.Tensor, error) {
				f, err := base.Reshape(6 * 40 * 66)
				if err != nil {
					return nil, err
				}
				return f.Slice(0, 3, core.End, 3)
			},
		}
		for name, view := range views {
			v, err := view()
			require.NoError(t, err)
			parallelBytes = 1 << 40
			want, err := Clone(v, COrder)
			require.NoError(t, err)
			parallelBytes = 1
			got, err := Clone(v, COrder)
			require.NoError(t, err)
			gotF, err := Clone(v, FortranOrder)
			require.NoError(t, err)
			parallelBytes = 1 << 40
			wantF, err := Clone(v, FortranOrder)
			require.NoError(t, err)
			wb, _ := want.Bytes()
			gb, _ := got.Bytes()
			require.Equal(t, wb, gb, "%s %s", dt, name)
			wf, err := Clone(wantF, COrder)
			require.NoError(t, err)
			gf, err := Clone(gotF, COrder)
			require.NoError(t, err)
			wfb, _ := wf.Bytes()
			gfb, _ := gf.Bytes()
			require.Equal(t, wfb, gfb, "%s %s Fortran order", dt, name)
		}
	}
}

// TestStridedEveryOther copies every other word (the AVX2 path for 4- and 8-byte words) for
// lengths around the kernels' units, from sources that end right after the last word wanted.
func TestStridedEveryOther(t *testing.T) {
	t.Run("4", func(t *testing.T) { testEveryOther[uint32](t) })
	t.Run("8", func(t *testing.T) { testEveryOther[uint64](t) })
}

func testEveryOther[W uint32 | uint64](t *testing.T) {
	for n := int64(1); n < 70; n++ {
		src := make([]W, 2*n-1+3)
		for i := range src {
			src[i] = W(i*0x9e3779b9 + 7)
		}
		for s := int64(0); s < 3; s++ {
			end := s + 2*(n-1) + 1
			dst := make([]W, n)
			strided(dst, src[:end], 0, s, n, 1, 2)
			for i := range n {
				require.Equal(t, src[s+2*i], dst[i], "n %d, start %d, element %d", n, s, i)
			}
		}
	}
}

// TestTransposeKernelAVX runs the transpose tests on the AVX tile kernels on CPUs that also have
// AVX-512, whose kernels the other tests take there, through the cache and, past it, with
// non-temporal stores.
func TestTransposeKernelAVX(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 kernels run here (this CPU lacks AVX-512, or the build has no assembly): the other transpose tests cover the kernels that do")
	}
	haveAVX512 = false
	savedMax := cachedMax
	defer func() { haveAVX512, cachedMax = true, savedMax }()
	t.Run("4", func(t *testing.T) { testTransposeKernel[uint32](t) })
	t.Run("8", func(t *testing.T) { testTransposeKernel[uint64](t) })
	cachedMax = 0
	t.Run("4/non-temporal", func(t *testing.T) { testTransposeNT[uint32](t) })
	t.Run("8/non-temporal", func(t *testing.T) { testTransposeNT[uint64](t) })
}

// TestShareOut checks that shareOut runs every piece exactly once, whatever the number of
// pieces and goroutines.
func TestShareOut(t *testing.T) {
	for _, n := range []int{1, 2, 7, 64} {
		for _, workers := range []int{1, 2, 3, 100} {
			ran := make([]atomic.Int32, n)
			shareOut(n, workers, func(i int) { ran[i].Add(1) })
			for i := range ran {
				require.EqualValues(t, 1, ran[i].Load(), "%d pieces, %d workers: piece %d", n, workers, i)
			}
		}
	}
}

// TestConvertRowNonTemporal converts rows from cachedMax up, at every alignment of the
// destination and with lengths that leave a head and a tail for Go's conversion, both ways.
func TestConvertRowNonTemporal(t *testing.T) {
	defer func(saved int) { cachedMax = saved }(cachedMax)
	cachedMax = 12 << 20   // as on the machine of BENCHMARKS.md, whatever this one's cache
	n := cachedMax/12 + 37 // source and result: 12 bytes an element both ways
	wide := make([]float64, n+8)
	for i := range wide {
		wide[i] = float64(i)*1.000000119 - 12345.678
	}
	narrowBuf := make([]float32, n+8)
	wideBuf := make([]float64, n+8)
	// a destination off its elements' alignment (foreign memory may be) takes the plain kernel
	raw := make([]byte, 4*n+8)
	odd := unsafe.Slice((*float32)(unsafe.Pointer(&raw[1])), n)
	require.Equal(t, n, convertRow(odd, wide[:n]))
	for i, f := range wide[:n] {
		if odd[i] != float32(f) {
			require.Equal(t, float32(f), odd[i], "misaligned, element %d", i)
		}
	}
	for off := range 8 {
		narrow := narrowBuf[off : off+n]
		require.Equal(t, n, convertRow(narrow, wide[:n]))
		for i, f := range wide[:n] {
			if narrow[i] != float32(f) {
				require.Equal(t, float32(f), narrow[i], "offset %d, element %d", off, i)
			}
		}
		back := wideBuf[off : off+n]
		require.Equal(t, n, convertRow(back, narrow))
		for i, f := range narrow {
			if back[i] != float64(f) {
				require.Equal(t, float64(f), back[i], "offset %d, element %d", off, i)
			}
		}
	}
}

// atDepth calls f from n frames of about 160 bytes further down the stack, so that the frame of
// a kernel f calls lands at every offset within a page as n goes from 0 to 30.
//
//go:noinline
func atDepth(n int, f func()) {
	var pad [128]byte
	if n > 0 {
		atDepth(n-1, f)
	} else {
		f()
	}
	runtime.KeepAlive(&pad)
}

// TestTransposeTilesStackDepths runs the tile kernels of 4-byte words, which park rows in a
// 512-byte aligned area of their frame (PARKAREA), from stack depths that put that frame at every
// offset within a page, with ordinary and non-temporal stores, and checks each result: the area
// stays inside the frame, wherever the frame is.
func TestTransposeTilesStackDepths(t *testing.T) {
	if !haveStrip32 {
		t.Skip("no assembly kernels here (the CPU lacks AVX, or -tags purego)")
	}
	const rows, cols = 48, 80
	src := make([]uint32, rows*cols) // cols×rows, read transposed
	for i := range src {
		src[i] = uint32(i)*2654435761 + 1
	}
	dst := core.MustNew(core.Uint32, rows, cols) // 64-byte aligned, rows 320 bytes apart
	dv, err := core.Elements[uint32](dst)
	require.NoError(t, err)
	kernels := map[string]func(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int){
		"cached": transposeTiles32, "non-temporal": transposeTiles32NT,
	}
	for name, tiles := range kernels {
		for depth := range 31 {
			clear(dv)
			atDepth(depth, func() {
				for r := 0; r+16 <= rows; r += 16 {
					tiles(unsafe.Pointer(&dv[r*cols]), unsafe.Pointer(&src[r]), cols/16, cols*4, rows*4, 256)
				}
				storeFence()
			})
			for i := range rows {
				for j := range cols {
					if dv[i*cols+j] != src[j*rows+i] {
						t.Fatalf("%s, depth %d: [%d, %d] = %#x, want %#x", name, depth, i, j, dv[i*cols+j], src[j*rows+i])
					}
				}
			}
		}
	}
	runtime.KeepAlive(dst)
}

// BenchmarkTransposeStackDepths transposes 4096×4096 float32 with the AVX tiles from stack depths
// that put their frame at every offset within a page, one processor's worth (transposeRange, as
// a transpose on one processor runs), and reports the slowest and fastest depth: the two were 5.8
// and 10.8 GB/s on a Zen 4 VM while the tiles' parking area could straddle a page (BENCHMARKS.md).
// With kernels=best the AVX-512 tiles run, which park nothing.
func BenchmarkTransposeStackDepths(b *testing.B) {
	b.Run("kernels=best", benchTransposeStackDepths)
	b.Run("kernels=avx2", func(b *testing.B) {
		if !avx512Available {
			b.Skip("this CPU has no AVX-512 kernels to turn off: kernels=best is the AVX path here")
		}
		haveAVX512 = false
		defer func() { haveAVX512 = true }()
		benchTransposeStackDepths(b)
	})
}

func benchTransposeStackDepths(b *testing.B) {
	const side = 4096
	src := make([]float32, side*side)
	dst := core.MustNew(core.Float32, side, side)
	dv, err := core.Elements[float32](dst)
	if err != nil {
		b.Fatal(err)
	}
	for i := range src {
		src[i], dv[i] = float32(i), 1
	}
	nt := useNT(unsafe.Pointer(&dv[0]), side*side*4, side*4)
	slowest, fastest := math.Inf(1), 0.0
	for range b.N {
		for depth := range 31 {
			t0 := time.Now()
			atDepth(depth, func() {
				transposeRange[uint32](rect{dst: unsafe.Pointer(&dv[0]), src: unsafe.Pointer(&src[0]), rows: side, cols: side, size: 4, dRow: side * 4, sCol: side * 4, nt: nt})
			})
			mbs := side * side * 4 / 1e6 / time.Since(t0).Seconds()
			slowest, fastest = min(slowest, mbs), max(fastest, mbs)
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(slowest, "slowest-MB/s")
	b.ReportMetric(fastest, "fastest-MB/s")
	runtime.KeepAlive(dst)
}
