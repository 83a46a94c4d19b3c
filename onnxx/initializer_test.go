package onnxx_test

import (
	"fmt"

	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The overridable model is Y = X + B with B an initializer ([1, 2, 3]) the graph also lists among
// its inputs: ORT lets a run replace it.
func TestOverridableInitializer(t *testing.T) {
	x := core.MustFromSlice([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	y := func(t *testing.T, out map[string]*core.Tensor) []float32 {
		t.Helper()
		require.Contains(t, out, "Y")
		d, err := core.ReadOnlyElements[float32](out["Y"])
		require.NoError(t, err)
		return append([]float32(nil), d...)
	}

	t.Run("described", func(t *testing.T) {
		s, err := onnxx.NewSession(model("overridable"), nil, nil, nil)
		require.NoError(t, err)
		defer s.Destroy()
		inits := s.Initializers()
		require.Len(t, inits, 1)
		assert.Equal(t, "B", inits[0].Name)
		assert.Equal(t, core.Float32, inits[0].DType)
		assert.Equal(t, []int64{3}, inits[0].Shape)
		assert.True(t, inits[0].Initializer)
		require.Len(t, s.Inputs(), 1, "the session takes the graph's inputs only, unless told")
		assert.Equal(t, "X", s.Inputs()[0].Name)
	})

	t.Run("model's value when not fed", func(t *testing.T) {
		s, err := onnxx.NewSession(model("overridable"), nil, nil, nil)
		require.NoError(t, err)
		defer s.Destroy()
		out, err := s.Run(map[string]*core.Tensor{"X": x})
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 3, 5, 4, 6, 8}, y(t, out))
	})

	t.Run("fed by name", func(t *testing.T) {
		s, err := onnxx.NewSession(model("overridable"), []string{"X", "B"}, nil, nil)
		require.NoError(t, err)
		defer s.Destroy()
		require.Len(t, s.Inputs(), 2)
		assert.True(t, s.Inputs()[1].Initializer)
		b := core.MustFromSlice([]float32{10, 20, 30}, 3)
		out, err := s.Run(map[string]*core.Tensor{"X": x, "B": b})
		require.NoError(t, err)
		assert.Equal(t, []float32{10, 21, 32, 13, 24, 35}, y(t, out))

		// RunInto, repeated: the kept values of X and B serve again, and a change to B's memory is
		// what the next run reads (zero-copy)
		dst := core.MustNew(core.Float32, 2, 3)
		for range 2 {
			require.NoError(t, s.RunInto([]*core.Tensor{x, b}, []*core.Tensor{dst}))
		}
		bd, err := core.Elements[float32](b)
		require.NoError(t, err)
		bd[0] = 100
		require.NoError(t, s.RunInto([]*core.Tensor{x, b}, []*core.Tensor{dst}))
		got, err := core.ReadOnlyElements[float32](dst)
		require.NoError(t, err)
		assert.Equal(t, []float32{100, 21, 32, 103, 24, 35}, got)
	})

	t.Run("errors", func(t *testing.T) {
		s, err := onnxx.NewSession(model("overridable"), nil, nil, nil)
		require.NoError(t, err)
		defer s.Destroy()
		_, err = s.Run(map[string]*core.Tensor{"X": x, "B": core.MustNew(core.Float32, 3)})
		require.ErrorIs(t, err, onnxx.ErrModel)
		assert.Contains(t, err.Error(), `onnxx: input "B" is an overridable initializer of the model`)
		assert.Contains(t, err.Error(), "inputNames")

		_, err = onnxx.NewSession(model("overridable"), []string{"X", "C"}, nil, nil)
		require.ErrorIs(t, err, onnxx.ErrModel)
		assert.Contains(t, err.Error(), `onnxx: input "C" is not an input or overridable initializer of the model (inputs: "X"; overridable initializers: "B")`)

		s2, err := onnxx.NewSession(model("overridable"), []string{"X", "B"}, nil, nil)
		require.NoError(t, err)
		defer s2.Destroy()
		_, err = s2.Run(map[string]*core.Tensor{"X": x, "B": core.MustNew(core.Float32, 4)})
		require.ErrorIs(t, err, onnxx.ErrModel)
		assert.Contains(t, err.Error(), `onnxx: input "B" has shape [4], the model wants [3]`)
	})
}

// An overridable initializer (a weight the model holds, which the graph also lists among its
// inputs) is fed by naming it in NewSession's inputNames; unnamed, the model's value serves.
func ExampleSession_Initializers() {
	s, err := onnxx.NewSession(model("overridable"), []string{"X", "B"}, nil, nil) // Y = X + B
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	for _, in := range s.Initializers() {
		fmt.Println("overridable:", in.Name, in.Shape)
	}
	x := core.MustFromSlice([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	b := core.MustFromSlice([]float32{10, 20, 30}, 3)
	out, err := s.Run(map[string]*core.Tensor{"X": x, "B": b})
	if err != nil {
		fmt.Println(err)
		return
	}
	y, _ := core.ReadOnlyElements[float32](out["Y"])
	fmt.Println(y)
	// Output:
	// overridable: B [3]
	// [10 21 32 13 24 35]
}
