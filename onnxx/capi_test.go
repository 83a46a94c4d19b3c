package onnxx_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutputsOverORTMemory: an output of a shape not known before the run (every dtype, float16
// and bfloat16 included, on the session's first run) is a tensor over the buffer ORT allocated:
// its address is what ORT reports for the value, and the value is released exactly once, by the
// last Release of a tensor over it.
func TestOutputsOverORTMemory(t *testing.T) {
	traced := onnxx.TraceOutputs()
	before := leakcheck.Settle()
	for name, dt := range dtypeNames {
		t.Run(name, func(t *testing.T) {
			s, err := onnxx.NewSession(model("dyn_"+name), nil, nil, nil)
			require.NoError(t, err)
			defer s.Destroy()
			x := core.MustNew(dt, 2, 3)
			n := len(traced())
			out, err := s.Run(map[string]*core.Tensor{"X": x})
			require.NoError(t, err)
			y := out["Y"]
			assert.Equal(t, []int64{4, 3}, y.Shape())
			assert.Equal(t, dt, y.DType())
			assert.True(t, y.Foreign(), "the tensor owns ORT's value")
			got := traced()
			require.Len(t, got, n+1)
			tr := got[n]
			assert.Same(t, y, tr.Tensor)
			p, err := onnxx.ValueData(tr.Value)
			require.NoError(t, err)
			assert.Equal(t, p, y.Data(), "the tensor is over ORT's buffer")
			view, err := y.Reshape(12)
			require.NoError(t, err)
			y.Release()
			assert.Equal(t, 0, traced()[n].Released, "a view still holds the value")
			view.Release()
			view.Release()
			assert.Equal(t, 1, traced()[n].Released, "released exactly once")
		})
	}
	assert.Equal(t, before, leakcheck.Settle())
}

// TestRecurrentState runs a recurrent cell for several steps, feeding each step's state (a
// tensor over ORT's memory) back as the next step's input, and compares with NumPy; then does the
// same with RunInto and two state buffers used in turn.
func TestRecurrentState(t *testing.T) {
	var m struct{ Xs, Hs, Ys tensorFile }
	raw, err := os.ReadFile(modeltest.Dir + "/recurrent.json")
	require.NoError(t, err)
	require.NoError(t, jsonUnmarshal(raw, &m))
	xs, hs, ys := load(t, m.Xs), load(t, m.Hs), load(t, m.Ys)
	steps, batch := xs.Dim(0), xs.Dim(1)
	s, err := onnxx.NewSession(model("recurrent"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	before := leakcheck.Settle()

	h := core.MustNew(core.Float32, batch, 8)
	for step := range steps {
		x := must(xs.Index(0, step))
		out, err := s.Run(map[string]*core.Tensor{"X": x, "H": h})
		require.NoError(t, err)
		equal(t, must(ys.Index(0, step)), out["Y"], 1e-5)
		equal(t, must(hs.Index(0, step)), out["Hn"], 1e-5)
		h.Release()
		out["Y"].Release()
		h = out["Hn"] // ORT's memory, the next step's input
	}
	h.Release()
	assert.Equal(t, before, leakcheck.Settle(), "every state ORT allocated was released")

	ha, hb := core.MustNew(core.Float32, batch, 8), core.MustNew(core.Float32, batch, 8)
	y := core.MustNew(core.Float32, batch, 2)
	x := core.MustNew(core.Float32, batch, 4)
	for step := range steps {
		require.NoError(t, memory.Copy(x, must(xs.Index(0, step))))
		require.NoError(t, s.RunInto([]*core.Tensor{x, ha}, []*core.Tensor{y, hb}))
		equal(t, must(ys.Index(0, step)), y, 1e-5)
		equal(t, must(hs.Index(0, step)), hb, 1e-5)
		ha, hb = hb, ha
	}
	// the state may not be read and written in one run
	err = s.RunInto([]*core.Tensor{x, ha}, []*core.Tensor{y, ha})
	require.ErrorIs(t, err, onnxx.ErrOverlap)
	assert.Contains(t, err.Error(), `output "Hn" overlaps input "H"`)
}

// TestSessionFromBytes loads a model held in memory; ORT keeps no reference to the bytes.
func TestSessionFromBytes(t *testing.T) {
	b, err := os.ReadFile(model("dynamic_float32"))
	require.NoError(t, err)
	s, err := onnxx.NewSessionFromBytes(b, nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	clear(b) // the session does not read them again
	runtime.GC()
	out, err := s.Run(map[string]*core.Tensor{"X": core.MustFromSlice([]float32{1, 2, 3}, 1, 3)})
	require.NoError(t, err)
	y, err := core.ReadOnlyElements[float32](out["Y"])
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 5, 7}, y)

	_, err = onnxx.NewSessionFromBytes([]byte("not a model"), nil, nil, nil)
	require.ErrorIs(t, err, onnxx.ErrRuntime)
	var re *onnxx.RuntimeError
	require.ErrorAs(t, err, &re)
	assert.NotEmpty(t, re.Message)
	_, err = onnxx.NewSessionFromBytes(nil, nil, nil, nil)
	require.ErrorIs(t, err, onnxx.ErrModel)
}

// TestInputsOutputs describes a model with dynamic dimensions.
func TestInputsOutputs(t *testing.T) {
	s, err := onnxx.NewSession(model("multi"), nil, []string{"N", "S"}, nil)
	require.NoError(t, err)
	defer s.Destroy()
	in := s.Inputs()
	require.Len(t, in, 3)
	assert.Equal(t, "A", in[0].Name)
	assert.Equal(t, core.Float32, in[0].DType)
	assert.Equal(t, onnxx.Float, in[0].ElementType)
	assert.Equal(t, []int64{-1, 3}, in[0].Shape)
	assert.Equal(t, []string{"n", ""}, in[0].Symbols)
	assert.True(t, in[0].Dynamic())
	assert.Equal(t, core.Int64, in[1].DType)
	assert.Equal(t, core.Bool, in[2].DType)
	out := s.Outputs()
	require.Len(t, out, 2)
	assert.Equal(t, "N", out[0].Name)
	assert.Equal(t, core.Bool, out[0].DType)
	assert.Equal(t, "S", out[1].Name)
	out[0].Shape[0] = 99 // a copy
	assert.Equal(t, int64(-1), s.Outputs()[0].Shape[0])

	fixed, err := onnxx.NewSession(model("matmul_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer fixed.Destroy()
	assert.Equal(t, []int64{8, 16}, fixed.Inputs()[0].Shape)
	assert.False(t, fixed.Inputs()[0].Dynamic())
	assert.Equal(t, "float", onnxx.Float.String())
}

// sentinels are the sentinel errors whose generic text must not lead a message (errs.Check).
var sentinels = []error{onnxx.ErrNoRuntime, onnxx.ErrRuntime, onnxx.ErrDType, onnxx.ErrUnsupportedDevice,
	onnxx.ErrValue, onnxx.ErrModel, onnxx.ErrOverlap, onnxx.ErrProvider, adapters.ErrUnsupported,
	adapters.ErrCopyRequired, adapters.ErrCast, core.ErrArgument, core.ErrReleased, core.ErrNdim}

// TestErrors: every mistake a user makes with a session gets an error that names it and wraps a
// sentinel, before ORT runs where it can be seen before.
func TestErrors(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	mm, err := onnxx.NewSession(model("matmul_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer mm.Destroy()
	mm64, err := onnxx.NewSession(model("matmul_float64"), nil, nil, nil)
	require.NoError(t, err)
	defer mm64.Destroy()
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	a, b := core.MustNew(core.Float32, 8, 16), core.MustNew(core.Float32, 16, 4)
	tr := must(core.MustNew(core.Float32, 3, 2).Transpose())
	cuda, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&dummy[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2, 3}}, nil) // never touched: the session refuses it first
	require.NoError(t, err)
	in := func(t *core.Tensor) map[string]*core.Tensor { return map[string]*core.Tensor{"X": t} }
	for _, tc := range []struct {
		name string
		run  func() error
		is   []error
		says string
	}{
		{"misspelt input", func() error { _, err := s.Run(map[string]*core.Tensor{"x": x}); return err },
			[]error{onnxx.ErrModel}, `input "x" is not an input of the model (inputs: "X")`},
		{"missing input", func() error { _, err := mm.Run(map[string]*core.Tensor{"A": a}); return err },
			[]error{onnxx.ErrModel}, `input "B" is missing (inputs: "A", "B")`},
		{"unknown output", func() error { _, err := s.RunWith(in(x), map[string]*core.Tensor{"Z": x}); return err },
			[]error{onnxx.ErrModel}, `output "Z" is not an output of the model (outputs: "Y", "S")`},
		{"unknown output name", func() error {
			_, err := onnxx.NewSession(model("dynamic_float32"), nil, []string{"s"}, nil)
			return err
		},
			[]error{onnxx.ErrModel}, `output "s" is not an output of the model (outputs: "Y", "S")`},
		{"dtype", func() error { _, err := s.Run(in(core.MustNew(core.Float64, 2, 3))); return err },
			[]error{onnxx.ErrDType, adapters.ErrUnsupported}, `input "X" is float64, the model wants float32: pass onnxx.CastInputs()`},
		{"cast is a copy", func() error {
			_, err := s.Run(in(core.MustNew(core.Float64, 2, 3)), onnxx.CastInputs(), adapters.ZeroCopyOnly())
			return err
		}, []error{adapters.ErrCopyRequired}, `input "X" is float64, the model wants float32: casting it is a copy, and adapters.ZeroCopyOnly() forbids one`},
		{"value-preserving cast is a copy", func() error {
			_, err := mm64.Run(map[string]*core.Tensor{"A": core.MustNew(core.Float32, 8, 16), "B": core.MustNew(core.Float64, 16, 4)},
				adapters.ZeroCopyOnly())
			return err
		}, []error{adapters.ErrCopyRequired}, `input "A" is float32, the model wants float64: casting it is a copy, and adapters.ZeroCopyOnly() forbids one`},
		{"cast that changes values", func() error {
			_, err := mm64.Run(map[string]*core.Tensor{"A": core.MustNew(core.Int64, 8, 16), "B": core.MustNew(core.Float64, 16, 4)})
			return err
		}, []error{adapters.ErrCast, onnxx.ErrDType, onnxx.ErrModel, adapters.ErrUnsupported},
			`onnxx: input "A" is int64, the model wants float64: pass onnxx.CastInputs() to convert`},
		{"shape", func() error { _, err := s.Run(in(core.MustNew(core.Float32, 2, 4))); return err },
			[]error{onnxx.ErrModel}, `input "X" has shape [2 4], the model wants [-1 3]`},
		{"strided input, zero-copy only", func() error { _, err := s.Run(in(tr), adapters.ZeroCopyOnly()); return err },
			[]error{adapters.ErrCopyRequired}, "C-order"},
		{"destination shape", func() error {
			_, err := mm.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": core.MustNew(core.Float32, 4, 8)})
			return err
		}, []error{onnxx.ErrModel}, `output "C" has shape [4 8], the model wants [8 4]`},
		{"destination dtype", func() error {
			_, err := mm.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": core.MustNew(core.Float64, 8, 4)})
			return err
		}, []error{onnxx.ErrDType}, `the destination of output "C" is float64, the output is float32`},
		{"dynamic destination shape", func() error {
			_, err := s.RunWith(in(x), map[string]*core.Tensor{"Y": core.MustNew(core.Float32, 5, 3)})
			return err
		}, []error{onnxx.ErrModel, onnxx.ErrRuntime}, "a destination's shape may not be the output's"},
		{"destination is the input", func() error { _, err := s.RunWith(in(x), map[string]*core.Tensor{"Y": x}); return err },
			[]error{onnxx.ErrOverlap}, `output "Y" overlaps input "X"`},
		{"destinations overlap", func() error {
			y := core.MustNew(core.Float32, 2, 3)
			_, err := s.RunWith(in(x), map[string]*core.Tensor{"Y": y, "S": must(must(y.Index(0, 1)).Slice(0, 0, 2, 1))})
			return err
		}, []error{onnxx.ErrOverlap}, `outputs "Y" and "S" overlap`},
		{"device memory", func() error { _, err := s.Run(in(cuda)); return err },
			[]error{onnxx.ErrUnsupportedDevice, adapters.ErrUnsupported}, "no CUDA execution provider"},
		{"string output", func() error { _, err := onnxx.NewSession(model("strings"), nil, nil, nil); return err },
			[]error{onnxx.ErrValue}, `onnxx: output "S": it is a tensor of strings (model `},
		{"sequence output", func() error { _, err := onnxx.NewSession(model("strings"), nil, []string{"Q"}, nil); return err },
			[]error{onnxx.ErrValue}, `onnxx: output "Q": it is a sequence, not a tensor (model `},
		{"no model file", func() error { _, err := onnxx.NewSession(model("no_such_model"), nil, nil, nil); return err },
			[]error{onnxx.ErrModel, fs.ErrNotExist}, "onnxx: open " + model("no_such_model") + ": no such file or directory"},
		{"model is a directory", func() error { _, err := onnxx.NewSession(t.TempDir(), nil, nil, nil); return err },
			[]error{onnxx.ErrModel, fs.ErrInvalid}, "is a directory"},
		{"float64 input", func() error { _, err := s.Run(in(core.MustNew(core.Float64, 2, 3))); return err },
			[]error{onnxx.ErrDType, onnxx.ErrModel, adapters.ErrCast}, `onnxx: input "X" is float64, the model wants float32: pass onnxx.CastInputs() to convert`},
		{"released input", func() error {
			r := core.MustNew(core.Float32, 2, 3)
			r.Release()
			_, err := s.Run(in(r))
			return err
		}, []error{core.ErrReleased}, `input "X": core: tensor was released`},
		{"RunInto counts", func() error { return s.RunInto([]*core.Tensor{x}, nil) },
			[]error{onnxx.ErrModel}, `the session takes 1 ("X") and gives 2 ("Y", "S")`},
		{"bad option", func() error {
			_, err := onnxx.NewSession(model("small"), nil, nil, &onnxx.SessionOptions{GraphOptimization: 17})
			return err
		}, []error{core.ErrArgument}, "GraphOptimization(17)"},
		{"negative threads", func() error {
			_, err := onnxx.NewSession(model("small"), nil, nil, &onnxx.SessionOptions{IntraOpThreads: -1})
			return err
		}, []error{core.ErrArgument}, "must not be negative"},
		{"unknown provider", func() error {
			_, err := onnxx.NewSession(model("small"), nil, nil, &onnxx.SessionOptions{Providers: []onnxx.Provider{{Name: "NoSuchEP"}}})
			return err
		}, []error{onnxx.ErrProvider, onnxx.ErrRuntime}, `"NoSuchEP"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			stderr := captureStderr(t, func() { err = tc.run() })
			require.Error(t, err)
			for _, want := range tc.is {
				assert.ErrorIs(t, err, want)
			}
			assert.Contains(t, err.Error(), tc.says)
			assert.NoError(t, errs.Check(err.Error(), sentinels...), "the message leads with the problem")
			assert.Regexp(t, `^onnxx: `, err.Error())
			assert.Empty(t, stderr, "ORT wrote to stderr")
		})
	}
	// the strings model is usable for its tensor output
	only, err := onnxx.NewSession(model("strings"), nil, []string{"Y"}, nil)
	require.NoError(t, err)
	defer only.Destroy()
	out, err := only.Run(map[string]*core.Tensor{"X": core.MustFromSlice([]float32{1, 2}, 2)})
	require.NoError(t, err)
	v, _ := core.ReadOnlyElements[float32](out["Y"])
	assert.Equal(t, []float32{1, 2}, v)

	destroyed, err := onnxx.NewSession(model("small"), nil, nil, nil)
	require.NoError(t, err)
	require.NoError(t, destroyed.Destroy())
	require.NoError(t, destroyed.Destroy())
	_, err = destroyed.Run(map[string]*core.Tensor{"X": core.MustNew(core.Float32, 1, 64)})
	require.ErrorIs(t, err, onnxx.ErrModel)
}

var dummy [64]byte

// TestLogLevel: ORT is silent by default; a session with a log level writes ORT's own lines.
func TestLogLevel(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, &onnxx.SessionOptions{LogLevel: onnxx.LogError})
	require.NoError(t, err)
	defer s.Destroy()
	x := core.MustNew(core.Float32, 2, 3)
	stderr := captureStderr(t, func() {
		_, err = s.RunWith(map[string]*core.Tensor{"X": x}, map[string]*core.Tensor{"Y": core.MustNew(core.Float32, 5, 3)})
	})
	require.ErrorIs(t, err, onnxx.ErrRuntime)
	assert.Contains(t, stderr, "onnxruntime", "ORT logged the failure at LogError")
	assert.Equal(t, "warning", onnxx.LogWarning.String())
	require.NoError(t, onnxx.SetLogLevel(onnxx.LogSilent))
}

// TestCastInputs: a float64 input for a float32 model is converted when asked, and reported as a
// copy.
func TestCastInputs(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	var copied bool
	out, err := s.Run(map[string]*core.Tensor{"X": core.MustFromSlice([]float64{1, 2, 3}, 1, 3)},
		onnxx.CastInputs(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	y, _ := core.ReadOnlyElements[float32](out["Y"])
	assert.Equal(t, []float32{3, 5, 7}, y)
	_, err = s.Run(map[string]*core.Tensor{"X": core.MustFromSlice([]float32{1, 2, 3}, 1, 3)}, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.False(t, copied)
	tr := must(core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2).Transpose())
	out, err = s.Run(map[string]*core.Tensor{"X": tr}, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	y, _ = core.ReadOnlyElements[float32](out["Y"])
	assert.Equal(t, []float32{3, 7, 11, 5, 9, 13}, y)
}

// TestCastRule: an input of another element type is cast by default when the cast keeps every
// value (float32 and int32 for a float64 model: a reported copy), and otherwise only with
// CastInputs or adapters.AllowCast (int64 and float64 for float32).
func TestCastRule(t *testing.T) {
	s, err := onnxx.NewSession(model("matmul_float64"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	b := core.MustNew(core.Float64, 16, 4)
	bd, _ := core.Elements[float64](b)
	for i := range bd {
		bd[i] = 1
	}
	for _, tc := range []struct {
		name string
		a    *core.Tensor
		opts []adapters.Option
		err  error
	}{
		{"float32, by default", twos[float32](), nil, nil},
		{"int32, by default", twos[int32](), nil, nil},
		{"int64, refused", twos[int64](), nil, adapters.ErrCast},
		{"int64 with CastInputs", twos[int64](), []adapters.Option{onnxx.CastInputs()}, nil},
		{"int64 with AllowCast", twos[int64](), []adapters.Option{adapters.AllowCast()}, nil},
		{"complex128, refused", twos[complex128](), nil, adapters.ErrCast},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var copied bool
			out, err := s.Run(map[string]*core.Tensor{"A": tc.a, "B": b}, append(tc.opts, adapters.ReportCopy(&copied))...)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.ErrorIs(t, err, onnxx.ErrDType)
				assert.False(t, copied)
				return
			}
			require.NoError(t, err)
			assert.True(t, copied, "a cast is a copy")
			c, _ := core.ReadOnlyElements[float64](out["C"])
			for _, v := range c {
				require.Equal(t, 32.0, v)
			}
		})
	}
}

// twos is an [8, 16] tensor of 2s.
func twos[T float32 | int32 | int64 | complex128]() *core.Tensor {
	d := make([]T, 8*16)
	for i := range d {
		d[i] = 2
	}
	return core.MustFromSlice(d, 8, 16)
}

// TestFailedRunLeavesReport: a run that copies its input and then fails (a destination of the
// wrong dtype, found after the input is bound; a destination of the wrong shape, which ORT
// itself refuses) leaves the caller's ReportCopy flag as it was, whatever was in it.
func TestFailedRunLeavesReport(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	transposed := func() *core.Tensor { return must(core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2).Transpose()) }
	for _, c := range []struct {
		name string
		x    func() *core.Tensor
		y    *core.Tensor
		err  error
		opts []adapters.Option
	}{
		{"copied input, float64 destination", transposed, core.MustNew(core.Float64, 2, 3), onnxx.ErrModel, nil},
		{"cast input, misshapen destination", func() *core.Tensor { return core.MustFromSlice([]float64{1, 2, 3}, 1, 3) },
			core.MustNew(core.Float32, 5, 3), onnxx.ErrRuntime, []adapters.Option{onnxx.CastInputs()}},
		{"input copied always, misshapen destination", transposed, core.MustNew(core.Float32, 5, 3), onnxx.ErrRuntime,
			[]adapters.Option{adapters.AlwaysCopy()}},
	} {
		for _, sentinel := range []bool{false, true} {
			copied := sentinel
			_, err := s.RunWith(map[string]*core.Tensor{"X": c.x()}, map[string]*core.Tensor{"Y": c.y},
				append(c.opts, adapters.ReportCopy(&copied))...)
			require.ErrorIs(t, err, c.err, c.name)
			assert.Equal(t, sentinel, copied, "%s: ReportCopy was set by a run that failed", c.name)
		}
	}
}

// TestScalarsAndOptions runs 0-d inputs and outputs under several session options, and checks
// that every option reaches ORT (a bad one fails) and the 0-d input is read in place.
func TestScalarsAndOptions(t *testing.T) {
	cases, err := manifest()
	require.NoError(t, err)
	var c modeltest.Case
	for _, x := range cases {
		if x.Name == "scalars" {
			c = x
		}
	}
	require.Equal(t, "scalars", c.Name)
	for _, opts := range []*onnxx.SessionOptions{
		nil,
		{IntraOpThreads: 1, InterOpThreads: 1, GraphOptimization: onnxx.OptimizeDisabled},
		{GraphOptimization: onnxx.OptimizeBasic, LogLevel: onnxx.LogSilent},
		{GraphOptimization: onnxx.OptimizeExtended},
		{GraphOptimization: onnxx.OptimizeAll, IntraOpThreads: 2},
	} {
		s, err := onnxx.NewSession(c.Model, nil, nil, opts)
		require.NoError(t, err)
		k, b := load(t, c.Inputs[0]), load(t, c.Inputs[1])
		require.Equal(t, 0, k.Ndim())
		var copied bool
		out, err := s.Run(map[string]*core.Tensor{"K": k, "B": b}, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
		require.NoError(t, err)
		assert.False(t, copied, "0-d inputs are read in place")
		equal(t, load(t, c.Outputs[0]), out["Y"], c.Tol)
		equal(t, load(t, c.Outputs[1]), out["T"], c.Tol)
		require.NoError(t, s.Destroy())
	}
	providers, err := onnxx.Providers()
	require.NoError(t, err)
	assert.Contains(t, providers, "CPUExecutionProvider")
}

// TestCUDA binds gpu/cuda device tensors as inputs and outputs through I/O binding. It needs an
// ORT library built with the CUDA execution provider and a GPU.
func TestCUDA(t *testing.T) {
	providers, err := onnxx.Providers()
	require.NoError(t, err)
	if !contains(providers, "CUDAExecutionProvider") {
		t.Skipf("the ONNX Runtime library has no CUDA execution provider (it has %v): the npm and Debian builds are CPU-only", providers)
	}
	x, err := gpu.To(core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3), gpu.Device(0))
	if errors.Is(err, gpu.ErrNoDevice) {
		t.Skipf("no CUDA device: %v", err)
	}
	require.NoError(t, err)
	defer x.Release()
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, &onnxx.SessionOptions{Providers: []onnxx.Provider{{Name: "CUDA"}}})
	require.NoError(t, err)
	defer s.Destroy()
	out, err := s.Run(map[string]*core.Tensor{"X": x})
	require.NoError(t, err)
	assert.Equal(t, core.CUDA, out["Y"].Device().DeviceType, "ORT allocated the output on the device")
	y, err := gpu.ToHost(out["Y"])
	require.NoError(t, err)
	v, _ := core.ReadOnlyElements[float32](y)
	assert.Equal(t, []float32{3, 5, 7, 9, 11, 13}, v)
	dst, err := gpu.To(core.MustNew(core.Float32, 2), gpu.Device(0))
	require.NoError(t, err)
	_, err = s.RunWith(map[string]*core.Tensor{"X": x}, map[string]*core.Tensor{"S": dst})
	require.NoError(t, err)
	sh, err := gpu.ToHost(dst)
	require.NoError(t, err)
	v, _ = core.ReadOnlyElements[float32](sh)
	assert.Equal(t, []float32{6, 15}, v)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
