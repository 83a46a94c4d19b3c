package onnxx

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
)

// The ways a run can go (see "One run engine"): bound afresh, or settled, calling ORT's Run or
// through the session's I/O binding.
type runPath int

const (
	pathFresh   runPath = iota // new tensors: every value bound afresh
	pathSettled                // the same tensors again, bindKept unset: invokeHost
	pathBound                  // the same tensors again through the session's I/O binding: invokeKept
)

func (p runPath) String() string { return [...]string{"fresh", "settled", "bound"}[p] }

// pathOutcome is what a run gives its caller: each output's dtype, shape and C-order bytes, the
// ReportCopy flag and the error's text.
type pathOutcome struct {
	outs   []string
	copied bool
	err    string
}

// describeOut is one output of a run, as the caller sees it.
func describeOut(t *testing.T, x *core.Tensor) string {
	t.Helper()
	if x == nil {
		return "nil"
	}
	var b bytes.Buffer
	_, err := memory.WriteTo(&b, x)
	require.NoError(t, err)
	return fmt.Sprintf("%s %v %x", x.DType(), x.Shape(), b.Bytes())
}

// pathCase is one run, made anew for each path: the session's model, its inputs, its
// destinations (nil: Run's outputs, from leases or ORT), and the options.
type pathCase struct {
	name  string
	model string
	make  func(t *testing.T, s *Session) (ins, outs []*core.Tensor)
	opts  []adapters.Option
	fails bool // the run fails, on every path
	copy  bool // the run copies an input, on every path
}

// runThrough runs c on a new session the way p says. For the settled ways, a first run on the
// same tensors keeps their values (when it binds them as they are), and the run of record is the
// second. It returns the outcome and whether the run of record was settled.
func runThrough(t *testing.T, c pathCase, p runPath) (pathOutcome, bool) {
	t.Helper()
	s, err := NewSession(c.model, nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	require.True(t, s.bindKept, "a session without execution providers binds")
	s.bindKept = p == pathBound
	ins, dsts := c.make(t, s)
	fill := dsts == nil
	run := func() (pathOutcome, bool) {
		outs := dsts
		if fill {
			outs = make([]*core.Tensor, len(s.outputs))
		}
		var res pathOutcome
		o := adapters.Apply(append(append([]adapters.Option(nil), c.opts...), adapters.ReportCopy(&res.copied))...)
		n := s.b.settledRuns
		if err := s.run(ins, outs, fill, o, 0); err != nil {
			res.err = err.Error()
		}
		for _, x := range outs {
			res.outs = append(res.outs, describeOut(t, x))
			if fill && x != nil {
				x.Release() // a lent output gives its lease back
			}
		}
		return res, s.b.settledRuns == n+1
	}
	if p != pathFresh {
		run() // keeps the values over these tensors
	}
	return run()
}

// loadFiles returns the tensors of files, new ones.
func loadFiles(t *testing.T, files []modeltest.TensorFile) []*core.Tensor {
	t.Helper()
	var ts []*core.Tensor
	for _, f := range files {
		x, err := modeltest.Load(f)
		require.NoError(t, err)
		ts = append(ts, x)
	}
	return ts
}

// pathCases are the manifest's models (every dtype onnxx supports, 0-d inputs and outputs,
// unknown rank and partial shapes, outputs whose shape the values decide, a graph without
// inputs), each with destinations and with Run's outputs; models whose outputs are inputs or the
// model's own values; and runs made to fail or to copy.
func pathCases(t *testing.T) []pathCase {
	cases, err := modeltest.Manifest()
	require.NoError(t, err)
	var out []pathCase
	for _, mc := range cases {
		mc := mc
		out = append(out, pathCase{name: mc.Name + "/into", model: mc.Model,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				return loadFiles(t, mc.Inputs), loadFiles(t, mc.Outputs) // destinations of NumPy's shapes
			}})
		out = append(out, pathCase{name: mc.Name + "/run", model: mc.Model,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				return loadFiles(t, mc.Inputs), nil
			}})
	}
	f32 := func(shape ...int64) *core.Tensor { return core.MustNew(core.Float32, shape...) }
	xy := func(t *testing.T) []*core.Tensor {
		x, y := f32(3, 4, 5), f32(3, 4, 5)
		for i, x := range []*core.Tensor{x, y} {
			e, err := core.Elements[float32](x)
			require.NoError(t, err)
			for j := range e {
				e[j] = float32(j%9) - float32(i)
			}
		}
		return []*core.Tensor{x, y}
	}
	x23 := func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
		x := core.MustFromSlice([]float32{-1, 2, -3, 4, -5, 6}, 2, 3)
		return []*core.Tensor{x}, nil
	}
	x23into := func(n int) func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
		return func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
			ins, _ := x23(t, s)
			var outs []*core.Tensor
			for range n {
				outs = append(outs, f32(2, 3))
			}
			return ins, outs
		}
	}
	// outputs that are inputs, or values of the model, rather than computed into a buffer
	for _, m := range []string{"passthrough", "passthrough_dynamic", "identity_chain", "constants", "constants_dynamic"} {
		out = append(out, pathCase{name: m + "/run", model: modeltest.Model(m), make: x23})
	}
	out = append(out,
		pathCase{name: "passthrough/into", model: modeltest.Model("passthrough"), make: x23into(2)},
		pathCase{name: "identity_chain/into", model: modeltest.Model("identity_chain"), make: x23into(1)},
		pathCase{name: "constants/into", model: modeltest.Model("constants"), make: x23into(3)})
	ew := modeltest.Model("elementwise_float32")
	out = append(out,
		pathCase{name: "empty", model: modeltest.Model("dynamic_float32"),
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				return []*core.Tensor{f32(0, 3)}, nil
			}},
		pathCase{name: "output aliases an input", fails: true, model: ew,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				in := xy(t)
				return in, []*core.Tensor{f32(3, 4, 5), in[0]}
			}},
		pathCase{name: "outputs alias each other", fails: true, model: ew,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				z := f32(3, 4, 5)
				return xy(t), []*core.Tensor{z, z}
			}},
		pathCase{name: "released input", fails: true, model: ew,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				in := xy(t)
				in[1].Release()
				return in, []*core.Tensor{f32(3, 4, 5), f32(3, 4, 5)}
			}},
		pathCase{name: "wrong shape", fails: true, model: ew,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				return xy(t), []*core.Tensor{f32(3, 4, 5), f32(60)}
			}},
		pathCase{name: "read-only destination", fails: true, model: ew,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				ro, err := f32(3, 4, 5).WithFlags(core.FlagReadOnly)
				require.NoError(t, err)
				return xy(t), []*core.Tensor{ro, f32(3, 4, 5)}
			}},
		pathCase{name: "cast input", copy: true, model: ew, opts: []adapters.Option{CastInputs()},
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				in := xy(t)
				c, err := memory.Cast(in[0], core.Float64)
				require.NoError(t, err)
				return []*core.Tensor{c, in[1]}, []*core.Tensor{f32(3, 4, 5), f32(3, 4, 5)}
			}},
		pathCase{name: "no cast without the option", fails: true, model: ew,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				in := xy(t)
				c, err := memory.Cast(in[0], core.Float64)
				require.NoError(t, err)
				return []*core.Tensor{c, in[1]}, []*core.Tensor{f32(3, 4, 5), f32(3, 4, 5)}
			}},
		pathCase{name: "strided input", copy: true, model: ew,
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				in := xy(t)
				r, err := in[0].Reverse(2)
				require.NoError(t, err)
				return []*core.Tensor{r, in[1]}, nil
			}},
		pathCase{name: "strided input, zero-copy only", fails: true, model: ew, opts: []adapters.Option{adapters.ZeroCopyOnly()},
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				in := xy(t)
				r, err := in[0].Reverse(2)
				require.NoError(t, err)
				return []*core.Tensor{r, in[1]}, nil
			}},
		pathCase{name: "always copy", copy: true, model: ew, opts: []adapters.Option{adapters.AlwaysCopy()},
			make: func(t *testing.T, s *Session) ([]*core.Tensor, []*core.Tensor) {
				return xy(t), []*core.Tensor{f32(3, 4, 5), f32(3, 4, 5)}
			}},
	)
	return out
}

// TestRunPathsAgree: a run bound afresh and the same run settled, through ORT's Run or the
// session's I/O binding, give the same outputs, ReportCopy result and error; runs that copy or
// fail are never settled, and many others are.
func TestRunPathsAgree(t *testing.T) {
	settled := 0
	for _, c := range pathCases(t) {
		t.Run(c.name, func(t *testing.T) {
			fresh, _ := runThrough(t, c, pathFresh) // settled only with nothing to bind: no inputs, outputs lent
			assert.Equal(t, c.fails, fresh.err != "", "the run fails: %s", fresh.err)
			assert.Equal(t, c.copy, fresh.copied, "the run copies")
			for _, p := range []runPath{pathSettled, pathBound} {
				got, wasSettled := runThrough(t, c, p)
				assert.Equal(t, fresh, got, "%s (settled: %v)", p, wasSettled)
				if wasSettled {
					settled++
					assert.False(t, c.fails || c.copy, "a run that fails or copies is not settled")
					assert.Empty(t, got.err, "a settled run follows a run that bound the same tensors as they are")
					assert.False(t, got.copied)
				}
			}
		})
	}
	assert.Greater(t, settled, 20, "runs were settled")
}
