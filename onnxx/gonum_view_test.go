package onnxx_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/onnxx"
)

// rowOf returns row r of a row view (a Gonum value derived from the Dense, which holds nothing).
func rowOf(v mat.Vector) []float64 {
	out := make([]float64, v.Len())
	for i := range out {
		out[i] = v.AtVec(i)
	}
	return out
}

// TestGonumViewOfLentOutput: a lent output (a fixed-shape float64 MatMul) wrapped by
// gonumx.ToDense, then a RowView taken, the Dense collected and the output released: the
// session never lends that block again (core.Attach forfeits it), so the runs that follow do not
// write into memory the row view still reads.
func TestGonumViewOfLentOutput(t *testing.T) {
	s, err := onnxx.NewSession(model("matmul_float64"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	run := func(k float64) *core.Tensor {
		a, b := make([]float64, 8*16), make([]float64, 16*4)
		for i := range a {
			a[i] = k
		}
		for i := range b {
			b[i] = float64(i%4 + 1)
		}
		out, err := s.Run(map[string]*core.Tensor{"A": core.MustFromSlice(a, 8, 16), "B": core.MustFromSlice(b, 16, 4)})
		require.NoError(t, err)
		return out["C"]
	}
	want := []float64{16, 32, 48, 64} // row 0 of A·B with A all ones
	c := run(1)
	require.False(t, c.Foreign(), "a lent output, over the session's Go memory")
	d, err := gonumx.ToDense(c)
	require.NoError(t, err)
	row := d.RowView(0)
	d = nil
	c.Release()
	leakcheck.Settle()
	for k := 2.0; k < 12; k++ {
		x := run(k)
		e, err := core.ReadOnlyElements[float64](x)
		require.NoError(t, err)
		assert.Equal(t, 16*k*2, e[1], "run %v", k)
		x.Release() // its block is lent again by the next run
		assert.Equal(t, want, rowOf(row), "the row view after run %v", k)
	}
}

// TestGonumViewOfORTOutput: an output over ORT's buffer (a dynamic shape) wrapped by
// gonumx.ToDense: the Dense holds ORT's value (core.Attach), the row views derived from it do
// not, so gonumx's rule applies: keep the Dense reachable while a view of it is used. Then the
// output's Release frees nothing, and later runs leave the row view as it was.
func TestGonumViewOfORTOutput(t *testing.T) {
	s, err := onnxx.NewSession(model("dyn_float64"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	run := func(k float64) *core.Tensor {
		out, err := s.Run(map[string]*core.Tensor{"X": core.MustFromSlice([]float64{k, k + 1, k + 2, k + 3, k + 4, k + 5}, 2, 3)})
		require.NoError(t, err)
		return out["Y"]
	}
	y := run(1)
	require.True(t, y.Foreign(), "over ORT's buffer")
	d, err := gonumx.ToDense(y)
	require.NoError(t, err)
	row := d.RowView(1)
	y.Release()
	leakcheck.Settle()
	for k := 10.0; k < 20; k++ {
		x := run(k)
		x.Release()
		assert.Equal(t, []float64{4, 5, 6}, rowOf(row), "the row view after run %v", k)
	}
	runtime.KeepAlive(d) // the rule: the Dense outlives every use of its views
}
