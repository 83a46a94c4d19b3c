package onnxx_test

import (
	"runtime"
	"testing"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// f32 reads a float32 tensor's elements (a copy, in C order).
func f32(t *testing.T, x *core.Tensor) []float32 {
	t.Helper()
	out := make([]float32, 0, x.Len())
	for _, v := range floats(t, x) {
		out = append(out, float32(v))
	}
	return out
}

// sameFloats asserts that the float32 tensor x holds want, counting the elements that differ.
func sameFloats(t *testing.T, want []float32, x *core.Tensor, msg string, args ...any) {
	t.Helper()
	got, err := core.ReadOnlyElements[float32](x)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			bad++
		}
	}
	assert.Zero(t, bad, append([]any{"%d of %d elements wrong: " + msg, bad, len(want)}, args...)...)
}

// seq is n float32s from start, step 1.
func seq(start float32, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = start + float32(i)
	}
	return out
}

func relu(xs []float32) []float32 {
	out := make([]float32, len(xs))
	for i, v := range xs {
		out[i] = max(v, 0)
	}
	return out
}

// TestOutputIsInput runs models whose graph output is one of their graph inputs (outputs: [X],
// of fixed and of dynamic shape) or an Identity chain of it: ORT hands back the input's value
// instead of writing the buffer onnxx bound. Run must return the input's elements in a tensor of
// their own (a copy, flagged), and RunInto must write the destination, run after run.
func TestOutputIsInput(t *testing.T) {
	for _, tc := range []struct {
		model, out string
		relu       bool // the model also has R = Relu(X)
		copied     bool // ORT hands back the input (Identity it computes into a buffer of its own)
	}{
		{"passthrough", "X", true, true},
		{"passthrough_dynamic", "X", true, true},
		{"identity_chain", "J", false, false},
	} {
		t.Run(tc.model, func(t *testing.T) {
			s, err := onnxx.NewSession(model(tc.model), nil, nil, nil)
			require.NoError(t, err)
			defer s.Destroy()
			var kept []*core.Tensor
			var want [][]float32
			for run, start := range []float32{-2, 5, -7} {
				xs := seq(start, 6)
				x := core.MustFromSlice(xs, 2, 3)
				out, err := s.Run(map[string]*core.Tensor{"X": x})
				require.NoError(t, err, "run %d", run)
				y := out[tc.out]
				assert.Equal(t, xs, f32(t, y), "run %d: output %q", run, tc.out)
				assert.False(t, core.MayShareMemory(x, y), "run %d: the output aliases the caller's input", run)
				if tc.copied {
					assert.NotZero(t, y.Flags()&core.FlagIsCopied, "run %d: the copy is not flagged", run)
				}
				if tc.relu {
					assert.Equal(t, relu(xs), f32(t, out["R"]), "run %d: output R", run)
				}
				xs[0] = 1000 // the caller's input changes: the output does not
				assert.Equal(t, start, f32(t, y)[0], "run %d", run)
				kept, want = append(kept, y), append(want, append([]float32{start}, xs[1:]...))

				dsts := make([]*core.Tensor, len(s.Outputs()))
				for i := range dsts {
					dsts[i] = core.MustFromSlice(make([]float32, 6), 2, 3)
				}
				xs2 := seq(start+100, 6)
				require.NoError(t, s.RunInto([]*core.Tensor{core.MustFromSlice(xs2, 2, 3)}, dsts), "run %d", run)
				assert.Equal(t, xs2, f32(t, dsts[0]), "run %d: RunInto left the destination unwritten", run)
				if tc.relu {
					assert.Equal(t, relu(xs2), f32(t, dsts[1]), "run %d: RunInto R", run)
				}
			}
			runtime.GC()
			for i, y := range kept {
				assert.Equal(t, want[i], f32(t, y), "output of run %d changed", i)
				y.Release()
			}
		})
	}
}

// TestOutputOverStaging feeds a strided input to a model whose output is that input, with a
// dynamic shape: onnxx stages the input in C order, and ORT returns the staging copy's value. The
// output must not be that copy, which goes back to the allocator after the run: the next runs
// would change the first output.
func TestOutputOverStaging(t *testing.T) {
	s, err := onnxx.NewSession(model("passthrough_dynamic"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	const n = 1 << 19 // 6 MiB: the staging copy comes from core's block cache
	var outs []*core.Tensor
	var want [][]float32
	for run := range 3 {
		base := seq(float32(run*10000), 3*n)
		full := core.MustFromSlice(base, 3, n)
		x, err := full.Transpose() // [n, 3], strided
		require.NoError(t, err)
		require.False(t, x.IsContiguous())
		out, err := s.Run(map[string]*core.Tensor{"X": x})
		require.NoError(t, err)
		w := make([]float32, 0, 3*n)
		for i := range n {
			for j := range 3 {
				w = append(w, base[j*n+i])
			}
		}
		sameFloats(t, w, out["X"], "run %d: X", run)
		sameFloats(t, relu(w), out["R"], "run %d: R", run)
		out["R"].Release()
		outs, want = append(outs, out["X"]), append(want, w)
		leakcheck.Settle() // the staging copy, collected, gives its block back to core's cache
	}
	for i, y := range outs {
		sameFloats(t, want[i], y, "output of run %d, after the runs that followed", i)
		y.Release()
	}
}

// TestOutputIsConstant runs a model whose outputs are an initializer (W) and a Constant node (C)
// beside a computed one: ORT hands back its own constants. Run returns their values in tensors of
// their own (writing into one changes neither the model nor the next run), RunInto writes them.
func TestOutputIsConstant(t *testing.T) {
	wc := seq(1, 6)
	cc := make([]float32, 6)
	for i, v := range wc {
		cc[i] = v * 10
	}
	for _, tc := range []struct {
		model string
		outs  []string
		want  map[string][]float32
	}{
		{"constants", nil, map[string][]float32{"W": wc, "C": cc}},
		{"constants_dynamic", []string{"W", "R"}, map[string][]float32{"W": wc}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			s, err := onnxx.NewSession(model(tc.model), nil, tc.outs, nil)
			require.NoError(t, err)
			defer s.Destroy()
			for run := range 3 {
				xs := seq(float32(-3+run), 6)
				out, err := s.Run(map[string]*core.Tensor{"X": core.MustFromSlice(xs, 2, 3)})
				require.NoError(t, err)
				for name, w := range tc.want {
					assert.Equal(t, w, f32(t, out[name]), "run %d: output %q", run, name)
					e, err := core.Elements[float32](out[name])
					require.NoError(t, err)
					e[0] = -99 // the caller may write its output: the model's constant stays
				}
				assert.Equal(t, relu(xs), f32(t, out["R"]), "run %d", run)
				for _, o := range out {
					o.Release()
				}
				dsts := make([]*core.Tensor, len(s.Outputs()))
				for i := range dsts {
					dsts[i] = core.MustFromSlice(make([]float32, 6), 2, 3)
				}
				require.NoError(t, s.RunInto([]*core.Tensor{core.MustFromSlice(xs, 2, 3)}, dsts))
				for i, info := range s.Outputs() {
					w, ok := tc.want[info.Name]
					if !ok {
						w = relu(xs)
					}
					assert.Equal(t, w, f32(t, dsts[i]), "run %d: RunInto %q", run, info.Name)
				}
			}
		})
	}
}

// TestMaxOutputAlloc: a model that declares a 256 MiB output and computes two elements makes a
// run allocate no more than what it computes (ORT allocates the output), and the option moves
// smaller outputs to ORT too. (Go's TotalAlloc counts core.New's memory, Go's own here.)
func TestMaxOutputAlloc(t *testing.T) {
	s, err := onnxx.NewSession(model("huge_declared"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	assert.Equal(t, []int64{1 << 26}, s.Outputs()[0].Shape, "what the model declares")
	x := core.MustFromSlice([]float32{-1, 2}, 2)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := s.Run(map[string]*core.Tensor{"X": x, "S": core.MustFromSlice([]int64{2}, 1)})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by one run")
	assert.Equal(t, []int64{2}, out["Y"].Shape())
	assert.Equal(t, []float32{-1, 2}, f32(t, out["Y"]))
	assert.True(t, out["Y"].Foreign(), "over ORT's buffer")
	out["Y"].Release()

	for _, tc := range []struct {
		max     int64
		foreign bool
	}{{0, false}, {24, false}, {23, true}, {-1, true}} {
		s, err := onnxx.NewSession(model("passthrough"), nil, []string{"R"}, &onnxx.SessionOptions{MaxOutputAlloc: tc.max})
		require.NoError(t, err)
		out, err := s.Run(map[string]*core.Tensor{"X": core.MustFromSlice(seq(-3, 6), 2, 3)})
		require.NoError(t, err)
		assert.Equal(t, relu(seq(-3, 6)), f32(t, out["R"]), "MaxOutputAlloc %d", tc.max)
		assert.Equal(t, tc.foreign, out["R"].Foreign(), "MaxOutputAlloc %d: a 24-byte output over ORT's buffer", tc.max)
		out["R"].Release()
		s.Destroy()
	}
}
