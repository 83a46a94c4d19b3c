package memory_test

import (
	"math/rand/v2"
	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/stretchr/testify/require"
)

// fuzzView builds a view of a random buffer from fuzz bytes: a dtype, a base shape of up to 5
// dimensions (two of them may be large), a slice (start, stop, step in -3..3) per axis, a permutation and an optional
// broadcast. Missing bytes read as zero.
func fuzzView(t *testing.T, data []byte) *core.Tensor {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	dt := allDTypes[next()%len(allDTypes)]
	ndim := next() % 6
	shape := make([]int64, ndim)
	big := 0
	for i := range shape {
		b := next()
		shape[i] = int64(b % 9)
		if b >= 200 && big < 2 { // up to two dimensions large enough for the tiled transpose
			shape[i] = int64(16 + b%40)
			big++
		}
	}
	r := rand.New(rand.NewPCG(uint64(len(data)), 7))
	x := randomTensor(t, r, dt, shape...)
	var err error
	for ax := range ndim {
		start, stop := int64(next()%11)-5, int64(next()%11)-5
		step := int64(next()%7) - 3
		if step == 0 {
			step = 1
		}
		if next()%2 == 0 {
			start, stop = core.Begin, core.End
			if step < 0 {
				start, stop = core.End, core.Begin
			}
		}
		x, err = x.Slice(ax, start, stop, step)
		require.NoError(t, err)
	}
	if ndim > 1 {
		axes := r.Perm(ndim)
		rot := next() % ndim // make the permutation depend on the input too
		for i := range axes {
			axes[i] = (axes[i] + rot) % ndim
		}
		x, err = x.Permute(axes...)
		require.NoError(t, err)
	}
	if b := next(); b%3 == 0 && ndim < 5 {
		x, err = x.BroadcastTo(append([]int64{int64(b%4 + 1)}, x.Shape()...)...)
		require.NoError(t, err)
	}
	return x
}

// FuzzCopy checks Clone in both orders, and Copy into a destination of other strides, against
// the element-by-element reference on random views.
func FuzzCopy(f *testing.F) {
	f.Add([]byte{11, 2, 4, 5, 0, 0, 1, 1, 0, 0, 1, 1, 0})
	f.Add([]byte{13, 3, 3, 4, 5, 1, 9, 2, 0, 2, 9, 0, 1, 0, 0, 5, 1, 1, 3})
	f.Add([]byte{0, 5, 2, 2, 2, 2, 2, 0, 0, 6, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 2, 0})
	f.Add([]byte{14, 1, 8, 10, 0, 0, 0})
	f.Add([]byte{6, 2, 0, 7, 0, 0, 1, 0, 0, 1, 0, 0})
	f.Add([]byte{9, 0, 3})
	f.Add([]byte{11, 2, 220, 230, 0, 0, 1, 0, 0, 1, 0})
	f.Add([]byte{7, 3, 2, 201, 255, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 1, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		src := fuzzView(t, data)
		c, err := memory.Clone(src, memory.COrder)
		require.NoError(t, err)
		requireSameElements(t, src, c, src)
		fo, err := memory.Clone(src, memory.FortranOrder)
		require.NoError(t, err)
		requireSameElements(t, src, fo, src)
		// a destination in Fortran order, reversed along its first axis
		dst, err := memory.Clone(c, memory.FortranOrder)
		require.NoError(t, err)
		if dst.Ndim() > 0 {
			dst, err = dst.Reverse(0)
			require.NoError(t, err)
		}
		require.NoError(t, memory.Copy(dst, src))
		requireSameElements(t, src, dst, src)
	})
}
