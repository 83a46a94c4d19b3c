package onnxx

import (
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunKept: the path of repeated inference is taken exactly when every tensor is one the
// session kept a value over and the session's scratch is free; it computes what the general path
// computes, from the tensors' current elements.
func TestRunKept(t *testing.T) {
	s, err := NewSession(modeltest.Model("small"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	xs := make([]float32, 64)
	for i := range xs {
		xs[i] = float32(i%7) - 3
	}
	x, y := core.MustFromSlice(xs, 1, 64), core.MustNew(core.Float32, 1, 64)
	ins, outs := []*core.Tensor{x}, []*core.Tensor{y}
	want := func() []float32 { // the general path, on a new output
		t.Helper()
		out, err := s.Run(map[string]*core.Tensor{"X": x})
		require.NoError(t, err)
		defer out["Y"].Release()
		e, err := core.ReadOnlyElements[float32](out["Y"])
		require.NoError(t, err)
		return append([]float32{}, e...)
	}
	got := func() []float32 {
		e, err := core.ReadOnlyElements[float32](y)
		require.NoError(t, err)
		return e
	}

	done, err := s.runKept(ins, outs, 0)
	require.NoError(t, err)
	assert.False(t, done, "nothing is kept before the first run")
	require.NoError(t, s.RunInto(ins, outs)) // the general path keeps the values
	first := append([]float32{}, got()...)
	assert.Equal(t, want(), first)

	clear(got())
	done, err = s.runKept(ins, outs, 0)
	require.NoError(t, err)
	require.True(t, done, "the same tensors: the kept values")
	assert.Equal(t, first, got())
	assert.NotZero(t, got()[0]+got()[1]+got()[63], "ORT wrote the output")

	xs[0], xs[63] = 10, -10 // ORT reads the input's current elements
	done, err = s.runKept(ins, outs, 0)
	require.NoError(t, err)
	require.True(t, done)
	assert.Equal(t, want(), got())
	assert.NotEqual(t, first, got())

	// another output tensor, another input tensor over the same memory: not kept
	y2 := core.MustNew(core.Float32, 1, 64)
	done, _ = s.runKept(ins, []*core.Tensor{y2}, 0)
	assert.False(t, done)
	view, err := x.Reshape(1, 64)
	require.NoError(t, err)
	done, _ = s.runKept([]*core.Tensor{view}, outs, 0)
	assert.False(t, done)

	// the session's scratch taken by another run: RunInto runs on a stage of its own
	s.b.mu.Lock()
	done, _ = s.runKept(ins, outs, 0)
	assert.False(t, done)
	clear(got())
	require.NoError(t, s.RunInto(ins, outs))
	s.b.mu.Unlock()
	assert.Equal(t, want(), got())

	// AlwaysCopy copies the input: the kept value (over x itself) is not used
	var copied bool
	require.NoError(t, s.RunInto(ins, outs, adapters.AlwaysCopy(), adapters.ReportCopy(&copied)))
	assert.True(t, copied)
	copied = true
	require.NoError(t, s.RunInto(ins, outs, adapters.ReportCopy(&copied)))
	assert.False(t, copied, "the kept path copies nothing and says so")

	// a released output and a destroyed session: not kept; the general path reports them
	y.Release()
	done, _ = s.runKept(ins, outs, 0)
	assert.False(t, done)
	require.ErrorIs(t, s.RunInto(ins, outs), core.ErrReleased)
	y3 := core.MustNew(core.Float32, 1, 64)
	require.NoError(t, s.RunInto(ins, []*core.Tensor{y3}))
	require.NoError(t, s.Destroy())
	done, _ = s.runKept(ins, []*core.Tensor{y3}, 0)
	assert.False(t, done)
	require.ErrorIs(t, s.RunInto(ins, []*core.Tensor{y3}), ErrModel)
}
