package core

import "iter"

// Indices yields every index tuple of shape in C order (the last index fastest): none for a
// shape with a 0 in it, one (the empty tuple) for a 0-d shape. The yielded slice is reused
// between steps: copy it to keep it.
//
//	for idx := range core.Indices(t.Shape()) {
//		off, _ := t.Offset(idx...)
//		...
//	}
func Indices(shape []int64) iter.Seq[[]int64] {
	return func(yield func([]int64) bool) {
		for _, d := range shape {
			if d <= 0 {
				return
			}
		}
		idx := make([]int64, len(shape))
		for {
			if !yield(idx) {
				return
			}
			k := len(idx) - 1
			for ; k >= 0; k-- {
				if idx[k]++; idx[k] < shape[k] {
					break
				}
				idx[k] = 0
			}
			if k < 0 {
				return
			}
		}
	}
}
