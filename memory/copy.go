package memory

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/copyplan"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// Order is the memory order of a tensor that Clone or Cast makes.
type Order int

const (
	// COrder is row-major: the last index varies fastest.
	COrder Order = iota
	// FortranOrder is column-major: the first index varies fastest.
	FortranOrder
)

// Clone copies t's elements, whatever its strides (negative, zero, offsets, Fortran order),
// into a new compact tensor in the given order. The copy is writable, carries
// core.FlagIsCopied, and aliases nothing. Its memory comes from NewUninit, which the copy
// overwrites whole: Go memory for small tensors, and for large ones memory mapped outside Go's
// heap (a foreign tensor; SetAllocation chooses the sizes), which goes back to a cache for
// the next copy as soon as the clone is released. Release a large clone when done with it.
func Clone(t *core.Tensor, order Order) (*core.Tensor, error) {
	return CastOrder(t, t.DType(), order)
}

// Contiguous returns a C-order copy of t (see Clone).
func Contiguous(t *core.Tensor) (*core.Tensor, error) { return Clone(t, COrder) }

// Cast returns a new C-order tensor with t's elements converted to dtype (see Copy for the
// conversion rules, and Clone for where its memory comes from).
func Cast(t *core.Tensor, dtype core.DLDataType) (*core.Tensor, error) {
	return CastOrder(t, dtype, COrder)
}

// CastOrder is Cast into the given memory order.
func CastOrder(t *core.Tensor, dtype core.DLDataType, order Order) (*core.Tensor, error) {
	shape := t.Shape()
	fortran := order == FortranOrder && len(shape) > 1
	if fortran {
		// allocate reversed and transpose: the Fortran-order view of a C-order buffer
		slices.Reverse(shape)
	}
	out, err := NewUninit(dtype, shape...)
	if err != nil {
		return nil, err
	}
	if fortran {
		// a view holds the memory on its own: let go of the tensor under it at once, so that
		// releasing the result gives a mapped block back at once too (see markCopied)
		ft, err := out.Transpose()
		out.Release()
		if err != nil {
			return nil, err
		}
		out = ft
	}
	if err := Copy(out, t); err != nil {
		out.Release()
		return nil, err
	}
	return markCopied(out)
}

// Copy writes src's elements into dst, element by element, converting the dtype when they
// differ. Both must be host tensors of the same shape, with any strides; dst must be writable,
// and no two of its elements may alias each other (core.ErrOverlap, e.g. a zero stride). dst and
// src may overlap in any way: the result is as if src were read whole before dst is written
// (through a temporary copy of src, made only when their byte ranges intersect).
//
// A copy of the same dtype from 4 MiB is shared out among several goroutines, at most GOMAXPROCS
// (the caller's is one of them), except contiguous copies whose result is too large for the
// cache, which stay on one up to 32 MiB: one processor's non-temporal stores already reach the
// memory's speed. Conversions between dtypes run on the caller's goroutine. Copy returns when
// every element is written.
//
// Conversions follow Go's: integers wrap, complex to real keeps the real part, anything to
// bool is "not zero", and floating results round to nearest even. Floats to integers truncate
// toward zero, except where Go leaves the result to the hardware: NaN becomes 0, and values
// beyond the integer's range (±Inf included) saturate at its minimum or maximum.
func Copy(dst, src *core.Tensor) error {
	if err := usable(src, "source", false); err != nil {
		return err
	}
	if err := usable(dst, "destination", true); err != nil {
		return err
	}
	if !slices.Equal(dst.Shape(), src.Shape()) {
		return errs.Errorf(core.ErrShape, "memory: cannot copy shape %v into shape %v", src.Shape(), dst.Shape())
	}
	if src.Len() == 0 {
		return nil
	}
	if err := dst.CheckNoSelfOverlap(); err != nil {
		return fmt.Errorf("memory: copy destination: %w", err)
	}
	h, err := core.Hold(dst, src)
	if err != nil {
		return fmt.Errorf("memory: copy: %w", err)
	}
	defer h.Release()
	if core.MayShareMemory(dst, src) {
		if sameElements(dst, src) {
			if dst.DType() == src.DType() {
				return nil // every element onto itself
			}
			// a cast in place, element onto the same element: each is read before it is written
		} else {
			// the writes could land on elements not read yet: read them all first, like NumPy's
			// copyto does for overlapping operands
			tmp, err := NewUninit(src.DType(), src.Shape()...) // every element is written next
			if err != nil {
				return fmt.Errorf("memory: copy through a temporary: %w", err)
			}
			defer tmp.Release()
			copyPlanned(tmp, src)
			src = tmp
		}
	}
	return copyPlanned(dst, src)
}

// copyPlanned is Copy once the operands are checked and held, and do not overlap.
func copyPlanned(dst, src *core.Tensor) error {
	p := newPlan(dst, src)
	if dst.DType() == src.DType() {
		copySame(p, dst.DType().Size())
		return nil
	}
	return castInto(p, dst.DType(), src.DType())
}

// sameElements reports whether dst and src address the very same elements in the same order
// with elements of the same size, so that an element-by-element pass reads each element just
// before it writes it.
func sameElements(dst, src *core.Tensor) bool {
	if dst.Data() != src.Data() || dst.DType().Size() != src.DType().Size() {
		return false
	}
	for i := range dst.Ndim() {
		if dst.Dim(i) > 1 && dst.Stride(i) != src.Stride(i) {
			return false
		}
	}
	return true
}

// usable refuses a copy operand (role: "source" or "destination") that Copy cannot use.
func usable(t *core.Tensor, role string, write bool) error {
	switch {
	case t.Released():
		return errs.Errorf(core.ErrReleased, "memory: the copy's %s was released", role)
	case !t.HostAccessible():
		return errs.Errorf(core.ErrNotHost, "memory: the copy's %s is on %s, not in host memory", role, t.Device())
	case write && t.ReadOnly():
		return errs.Errorf(core.ErrReadOnly, "memory: the copy's %s is read-only", role)
	case t.DType().SubByte() || t.DType().Code == core.CodeOpaqueHandle:
		return errs.Errorf(ErrUnsupported, "memory: Copy does not convert %s elements (the %s)", t.DType(), role)
	}
	return nil
}

// markCopied returns t flagged as a copy, and lets go of t itself: t is always a fresh tensor
// from CastOrder, and the flagged view is its only holder from now on.
func markCopied(t *core.Tensor) (*core.Tensor, error) {
	c, err := t.WithFlags(core.FlagIsCopied)
	t.Release()
	return c, err
}

// plan is a copy reduced to its essentials: dimensions of size 1 dropped, neighbours that are
// contiguous in both tensors merged, and each tensor's memory as a byte span with the byte
// position of its first element.
type plan struct {
	shape      []int64
	ds, ss     []int64 // strides in elements
	dst, src   unsafe.Pointer
	dlo, slo   int64 // byte offset of the lowest element relative to the first
	dlen, slen int64 // bytes the span covers
}

func newPlan(dst, src *core.Tensor) plan {
	dst0, src0 := dst.Strides(), src.Strides()
	dims := make([]copyplan.Dim, 0, dst.Ndim())
	for i, d := range dst.Shape() {
		dims = append(dims, copyplan.Dim{N: d, DS: dst0[i], SS: src0[i]})
	}
	dims = copyplan.Merge(dims)
	shape, ds, ss := make([]int64, len(dims)), make([]int64, len(dims)), make([]int64, len(dims))
	for i, d := range dims {
		shape[i], ds[i], ss[i] = d.N, d.DS, d.SS
	}
	if len(shape) == 0 {
		shape, ds, ss = []int64{1}, []int64{1}, []int64{1}
	}
	p := plan{shape: shape, ds: ds, ss: ss, dst: dst.Data(), src: src.Data()}
	p.dlo, p.dlen = byteSpan(shape, ds, int64(dst.DType().Size()))
	p.slo, p.slen = byteSpan(shape, ss, int64(src.DType().Size()))
	return p
}

// bytes is how many bytes the plan's copy writes, with elements of size bytes.
func (p plan) bytes(size int64) int64 {
	n := size
	for _, d := range p.shape {
		n *= d
	}
	return n
}

func byteSpan(shape, strides []int64, size int64) (lo, n int64) {
	lo, hi := copyplan.Extent(shape, strides)
	return lo * size, (hi - lo + 1) * size
}

// spans returns the two byte spans of the plan as slices of W, with the index of each first
// element.
func spans[W any](p plan) (dst, src []W, d0, s0 int64) {
	var w W
	size := int64(unsafe.Sizeof(w))
	dst = unsafe.Slice((*W)(unsafe.Add(p.dst, p.dlo)), p.dlen/size)
	src = unsafe.Slice((*W)(unsafe.Add(p.src, p.slo)), p.slen/size)
	return dst, src, -p.dlo / size, -p.slo / size
}

// forEachRow calls row(d, s) with the span index of the first element of every innermost row,
// walking the outer dimensions like an odometer (the one next to the rows in a plain loop).
func forEachRow(p plan, d0, s0 int64, row func(d, s int64)) {
	if len(p.shape) < 2 {
		row(d0, s0)
		return
	}
	forEachBlock(p, d0, s0, func(d, s, m, da, sa int64) {
		for range m {
			row(d, s)
			d += da
			s += sa
		}
	})
}

// forEachBlock calls block(d, s, m, da, sa) for every block of the innermost two dimensions of
// a plan with at least two: its m rows start at span indices d, d+da, ... and s, s+sa, ....
// Kernels that loop over the rows themselves avoid a call per row, which matters when rows are
// short.
func forEachBlock(p plan, d0, s0 int64, block func(d, s, m, da, sa int64)) {
	a := len(p.shape) - 2
	m, da, sa := p.shape[a], p.ds[a], p.ss[a]
	forEachOuter(p, 2, d0, s0, func(d, s int64) { block(d, s, m, da, sa) })
}

// forEachOuter calls f(d, s) with the span index of the first element of every block of the
// innermost `inner` dimensions, walking the dimensions outside them like an odometer.
func forEachOuter(p plan, inner int, d0, s0 int64, f func(d, s int64)) {
	outer := len(p.shape) - inner
	idx := make([]int64, outer)
	d, s := d0, s0
	for {
		f(d, s)
		k := outer - 1
		for ; k >= 0; k-- {
			idx[k]++
			d += p.ds[k]
			s += p.ss[k]
			if idx[k] < p.shape[k] {
				break
			}
			d -= p.ds[k] * p.shape[k]
			s -= p.ss[k] * p.shape[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

type word interface {
	uint8 | uint16 | uint32 | uint64 | [2]uint64
}

func copySame(p plan, size int) {
	switch size {
	case 1:
		copyWords[uint8](p)
	case 2:
		copyWords[uint16](p)
	case 4:
		copyWords[uint32](p)
	case 8:
		copyWords[uint64](p)
	case 16:
		copyWords[[2]uint64](p)
	default: // vector dtypes with odd sizes: move bytes
		copyBytes(p, int64(size))
	}
}

func copyWords[W word](p plan) {
	tp, tiled := tiledPlan(p)
	if tiled {
		p = tp
	}
	var w W
	size := int64(unsafe.Sizeof(w))
	whole := int(p.bytes(size)) // what the whole copy writes, which decides its stores (useNT)
	if parts, workers := splitPlan(p, tiled, size); parts != nil {
		shareOut(len(parts), workers, func(i int) { copyPlanWords[W](parts[i], tiled, whole) })
		return
	}
	copyPlanWords[W](p, tiled, whole)
}

// splitPlan cuts a large copy into pieces along its outermost dimension, for copyWords to share
// out among the processors it may use (it returns how many; the pieces write disjoint
// elements): piecesPerWorker per processor for transposes and for copies through the cache, one
// for copies of non-temporal rows (ntRows; cut finer, a 256 MiB contiguous copy of
// BenchmarkNumPyCopies measured slower, as did 2-D transposes, which transposeBlocks cuts; figures
// in docs/benchmarks-history.md).
// It returns nil for copies that stay on one goroutine: small ones (below parallelBytes, or
// splitBytes for non-temporal rows), and 2-D transposes, which transposeBlocks splits itself.
// Pieces of a plan with a single dimension are cut at multiples of 64 elements, so that no cache
// line of a compact destination is written from two sides.
func splitPlan(p plan, tiled bool, size int64) ([]plan, int) {
	n0 := p.shape[0]
	total := p.bytes(size)
	workers := int64(min(runtime.GOMAXPROCS(0), 8))
	// transposes (as transposeBlocks splits them) and copies through the cache are cut from
	// parallelBytes, finer; copies of rows written with non-temporal stores from splitBytes
	fine := tiled || !ntRows(p, size)
	from := int64(max(parallelBytes, splitBytes))
	if fine {
		from = int64(parallelBytes)
	}
	if workers < 2 || total < from || (tiled && len(p.shape) < 3) || n0 < 2 {
		return nil, 0
	}
	pieces := workers
	if fine {
		pieces *= piecesPerWorker
	}
	pieces = min(n0, pieces)
	chunk := (n0 + pieces - 1) / pieces
	if len(p.shape) == 1 {
		chunk = (chunk + 63) &^ 63
	}
	var parts []plan
	for i0 := int64(0); i0 < n0; i0 += chunk {
		q := p
		q.shape = slices.Clone(p.shape)
		q.shape[0] = min(chunk, n0-i0)
		q.dst = unsafe.Add(p.dst, i0*p.ds[0]*size)
		q.src = unsafe.Add(p.src, i0*p.ss[0]*size)
		q.dlo, q.dlen = byteSpan(q.shape, q.ds, size)
		q.slo, q.slen = byteSpan(q.shape, q.ss, size)
		parts = append(parts, q)
	}
	if len(parts) < 2 {
		return nil, 0
	}
	return parts, int(workers)
}

// piecesPerWorker is how many pieces splitPlan cuts a transpose of more than two dimensions
// (whole blocks, each a 2-D transpose of its own), or a copy through the cache, into for each
// processor it may use. The pieces are shared out as the goroutines come for them (shareOut), so
// that on a machine busy with other work a goroutine that starts late, or is held up, takes fewer
// pieces, and the copy waits at the end for one small piece rather than for a whole half
// (BenchmarkNumPyCopies' permutations and reversed copies were faster and steadier so; figures
// in docs/benchmarks-history.md).
const piecesPerWorker = 4

// shareOut runs do(0), ..., do(n-1) on up to workers goroutines, the caller's among them: each
// takes the next piece not yet taken until none is left. It returns when all are done.
func shareOut(n, workers int, do func(i int)) {
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			do(i)
		}
	}
	var wg sync.WaitGroup
	for range min(workers, n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// splitBytes is the size from which splitPlan cuts a copy whose rows go out with non-temporal
// stores (ntRows): one processor's non-temporal stores already reach about the memory's speed,
// and a second one adds little but the wait for the slower piece, so such copies are cut only
// from 32 MiB. Other copies write
// through the cache, one line fill after another, and are cut from parallelBytes, as transposes
// are (bound by the latency of their scattered reads): a second processor keeps twice the lines
// in flight. A variable so that tests can lower it (with parallelBytes: the larger of the two
// applies).
var splitBytes = 32 << 20

// ntRows reports whether a plan that is not a transpose writes its rows with non-temporal stores:
// contiguous rows that copyRow hands to Go's copy, which switches to them from 1 MiB on amd64,
// because they are past cachedMax. Without the assembly kernels every contiguous row from 1 MiB
// counts (Go's copy takes them all): on amd64 that is so, elsewhere it keeps such copies split
// from splitBytes, as all copies but transposes were before.
func ntRows(p plan, size int64) bool {
	last := len(p.shape) - 1
	n := p.shape[last] * size
	return p.ds[last] == 1 && p.ss[last] == 1 && n >= 1<<20 && (!haveStrip32 || n > int64(cachedMax))
}

// copyPlanWords is copyWords on one goroutine, for a plan that tiledPlan has already seen, a
// piece of a copy that writes whole bytes in all.
func copyPlanWords[W word](p plan, tiled bool, whole int) {
	dst, src, d0, s0 := spans[W](p)
	if tiled {
		a, b := len(p.shape)-2, len(p.shape)-1
		g := grid{rows: p.shape[a], cols: p.shape[b], dr: p.ds[a], dc: p.ds[b], sr: p.ss[a], sc: p.ss[b]}
		forEachOuter(p, 2, d0, s0, func(d, s int64) { transpose(dst, src, d, s, g, whole) })
		return
	}
	last := len(p.shape) - 1
	n, dstep, sstep := p.shape[last], p.ds[last], p.ss[last]
	if last == 0 {
		strided(dst, src, d0, s0, n, dstep, sstep)
		return
	}
	forEachBlock(p, d0, s0, func(d, s, m, da, sa int64) {
		for range m {
			strided(dst, src, d, s, n, dstep, sstep)
			d += da
			s += sa
		}
	})
}

// strided copies n elements from src[s], src[s+sstep], ... to dst[d], dst[d+dstep], ....
func strided[W word](dst, src []W, d, s, n, dstep, sstep int64) {
	if dstep == 1 && sstep == 1 {
		copyRow(dst[d:d+n], src[s:s+n])
		return
	}
	if dstep == 1 {
		dr := dst[d : d+n]
		_, _ = src[s], src[s+(n-1)*sstep] // the first and last element: the rest lie between
		var w W
		size := int64(unsafe.Sizeof(w))
		base, step := unsafe.Pointer(&src[s]), sstep*size
		off := int64(0)
		i := 0
		if sstep == 2 && haveStrip32 && (size == 4 || size == 8) && n > 1 {
			// every other word (a[..., ::2]): whole source lines through AVX2 shuffles, reading
			// no further than the last element wanted
			if size == 8 {
				i = int(n-1) &^ 3
				gather2x64(unsafe.Pointer(&dr[0]), base, i)
			} else {
				i = int(n-1) &^ 7
				gather2x32(unsafe.Pointer(&dr[0]), base, i)
			}
			off = int64(i) * step
		}
		for ; i+4 <= len(dr); i += 4 {
			dr[i] = *(*W)(unsafe.Add(base, off))
			dr[i+1] = *(*W)(unsafe.Add(base, off+step))
			dr[i+2] = *(*W)(unsafe.Add(base, off+2*step))
			dr[i+3] = *(*W)(unsafe.Add(base, off+3*step))
			off += 4 * step
		}
		for ; i < len(dr); i++ {
			dr[i] = *(*W)(unsafe.Add(base, off))
			off += step
		}
		return
	}
	for range n {
		dst[d] = src[s]
		d += dstep
		s += sstep
	}
}

// copyRow copies a contiguous row. From 1 MiB, where Go's copy switches to non-temporal stores
// on amd64, up to cachedMax, a destination that fits in the cache is written with ordinary stores
// instead (copyCached), so that it stays there as NumPy's does (glibc's memcpy draws the line
// in the same place).
func copyRow[W word](dst, src []W) {
	var w W
	n := len(src) * int(unsafe.Sizeof(w))
	if k := n &^ 127; haveStrip32 && n >= 1<<20 && n <= cachedMax && len(dst) >= len(src) {
		copyCached(unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src)), k)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), n)[k:],
			unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(src))), n)[k:])
		return
	}
	copy(dst, src)
}

// minTiled is the smallest size of both innermost dimensions for which the tiled path pays.
const minTiled = 16

// tiledPlan looks for a transpose in the plan: one tensor compact along the last dimension and
// the other compact along another dimension k, so that a plain row walk would stride through
// memory on one side. It then returns the plan with dimension k moved just inside the last (the
// order in which a copy visits elements does not matter), so that the innermost two dimensions
// can be copied in cache-friendly blocks (see transposeBlocks).
func tiledPlan(p plan) (plan, bool) {
	b := len(p.shape) - 1
	if b < 1 || p.shape[b] < minTiled {
		return p, false
	}
	k := -1
	switch {
	case p.ds[b] == 1 && p.ss[b] != 1:
		k = slices.Index(p.ss, 1)
	case p.ss[b] == 1 && p.ds[b] != 1:
		k = slices.Index(p.ds, 1)
	}
	if k < 0 || k == b || p.shape[k] < minTiled {
		return p, false
	}
	move := func(x []int64) []int64 {
		y := slices.Delete(slices.Clone(x), k, k+1)
		return slices.Insert(y, b-1, x[k])
	}
	p.shape, p.ds, p.ss = move(p.shape), move(p.ds), move(p.ss)
	return p, true
}

// grid is the innermost two dimensions of a tiled plan in span indices: the copy
// dst[d+i*dr+j*dc] = src[s+i*sr+j*sc] for every i < rows and j < cols, from the first elements
// dst[d] and src[s] of one of its blocks.
type grid struct {
	rows, cols     int64
	dr, dc, sr, sc int64
}

// transpose copies the grid g from dst[d] and src[s], where tiledPlan has made one tensor
// compact along i and the other along j: either dc and sr are 1, or dr and sc are. Swapping the
// names of i and j turns the second form into the first, so one kernel, transposeBlocks, does
// both. The grid is part of a copy that writes whole bytes in all.
func transpose[W word](dst, src []W, d, s int64, g grid, whole int) {
	rows, cols, dr, sc := g.rows, g.cols, g.dr, g.sc
	if g.dc != 1 { // sc == 1 and dr == 1: name j the rows
		rows, cols, dr, sc = g.cols, g.rows, g.dc, g.sr
	}
	// the block's corners lie inside the spans (the plan was built from valid tensors), which
	// these index expressions check once before the kernel drops to pointers
	_, _ = dst[d+cols-1], dst[d+(rows-1)*dr]
	_, _ = src[s+rows-1], src[s+(cols-1)*sc]
	_, _ = dst[d+(rows-1)*dr+cols-1], src[s+rows-1+(cols-1)*sc]
	size := int(unsafe.Sizeof(dst[0]))
	transposeBlocks[W](rect{
		dst: unsafe.Pointer(&dst[d]), src: unsafe.Pointer(&src[s]),
		rows: int(rows), cols: int(cols), size: size, dRow: int(dr) * size, sCol: int(sc) * size,
	}, whole)
}

// rect is the transpose the kernels below do, a rectangle of rows×cols words of size bytes: the word at
// row r and column c of the destination, dst + r*dRow + c*size, takes the source's word at
// src + r*size + c*sCol. The source is compact down its columns, the destination along its rows;
// dRow and sCol may have any sign. nt selects non-temporal stores (useNT) where the assembly
// kernels run.
type rect struct {
	dst, src   unsafe.Pointer
	rows, cols int
	size       int // bytes per word
	dRow, sCol int // bytes from one destination row to the next, and one source column to the next
	nt         bool
}

// sub returns the rows×cols part of b whose first word is at row r and column c of b. Parts
// are taken only where they hold a word (r < b.rows, c < b.cols), so that no pointer is formed
// outside the block.
func (b rect) sub(r, c, rows, cols int) rect {
	b.dst = unsafe.Add(b.dst, r*b.dRow+c*b.size)
	b.src = unsafe.Add(b.src, r*b.size+c*b.sCol)
	b.rows, b.cols = rows, cols
	return b
}

// tileKernel is an assembly tile transpose with the geometry the walks need: each call of run
// moves a number of edge×edge tiles of words side by side along a strip of destination rows;
// walking down the source columns (tilesDown), the walk hands it perCall tiles a call.
type tileKernel struct {
	run           func(dst, src unsafe.Pointer, tiles, dRow, sCol, pf int)
	edge, perCall int
}

// transposeBlocks copies the rectangle b of W words (see rect; its nt is set here). The source is
// read down its columns (contiguous along r) and the destination written along its rows.
//
// The walk is shaped by the usual trouble with big transposes, power-of-two strides and 4 KiB
// pages: the words of one source column chunk, or of one destination column, lie a whole row
// apart, so they share an L1 cache set (which holds 8 to 12 lines) and each sits on its own
// memory page. So the kernel moves strips of 8 destination rows: 8 live destination lines
// stay in their set, and each step reads 8 consecutive words of one source column (half a
// cache line for 4-byte words, the other half used by the next strip). The strips are cut
// into bands of stripCols columns, so that the source pages and lines a band touches (one per
// column) stay in the TLB and the L2 cache from one strip to the next. 4-byte words, the
// common case, move two columns at a time through 64-bit registers (transpose32).
//
// Where the CPU has AVX, 4- and 8-byte words go through vector registers in tiles that read and
// write whole 64-byte lines (16 rows of 4-byte words, 8 of 8-byte words; transpose32 and
// transpose64), prefetching the source lines of a tile to come (prefetchOffset: a few strips
// down long columns, where no hardware prefetcher follows them across pages, or a few tiles
// along the strip when a column is shorter than 1 KiB), and a destination past the last-level
// cache is written with non-temporal stores, whole lines at a time, so that its lines are not
// read first (useNT). Where
// the CPU also has AVX-512, each line is one load or one store of a Z register (haveAVX512): the
// AVX kernels' halves of a line must both find it in the L1 cache, where the 16 lines of a tile,
// rows a multiple of 4 KiB apart, share one set. With these tiles and non-temporal stores the
// transpose of a large matrix runs near copy()'s speed on CPUs with AVX-512, and well above the
// through-the-cache walk on the others; on CPUs with AVX2 only (no AVX-512), walking down the
// source columns through a staging block beats walking along the bands (walkDown,
// transposeStaged), and a large permutation picks non-temporal stores for the whole destination
// with whole-line tiles (transposeTiles64L). BenchmarkTransposeAgainstCopy and
// BenchmarkNumPyCopies measure these choices (figures in BENCHMARKS.md and
// docs/benchmarks-history.md).
//
// The block may be one of many of a copy (a permutation of more than two dimensions is a 2-D
// transpose per block) that writes whole bytes in all: the stores are chosen for the whole
// destination (useNT), which is what stays in the cache or not.
//
// The pointer arithmetic has no bounds checks (the caller checks the block's corners), and no
// pointer is ever formed outside the block: offsets advance as integers.
func transposeBlocks[W word](b rect, whole int) {
	// A big transpose is bound by the latency of its scattered source reads more than by memory
	// bandwidth, so it is split by destination rows into pieces for the available processors,
	// the caller's goroutine taking one (shareOut): the pieces write disjoint rows and read
	// disjoint source words.
	b.nt = useNT(b.dst, whole, b.dRow)
	workers := min(runtime.GOMAXPROCS(0), b.rows/64, b.rows*b.cols*b.size/parallelBytes)
	if workers <= 1 {
		transposeRange[W](b)
		return
	}
	// one piece per processor: pieces of fewer rows read shorter runs down each source column,
	// and the first and last strips of each lose their prefetches (BenchmarkTransposeAgainstCopy)
	chunk := (b.rows/workers + 15) &^ 15 // whole tiles, and 32-byte aligned rows stay aligned
	shareOut((b.rows+chunk-1)/chunk, workers, func(i int) {
		r0 := i * chunk
		transposeRange[W](b.sub(r0, 0, min(chunk, b.rows-r0), b.cols))
	})
}

// useNT says whether a kernel writing at dst, in rows dRow bytes apart, into a destination of n
// bytes in all (the whole copy's, of which a block of a permutation is one part) should use
// non-temporal stores: only with the assembly kernels, when the rows are 32-byte aligned (which
// VMOVNTPS needs), and when the destination is too large to stay in the last-level cache anyway
// (then skipping the read of each destination line before it is written saves a third of the
// memory traffic; below that, ordinary stores leave the result in the cache, where the next
// reader wants it).
func useNT(dst unsafe.Pointer, n, dRow int) bool {
	return haveStrip32 && n > cachedMax && uintptr(dst)%32 == 0 && dRow%32 == 0
}

// cachedMax is the largest destination that the kernels write with ordinary stores, so that it
// stays in the cache: 3/8 of the last-level cache (the share of one of a few cores, as glibc's
// memcpy reckons it), or 8 MiB where its size is unknown. On preZen4 CPUs it is 1/8 (one core's
// share of a complex of eight: 4 MiB of a Zen 3's 32 MiB): there, a copy of 8 MiB or more
// followed by a read of its result finished sooner with non-temporal stores, since the cache kept
// little of the result for its reader anyway; at 4 MiB the two came out even (figures in docs/benchmarks-history.md). A
// variable so that tests can send small copies down the other path.
var cachedMax = func() int {
	switch {
	case lastLevelCache <= 0:
		return 8 << 20
	case preZen4:
		return lastLevelCache / 8
	}
	return lastLevelCache * 3 / 8
}()

// parallelBytes is the size of a transpose from which it is split across processors (a
// variable so that tests can send small transposes down the split path).
var parallelBytes = 4 << 20

// transposeRange is transposeBlocks on one goroutine.
func transposeRange[W word](b rect) {
	if b.size == 4 && pairsOK {
		transpose32(b)
		if b.nt {
			storeFence() // before this goroutine reports the piece done
		}
		return
	}
	if b.size == 8 && haveStrip32 {
		transpose64(b)
		if b.nt {
			storeFence()
		}
		return
	}
	dst, src, size, dRow, sCol := b.dst, b.src, b.size, b.dRow, b.sCol
	band := portableStripCols
	for c0 := 0; c0 < b.cols; c0 += band {
		n := min(band, b.cols-c0)
		r := 0
		for ; r+8 <= b.rows; r += 8 {
			do, so := r*dRow+c0*size, r*size+c0*sCol
			for range n {
				q := (*[8]W)(unsafe.Add(src, so))
				*(*W)(unsafe.Add(dst, do)) = q[0]
				*(*W)(unsafe.Add(dst, do+dRow)) = q[1]
				*(*W)(unsafe.Add(dst, do+2*dRow)) = q[2]
				*(*W)(unsafe.Add(dst, do+3*dRow)) = q[3]
				*(*W)(unsafe.Add(dst, do+4*dRow)) = q[4]
				*(*W)(unsafe.Add(dst, do+5*dRow)) = q[5]
				*(*W)(unsafe.Add(dst, do+6*dRow)) = q[6]
				*(*W)(unsafe.Add(dst, do+7*dRow)) = q[7]
				do += size
				so += sCol
			}
		}
		for ; r < b.rows; r++ {
			do, so := r*dRow+c0*size, r*size+c0*sCol
			for range n {
				*(*W)(unsafe.Add(dst, do)) = *(*W)(unsafe.Add(src, so))
				do += size
				so += sCol
			}
		}
	}
}

// transpose32 is transposeBlocks for 4-byte words. Where the CPU has AVX, strips of 16
// destination rows go through vector registers in 16×16 tiles (transposeTiles32: every source
// and destination line it touches is used whole), and what is left of a band in 8×8 blocks
// (transposeStrip32). Otherwise, and for a band's last columns, strip32's pairs of columns do it.
// b.nt selects non-temporal stores for the tiles of either kind; the rest of a band writes through
// the cache.
func transpose32(b rect) {
	if !haveStrip32 {
		transpose32Pairs(b)
		return
	}
	rows, cols, dRow, sCol := b.rows, b.cols, b.dRow, b.sCol
	pf := prefetchOffset(rows*4, sCol)
	tiles := transposeTiles32
	lines := b.nt && uintptr(b.dst)%64 == 0 && dRow%64 == 0 // non-temporal stores of whole lines
	switch {
	case lines && haveAVX512:
		tiles = transposeTiles32ZNT
	case haveAVX512:
		tiles = transposeTiles32Z
	case lines:
		tiles = transposeTiles32NT
	}
	down := lines && walkDown(rows*4)
	if down && staged(tileKernel{run: transposeTiles32, edge: 16, perCall: 1}, transpose32, b, pfDown) {
		return
	}
	for c0 := 0; c0 < cols; c0 += stripCols {
		n := min(stripCols, cols-c0)
		r := 0
		if k := n &^ 15; k > 0 {
			if down {
				tilesDown(tileKernel{run: tiles, edge: 16, perCall: 1}, b.sub(0, c0, rows&^15, k), pfDown)
			}
			for ; r+16 <= rows; r += 16 {
				do, so := r*dRow+c0*4, r*4+c0*sCol
				if !down {
					tiles(unsafe.Add(b.dst, do), unsafe.Add(b.src, so), k/16, dRow, sCol, pf)
				}
				if k < n {
					strip32(b, do+4*k, so+k*sCol, n-k)
					strip32(b, do+4*k+8*dRow, so+32+k*sCol, n-k)
				}
			}
		}
		for ; r+8 <= rows; r += 8 {
			strip32(b, r*dRow+c0*4, r*4+c0*sCol, n)
		}
		for ; r < rows; r++ {
			do, so := r*dRow+c0*4, r*4+c0*sCol
			for range n {
				*(*uint32)(unsafe.Add(b.dst, do)) = *(*uint32)(unsafe.Add(b.src, so))
				do += 4
				so += sCol
			}
		}
	}
}

// transpose32Pairs is transpose32 without AVX, kept as one loop nest (as it was before the
// tile kernels, which measured faster than going through strip32): each step loads 8 words of
// each of two adjacent source columns as four 64-bit pairs per column and stores, in each of
// the 8 destination rows, the pair of words that row takes from the two columns.
func transpose32Pairs(b rect) {
	const lo = 0xffffffff
	dst, src, dRow, sCol := b.dst, b.src, b.dRow, b.sCol
	for c0 := 0; c0 < b.cols; c0 += portableStripCols {
		n := min(portableStripCols, b.cols-c0)
		r := 0
		for ; r+8 <= b.rows; r += 8 {
			do, so := r*dRow+c0*4, r*4+c0*sCol
			k := 0
			for ; k+2 <= n; k += 2 {
				a := (*[4]uint64)(unsafe.Add(src, so))
				b := (*[4]uint64)(unsafe.Add(src, so+sCol))
				a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
				b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
				*(*uint64)(unsafe.Add(dst, do)) = a0&lo | b0<<32
				*(*uint64)(unsafe.Add(dst, do+dRow)) = a0>>32 | b0&^lo
				*(*uint64)(unsafe.Add(dst, do+2*dRow)) = a1&lo | b1<<32
				*(*uint64)(unsafe.Add(dst, do+3*dRow)) = a1>>32 | b1&^lo
				*(*uint64)(unsafe.Add(dst, do+4*dRow)) = a2&lo | b2<<32
				*(*uint64)(unsafe.Add(dst, do+5*dRow)) = a2>>32 | b2&^lo
				*(*uint64)(unsafe.Add(dst, do+6*dRow)) = a3&lo | b3<<32
				*(*uint64)(unsafe.Add(dst, do+7*dRow)) = a3>>32 | b3&^lo
				do += 8
				so += 2 * sCol
			}
			if k < n { // the band's last column
				q := (*[8]uint32)(unsafe.Add(src, so))
				for k, v := range q {
					*(*uint32)(unsafe.Add(dst, do+k*dRow)) = v
				}
			}
		}
		for ; r < b.rows; r++ {
			do, so := r*dRow+c0*4, r*4+c0*sCol
			for range n {
				*(*uint32)(unsafe.Add(dst, do)) = *(*uint32)(unsafe.Add(src, so))
				do += 4
				so += sCol
			}
		}
	}
}

// strip32 moves n columns of a strip of 8 destination rows of b, from byte offsets do and so:
// whole 8×8 blocks through vector registers where the CPU has AVX (transposeStrip32), the rest
// two columns at a time: each step loads 8 words of each of two adjacent source columns as four
// 64-bit pairs per column and stores, in each of the 8 destination rows, the pair of words that
// row takes from the two columns, as one 64-bit store: half the loads and stores of a
// word-by-word walk. It relies on little-endian order and on unaligned 64-bit access being
// allowed (see pairsOK).
func strip32(b rect, do, so, n int) {
	const lo = 0xffffffff
	dst, src, dRow, sCol := b.dst, b.src, b.dRow, b.sCol
	k := 0
	if haveStrip32 { // whole 8×8 blocks in vector registers (kernels_amd64.s)
		if k = n &^ 7; k > 0 {
			transposeStrip32(unsafe.Add(dst, do), unsafe.Add(src, so), k/8, dRow, sCol)
			do += 4 * k
			so += k * sCol
		}
	}
	for ; k+2 <= n; k += 2 {
		a := (*[4]uint64)(unsafe.Add(src, so))
		b := (*[4]uint64)(unsafe.Add(src, so+sCol))
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		*(*uint64)(unsafe.Add(dst, do)) = a0&lo | b0<<32
		*(*uint64)(unsafe.Add(dst, do+dRow)) = a0>>32 | b0&^lo
		*(*uint64)(unsafe.Add(dst, do+2*dRow)) = a1&lo | b1<<32
		*(*uint64)(unsafe.Add(dst, do+3*dRow)) = a1>>32 | b1&^lo
		*(*uint64)(unsafe.Add(dst, do+4*dRow)) = a2&lo | b2<<32
		*(*uint64)(unsafe.Add(dst, do+5*dRow)) = a2>>32 | b2&^lo
		*(*uint64)(unsafe.Add(dst, do+6*dRow)) = a3&lo | b3<<32
		*(*uint64)(unsafe.Add(dst, do+7*dRow)) = a3>>32 | b3&^lo
		do += 8
		so += 2 * sCol
	}
	if k < n { // the last column
		q := (*[8]uint32)(unsafe.Add(src, so))
		for k, v := range q {
			*(*uint32)(unsafe.Add(dst, do+k*dRow)) = v
		}
	}
}

// transpose64 is transposeBlocks for 8-byte words where the CPU has AVX: strips of 8
// destination rows in 8×8 tiles through vector registers (transposeTiles64), the rest of each
// band word by word.
func transpose64(b rect) {
	rows, cols, dRow, sCol := b.rows, b.cols, b.dRow, b.sCol
	pf := prefetchOffset(rows*8, sCol)
	tiles := transposeTiles64
	lines := b.nt && uintptr(b.dst)%64 == 0 && dRow%64 == 0 // non-temporal stores of whole lines
	switch {
	case lines && haveAVX512:
		tiles = transposeTiles64ZNT
	case lines:
		tiles = transposeTiles64L
	case b.nt:
		tiles = transposeTiles64NT
	case haveAVX512:
		tiles = transposeTiles64Z
	}
	down := b.nt && walkDown(rows*8)
	if down && staged(tileKernel{run: transposeTiles64, edge: 8, perCall: 2}, transpose64, b, pfDown) {
		return
	}
	for c0 := 0; c0 < cols; c0 += stripCols {
		n := min(stripCols, cols-c0)
		k := n &^ 7
		r := 0
		if down && k > 0 {
			tilesDown(tileKernel{run: tiles, edge: 8, perCall: 2}, b.sub(0, c0, rows&^7, k), pfDown)
		}
		for ; r+8 <= rows; r += 8 {
			do, so := r*dRow+c0*8, r*8+c0*sCol
			if k > 0 {
				if !down {
					tiles(unsafe.Add(b.dst, do), unsafe.Add(b.src, so), k/8, dRow, sCol, pf)
				}
				do += 8 * k
				so += k * sCol
			}
			for range n - k {
				q := (*[8]uint64)(unsafe.Add(b.src, so))
				for j, v := range q {
					*(*uint64)(unsafe.Add(b.dst, do+j*dRow)) = v
				}
				do += 8
				so += sCol
			}
		}
		for ; r < rows; r++ {
			do, so := r*dRow+c0*8, r*8+c0*sCol
			for range n {
				*(*uint64)(unsafe.Add(b.dst, do)) = *(*uint64)(unsafe.Add(b.src, so))
				do += 8
				so += sCol
			}
		}
	}
}

// walkDown says whether the tile kernels, writing with non-temporal stores, should walk down the
// source columns rather than along the bands: for columns of at least downColumn bytes, on the
// CPUs where that was measured faster (downWalk). Blocks that hold a whole staged block go
// through transposeStaged, narrower ones through tilesDown alone. On a 2-core AMD EPYC VM of that
// kind (Zen 3, family 19h model 1, AVX2 only), where a tile's 16 source lines, a power of two
// apart, share their L1 and L2 sets and a band's strips keep hundreds of such lines in flight,
// walking down the columns is faster for 4- and 8-byte words on one processor and on two. Walks
// of 1 KiB down each column were slower than the bands, and on CPUs with AVX-512 walks of many
// tiles were slower too: those keep the bands (figures in docs/benchmarks-history.md).
func walkDown(column int) bool { return downWalk && column >= downColumn }

// pfDown is how far down the source columns the tiles prefetch when they walk down them, in
// bytes: two or three tiles ahead. The hardware prefetchers follow the 16 streams of such a walk,
// and farther prefetches only crowd the cache: 64 and 128 bytes measured best, 256 bytes and
// more slower (figures in docs/benchmarks-history.md).
var pfDown = 128

// downColumn is the shortest source column, in bytes, that walkDown walks down: a page.
const downColumn = 4096

// tilesDown transposes the block b with the tile kernel k, one group of perCall·edge source
// columns at a time, down the rows of the block, perCall tiles a call: the source is read as
// edge·perCall streams, each down one column, which the hardware prefetchers follow, and the
// destination written a line per row and call. b's rows and columns are multiples of k.edge.
func tilesDown(k tileKernel, b rect, pf int) {
	for c := 0; c < b.cols; c += k.edge * k.perCall {
		n := min(k.perCall, (b.cols-c)/k.edge)
		d, s := c*b.size, c*b.sCol
		for r := 0; r < b.rows; r += k.edge {
			k.run(unsafe.Add(b.dst, d), unsafe.Add(b.src, s), n, b.dRow, b.sCol, pf)
			d += k.edge * b.dRow
			s += k.edge * b.size
		}
	}
}

// staged transposes the whole tiles of the whole staged blocks of b (see transposeStaged) with the
// tile kernel k and hands the columns and rows left of them to rest, the transpose of that word
// size; it reports false, having done nothing, for a block that holds no staged block.
func staged(k tileKernel, rest func(rect), b rect, pf int) bool {
	w := stageBytes / b.size
	c, r := b.cols/w*w, b.rows/k.edge*k.edge
	if c == 0 || r == 0 {
		return false
	}
	transposeStaged(k, b.sub(0, 0, r, c), pf)
	if c < b.cols {
		rest(b.sub(0, c, b.rows, b.cols-c))
	}
	if r < b.rows {
		rest(b.sub(r, 0, b.rows-r, c))
	}
	return true
}

// transposeStaged transposes the block b (rows a multiple of k.edge, columns of stageBytes/size)
// through a staging block in the cache: each part of stageRows destination rows and
// stageBytes/size columns is transposed into the staging block by k, a tile kernel that writes
// through the cache, walking down the source columns
// (tilesDown: 16 source streams at a time), then written out row by row with non-temporal stores
// (copyRowsNT), 256 bytes a row. The walk down the columns reads the source at memory speed, but
// writes the destination one 64-byte line per row and tile, which memory takes at a fraction
// of its speed for long runs: staged, the transpose is faster than walking down without the
// stage, and faster still with the prefetch distance pfDown. Runs of 128 bytes and blocks of 128
// rows measured slower, blocks of 256 or 1024 rows no faster (figures in docs/benchmarks-history.md).
func transposeStaged(k tileKernel, b rect, pf int) {
	stage := stagePool.Get().(*[stageRows * stageBytes]byte)
	defer stagePool.Put(stage)
	w := stageBytes / b.size
	for c0 := 0; c0 < b.cols; c0 += w {
		for r0 := 0; r0 < b.rows; r0 += stageRows {
			part := b.sub(r0, c0, min(stageRows, b.rows-r0), w)
			tilesDown(k, rect{dst: unsafe.Pointer(stage), src: part.src, rows: part.rows, cols: w,
				size: b.size, dRow: stageBytes, sCol: b.sCol}, pf)
			copyRowsNT(part.dst, unsafe.Pointer(stage), part.rows, stageBytes, b.dRow, stageBytes)
		}
	}
}

// stageRows and stageBytes are the shape of transposeStaged's staging block: 512 destination
// rows of 256 bytes (128 KiB, in a 512 KiB L2 cache with the source lines in flight).
const stageRows, stageBytes = 512, 256

// stagePool keeps the staging blocks of transposeStaged, one per transpose running at a time.
var stagePool = sync.Pool{New: func() any { return new([stageRows * stageBytes]byte) }}

// prefetchOffset returns the offset from a tile's source at which the tile kernels prefetch:
// pfAhead bytes down the columns when they are long, and pfCols columns along the strip when
// a column holds fewer than shortColumn bytes, where pfAhead would land in the next column, whose
// lines the tile is reading anyway.
func prefetchOffset(column, sCol int) int {
	if column < shortColumn {
		return pfCols * sCol
	}
	return pfAhead
}

// shortColumn is the length in bytes under which a source column counts as short for
// prefetchOffset, and pfCols how many columns along the strip its tiles then prefetch (measured
// on the 256-byte columns of BenchmarkNumPyCopies' permutation, where 32 and 128 columns did no
// better).
const shortColumn, pfCols = 1024, 64

// pfAhead is how far down its source columns a tile kernel prefetches, in bytes: the lines
// that the strips 256 bytes on will read (a column's lines are a whole row apart, across pages,
// where no hardware prefetcher follows them).
var pfAhead = 256

// stripCols is the width, in columns, of the bands transposeBlocks cuts a block into for the
// AVX tile kernels, and portableStripCols for the portable ones (measured best for each on a
// 2-core AMD EPYC VM: 256 columns against 128 and 512 for the tiles, whose prefetches need the
// band's lines to stay in L2; 512 against 256 for the portable loops).
var stripCols = 256

const portableStripCols = 512

// pairsOK says whether transpose32 may run here: it needs little-endian words and unaligned
// 64-bit loads and stores (4-byte words are only 4-byte aligned), which amd64 and arm64 have.
var pairsOK = func() bool {
	x := uint16(1)
	little := *(*byte)(unsafe.Pointer(&x)) == 1
	return little && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")
}()

func copyBytes(p plan, size int64) {
	dst, src, _, _ := spans[byte](p)
	last := len(p.shape) - 1
	n, dstep, sstep := p.shape[last], p.ds[last], p.ss[last]
	forEachRow(p, -p.dlo/size, -p.slo/size, func(d, s int64) {
		for i := int64(0); i < n; i++ {
			do, so := (d+i*dstep)*size, (s+i*sstep)*size
			copy(dst[do:do+size], src[so:so+size])
		}
	})
}
