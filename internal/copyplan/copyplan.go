// Package copyplan is the planning that every strided copy of this module starts from: the
// kernels of package adapters (host memory) and the copy engines of package gpu (rectangles for
// cuMemcpy2D) reduce a copy between two layouts of one shape to the fewest dimensions with the
// same elements, and measure the memory a layout spans, with these functions.
package copyplan

// Dim is one dimension of a copy between two layouts of the same shape: its size and its stride
// in the destination and in the source (in elements or in bytes, as the caller counts).
type Dim struct{ N, DS, SS int64 }

// Merge returns dims without the dimensions of size 1 (they move nothing) and with each
// dimension folded into the one before it whenever that one steps, in both layouts, exactly over
// the whole of it (outer stride = inner stride × inner size): a C-contiguous run of rows becomes
// one long row. The order of the dimensions is kept (outermost first). It reuses dims' array.
func Merge(dims []Dim) []Dim {
	out := dims[:0]
	for _, d := range dims {
		if d.N == 1 {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].DS == d.DS*d.N && out[k].SS == d.SS*d.N {
			out[k] = Dim{out[k].N * d.N, d.DS, d.SS}
			continue
		}
		out = append(out, d)
	}
	return out
}

// Extent returns the offsets, relative to the first element, of the lowest and the highest
// element of a layout (in the strides' unit); for an empty shape it returns 0, -1.
func Extent(shape, strides []int64) (lo, hi int64) {
	for i, n := range shape {
		if n == 0 {
			return 0, -1
		}
		if st := strides[i] * (n - 1); st < 0 {
			lo += st
		} else {
			hi += st
		}
	}
	return lo, hi
}
