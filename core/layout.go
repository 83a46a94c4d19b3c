package core

import (
	"math/bits"
	"slices"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// MaxNdim is the most dimensions a tensor may have (NumPy's limit). Foreign descriptors with more
// are refused before their shape is read.
const MaxNdim = 64

// mul returns a*b and whether it fits in an int64.
func mul(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(abs(a)), uint64(abs(b)))
	if hi != 0 || lo > 1<<63-1 {
		return 0, false
	}
	p := int64(lo)
	if (a < 0) != (b < 0) {
		p = -p
	}
	return p, true
}

// add returns a+b and whether it fits in an int64.
func add(a, b int64) (int64, bool) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, false
	}
	return s, true
}

func abs(a int64) int64 {
	if a < 0 {
		return -a // MinInt64 stays MinInt64 and fails the check in mul
	}
	return a
}

// numElements checks the shape (no negative dimension, no overflow) and returns its product.
func numElements(shape []int64) (int64, error) {
	n, all := int64(1), int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, errs.Errorf(ErrShape, "core: shape[%d] = %d is negative", i, d)
		}
		// all is the product with zeros counted as ones: the strides of an empty tensor are
		// still computed from the other dimensions, and every one of them must fit an int64
		var ok bool
		if all, ok = mul(all, max(d, 1)); !ok {
			// (a copy in the message, so that shape does not escape: New's variadic shape stays
			// on the caller's stack)
			return 0, errs.Errorf(ErrOverflow, "core: the product of shape %v overflows int64 (dimensions of size 0 counted as 1)", slices.Clone(shape))
		}
		n *= d
	}
	return n, nil
}

// cStrides returns the compact row-major strides of a validated shape.
func cStrides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	fillCStrides(s, shape)
	return s
}

// fillCStrides writes the compact row-major strides of a validated shape into s.
func fillCStrides(s, shape []int64) {
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		if shape[i] > 1 {
			acc *= shape[i]
		}
	}
}

// fStrides returns the compact column-major strides of a validated shape.
func fStrides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := range shape {
		s[i] = acc
		if shape[i] > 1 {
			acc *= shape[i]
		}
	}
	return s
}

// extent returns the element offsets (relative to the first element) of the lowest and the
// highest element a non-empty strided layout touches, refusing layouts whose offsets overflow.
func extent(shape, strides []int64) (lo, hi int64, err error) {
	for i, d := range shape {
		if d <= 1 {
			continue
		}
		span, ok := mul(d-1, strides[i])
		if !ok {
			return 0, 0, errs.Errorf(ErrOverflow, "core: (shape[%d]-1)*strides[%d] = (%d-1)*%d overflows int64", i, i, d, strides[i])
		}
		if span < 0 {
			lo, ok = add(lo, span)
		} else {
			hi, ok = add(hi, span)
		}
		if !ok {
			return 0, 0, errs.Errorf(ErrOverflow, "core: the element offsets of shape %v, strides %v overflow int64", slices.Clone(shape), slices.Clone(strides))
		}
	}
	return lo, hi, nil
}

// contiguous reports whether strides are compact for shape in C order (fortran=false) or Fortran
// order. Dimensions of size 1 may carry any stride, and an empty tensor is contiguous whatever
// its strides say (DLPack practice).
func contiguous(shape, strides []int64, fortran bool) bool {
	if slices.Contains(shape, 0) {
		return true
	}
	acc := int64(1)
	for k := range shape {
		i := len(shape) - 1 - k
		if fortran {
			i = k
		}
		if shape[i] == 1 {
			continue
		}
		if strides[i] != acc {
			return false
		}
		acc *= shape[i]
	}
	return true
}
