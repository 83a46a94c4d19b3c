package onnxx_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
)

// TestUnknownRank: a model whose input and output types have no shape (Y = Relu(X)) says so in
// Inputs and Outputs, apart from a scalar; one session takes tensors of any rank, returns
// outputs of the rank the run computes (over ORT's buffer), and RunInto takes a destination of
// any shape that is the output's.
func TestUnknownRank(t *testing.T) {
	s, err := onnxx.NewSession(model("unknown_rank"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	for _, info := range append(s.Inputs(), s.Outputs()...) {
		assert.True(t, info.UnknownRank, "%s", info.Name)
		assert.True(t, info.Dynamic(), "%s", info.Name)
		assert.Empty(t, info.Shape, "%s", info.Name)
	}
	sc, err := onnxx.NewSession(model("scalar"), nil, nil, nil)
	require.NoError(t, err)
	defer sc.Destroy()
	assert.False(t, sc.Inputs()[0].UnknownRank, "a declared scalar is not of unknown rank")
	assert.False(t, sc.Inputs()[0].Dynamic())

	for _, shape := range [][]int64{{6}, {2, 3}, {1, 2, 3}, {3, 1, 2, 1}, {}} {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		xs := seq(-2, int(n))
		x, dst := core.MustFromSlice(xs, shape...), core.MustFromSlice(make([]float32, n), shape...)
		if len(shape) == 0 { // FromSlice without a shape is 1-D
			x, dst = core.Scalar(xs[0]), core.Scalar[float32](0)
		}
		out, err := s.Run(map[string]*core.Tensor{"X": x})
		require.NoError(t, err, "shape %v", shape)
		assert.Equal(t, shape, out["Y"].Shape())
		assert.Equal(t, relu(xs), f32(t, out["Y"]), "shape %v", shape)
		out["Y"].Release()

		require.NoError(t, s.RunInto([]*core.Tensor{x}, []*core.Tensor{dst}), "shape %v", shape)
		assert.Equal(t, relu(xs), f32(t, dst), "RunInto, shape %v", shape)
	}
}

// TestDataDependentOutputs: outputs whose rank or size the values decide (ConstantOfShape,
// NonZero) come back in the computed shape; a destination of the wrong shape fails with ORT's
// message (ErrModel).
func TestDataDependentOutputs(t *testing.T) {
	s, err := onnxx.NewSession(model("constant_of_shape"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	assert.True(t, s.Outputs()[0].Dynamic(), "ORT infers rank 2 from S's shape, and no dimension")
	for _, shape := range [][]int64{{2, 3}, {4, 1}, {0, 5}} {
		out, err := s.Run(map[string]*core.Tensor{"S": core.MustFromSlice(shape, 2)})
		require.NoError(t, err, "%v", shape)
		assert.Equal(t, shape, out["Y"].Shape())
		for _, v := range f32(t, out["Y"]) {
			assert.Equal(t, float32(1.5), v)
		}
		out["Y"].Release()
	}
	err = s.RunInto([]*core.Tensor{core.MustFromSlice([]int64{2, 3}, 2)}, []*core.Tensor{core.MustNew(core.Float32, 3, 2)})
	assert.ErrorIs(t, err, onnxx.ErrModel)
}

// TestScalarFedOne: ORT takes a [1] tensor for an input declared a scalar, and so does onnxx; the
// outputs computed from it may then be [1] too (Y = X + 1 is), so ORT allocates them.
func TestScalarFedOne(t *testing.T) {
	s, err := onnxx.NewSession(model("scalar"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	one := core.MustFromSlice([]float32{41}, 1)
	for run := range 3 { // the same tensor: the session's kept value of it
		out, err := s.Run(map[string]*core.Tensor{"X": one})
		require.NoError(t, err, "run %d", run)
		assert.Equal(t, []float32{42}, f32(t, out["Y"]))
		assert.Equal(t, []int64{1}, out["Y"].Shape(), "what ORT computes")
	}
	out, err := s.Run(map[string]*core.Tensor{"X": core.Scalar[float32](1)})
	require.NoError(t, err)
	assert.Equal(t, []float32{2}, f32(t, out["Y"]))
	assert.Empty(t, out["Y"].Shape())
	_, err = s.Run(map[string]*core.Tensor{"X": core.MustFromSlice([]float32{1, 2}, 2)})
	assert.ErrorIs(t, err, onnxx.ErrModel, "a [2] tensor is not a scalar")
}

// TestNoInputs: a graph without inputs runs, with Run and with RunInto.
func TestNoInputs(t *testing.T) {
	s, err := onnxx.NewSession(model("no_inputs"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	assert.Empty(t, s.Inputs())
	for range 3 {
		out, err := s.Run(nil)
		require.NoError(t, err)
		assert.Equal(t, []float32{3, 4}, f32(t, out["Y"]))
		out["Y"].Release()
		dst := core.MustNew(core.Float32, 2)
		require.NoError(t, s.RunInto(nil, []*core.Tensor{dst}))
		assert.Equal(t, []float32{3, 4}, f32(t, dst))
	}
}

// TestMemoryOptions: sessions with the CPU arena and the memory pattern on and off, and each
// extend strategy, run the dynamic model at several batch sizes and give NumPy's results; values
// out of range are refused with core.ErrArgument.
func TestMemoryOptions(t *testing.T) {
	cases, err := manifest()
	require.NoError(t, err)
	for _, opts := range []onnxx.SessionOptions{
		{CPUArena: onnxx.Disabled}, {CPUArena: onnxx.Enabled}, {MemoryPattern: onnxx.Disabled},
		{MemoryPattern: onnxx.Enabled, CPUArena: onnxx.Disabled}, {ArenaExtendStrategy: onnxx.ArenaSameAsRequested},
		{ArenaExtendStrategy: onnxx.ArenaNextPowerOfTwo},
	} {
		s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, &opts)
		require.NoError(t, err, "%+v", opts)
		ran := 0
		for _, c := range cases {
			if c.Model != model("dynamic_float32") {
				continue
			}
			ran++
			out, err := s.Run(map[string]*core.Tensor{"X": load(t, c.Inputs[0])})
			require.NoError(t, err, "%+v", opts)
			for _, f := range c.Outputs {
				equal(t, load(t, f), out[f.Name], c.Tol)
				out[f.Name].Release()
			}
		}
		assert.Equal(t, 3, ran)
		s.Destroy()
	}
	for _, opts := range []onnxx.SessionOptions{{CPUArena: 3}, {MemoryPattern: -1}, {ArenaExtendStrategy: 7}} {
		_, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, &opts)
		assert.ErrorIs(t, err, core.ErrArgument, "%+v", opts)
	}
}
