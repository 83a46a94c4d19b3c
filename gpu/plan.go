package gpu

import (
	"sort"

	"github.com/dlpack-go/dlpack/internal/copyplan"
)

// This file plans strided copies as rectangles: the DMA engines copy "rows of width bytes,
// pitch bytes apart" (cuMemcpy2D), so a copy between two strided layouts of the same shape
// becomes, after simplification, a series of such rectangles. It is pure Go: the executor that
// carries the rectangles out is a parameter, the CUDA driver in production and host memory in
// the tests of this file's logic.

// pdim is one dimension of a copy: its size and the byte strides in the destination and the
// source.
type pdim = copyplan.Dim

// rectPlan is a strided copy as rectangles. Each index of the outer dimensions (odometer
// order) gives one rectangle of height rows of width bytes, starting at dst0 + Σ i*ds in the
// destination and src0 + Σ i*ss in the source (byte offsets from the first elements), with row
// pitches dpitch and spitch.
type rectPlan struct {
	dst0, src0     int64
	width, height  int64
	dpitch, spitch int64
	outer          []pdim
}

// planRects plans the copy of shape elements of size bytes from layout ss to layout ds (strides
// in elements). It fails (ok false) when no rectangles can express the copy: a dimension whose
// strides have different signs, a zero stride, or an overlapping source whose pitch is shorter
// than its rows. Empty shapes give an empty plan.
func planRects(shape, ds, ss []int64, size int64) (p rectPlan, ok bool) {
	return planRows(shape, ds, ss, size, true)
}

// planElements is planRects with rows of one element each: it fails only for strides of
// different signs or a zero stride, so it plans the copy of a source whose rows overlap (a
// sliding window), one element per row.
func planElements(shape, ds, ss []int64, size int64) (p rectPlan, ok bool) {
	return planRows(shape, ds, ss, size, false)
}

// planRows is planRects, with rows as long as the layouts allow when long, else of one element.
func planRows(shape, ds, ss []int64, size int64, long bool) (p rectPlan, ok bool) {
	dims := make([]pdim, 0, len(shape))
	for i, n := range shape {
		if n == 0 {
			return rectPlan{height: 0, width: size}, true
		}
		if n == 1 {
			continue
		}
		d, s := ds[i]*size, ss[i]*size
		if d < 0 && s < 0 {
			// walk the dimension backwards in both: start at its last element
			p.dst0 += (n - 1) * d
			p.src0 += (n - 1) * s
			d, s = -d, -s
		}
		if d <= 0 || s <= 0 {
			return rectPlan{}, false
		}
		dims = append(dims, pdim{N: n, DS: d, SS: s})
	}
	sort.SliceStable(dims, func(i, j int) bool {
		if dims[i].DS != dims[j].DS {
			return dims[i].DS > dims[j].DS
		}
		return dims[i].SS > dims[j].SS
	})
	dims = copyplan.Merge(dims)
	p.width, p.height = size, 1
	if k := len(dims) - 1; long && k >= 0 && dims[k].DS == size && dims[k].SS == size {
		p.width = dims[k].N * size
		dims = dims[:k]
	}
	p.dpitch, p.spitch = p.width, p.width
	if k := len(dims) - 1; k >= 0 {
		p.height, p.dpitch, p.spitch = dims[k].N, dims[k].DS, dims[k].SS
		dims = dims[:k]
		if p.dpitch < p.width || p.spitch < p.width {
			return rectPlan{}, false
		}
	}
	p.outer = dims
	return p, true
}

// rects returns how many rectangles the plan has.
func (p rectPlan) rects() int64 {
	if p.height == 0 {
		return 0
	}
	n := int64(1)
	for _, d := range p.outer {
		n *= d.N
	}
	return n
}

// bytes returns how many bytes the plan copies.
func (p rectPlan) bytes() int64 { return p.rects() * p.height * p.width }

// efficient reports whether carrying the plan out directly beats staging the copy through host
// memory: rows that are long enough for the copy engines, or few rectangles.
func (p rectPlan) efficient() bool {
	return p.width >= 512 || p.rects()*p.height <= 64
}

// each calls f with the byte offsets of every rectangle, stopping at the first error.
func (p rectPlan) each(f func(dst, src int64) error) error {
	if p.rects() == 0 {
		return nil
	}
	idx := make([]int64, len(p.outer))
	d, s := p.dst0, p.src0
	for {
		if err := f(d, s); err != nil {
			return err
		}
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			d += p.outer[k].DS
			s += p.outer[k].SS
			if idx[k] < p.outer[k].N {
				break
			}
			d -= p.outer[k].DS * p.outer[k].N
			s -= p.outer[k].SS * p.outer[k].N
			idx[k] = 0
		}
		if k < 0 {
			return nil
		}
	}
}

// dense reports whether a layout covers its span exactly once: some order of its dimensions
// is compact (a permutation of C order, negative strides allowed). Copying such a tensor's span
// copies its elements and nothing else.
func dense(shape, strides []int64) bool {
	type ax struct{ n, st int64 }
	axes := make([]ax, 0, len(shape))
	for i, n := range shape {
		if n == 0 {
			return true
		}
		if n > 1 {
			st := strides[i]
			if st < 0 {
				st = -st
			}
			axes = append(axes, ax{n, st})
		}
	}
	sort.Slice(axes, func(i, j int) bool { return axes[i].st < axes[j].st })
	want := int64(1)
	for _, a := range axes {
		if a.st != want {
			return false
		}
		want *= a.n
	}
	return true
}

// compactLike returns strides for shape that are compact (no gaps) but keep the order and signs
// of strides: the dimension with the smallest |stride| varies fastest and a negative stride stays
// negative. A copy between a layout and its compactLike layout always plans as rectangles.
// Dimensions with stride 0 get a compact stride too.
func compactLike(shape, strides []int64) []int64 {
	order := make([]int, len(shape))
	for i := range order {
		order[i] = i
	}
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := abs(strides[order[i]]), abs(strides[order[j]])
		if a != b {
			return a < b
		}
		return order[i] > order[j] // ties: C order
	})
	out := make([]int64, len(shape))
	step := int64(1)
	for _, i := range order {
		out[i] = step
		if strides[i] < 0 {
			out[i] = -step
		}
		if shape[i] > 1 {
			step *= shape[i]
		}
	}
	return out
}
