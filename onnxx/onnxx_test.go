package onnxx_test

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

var dtypeNames = modeltest.DTypes

// load reads a raw element file that models.py wrote into a new core tensor.
func load(t *testing.T, f tensorFile) *core.Tensor {
	t.Helper()
	x, err := modeltest.Load(f)
	require.NoError(t, err)
	return x
}

// floats reads any float tensor's elements as float64s.
func floats(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	out := make([]float64, 0, x.Len())
	switch x.DType() {
	case core.Float32:
		d, err := core.ReadOnlyElements[float32](x)
		require.NoError(t, err)
		for _, v := range d {
			out = append(out, float64(v))
		}
	case core.Float64:
		d, err := core.ReadOnlyElements[float64](x)
		require.NoError(t, err)
		out = append(out, d...)
	case core.Float16:
		d, err := core.ReadOnlyElements[float16.Float16](x)
		require.NoError(t, err)
		for _, v := range d {
			out = append(out, float64(v.Float32()))
		}
	default:
		t.Fatalf("no float view of %s", x.DType())
	}
	return out
}

// equal asserts got holds want's elements (exactly, or within tol for floats).
func equal(t *testing.T, want, got *core.Tensor, tol float64) {
	t.Helper()
	require.Equal(t, want.DType(), got.DType())
	require.Equal(t, want.Shape(), got.Shape())
	if tol == 0 {
		wb, err := want.ReadOnlyBytes()
		require.NoError(t, err)
		gb, err := got.ReadOnlyBytes()
		require.NoError(t, err)
		require.Equal(t, wb, gb)
		return
	}
	w, g := floats(t, want), floats(t, got)
	for i := range w {
		require.InDelta(t, w[i], g[i], tol*math.Max(1, math.Abs(w[i])), "element %d", i)
	}
}

// TestModels runs every case models.py wrote (element-wise ops for every dtype, MatMul, dynamic
// axes with several batch sizes through one session, several inputs and outputs) and compares
// with NumPy's results.
func TestModels(t *testing.T) {
	cases, err := manifest()
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	sessions := map[string]*onnxx.Session{}
	defer func() {
		for _, s := range sessions {
			s.Destroy()
		}
	}()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			s := sessions[c.Model]
			if s == nil {
				s, err = onnxx.NewSession(c.Model, nil, nil, nil)
				require.NoError(t, err)
				sessions[c.Model] = s
			}
			in := map[string]*core.Tensor{}
			for _, f := range c.Inputs {
				in[f.Name] = load(t, f)
			}
			// float16 outputs of a dynamic shape come back on the first run at each shape (ORT
			// allocates them; the tensors are over its memory).
			out, err := s.Run(in)
			require.NoError(t, err)
			require.Len(t, out, len(c.Outputs))
			for _, f := range c.Outputs {
				require.Contains(t, out, f.Name)
				equal(t, load(t, f), out[f.Name], c.Tol)
			}
		})
	}
}

// dataOf returns the address of an ORT value's elements.
// TestToValueZeroCopy proves inputs share memory: the value's data is the tensor's address, and
// a write to the tensor between two runs of one AdvancedSession changes the result.
// TestToValueCopies covers layouts ORT cannot read in place: they are copied into C order (or
// refused under ZeroCopyOnly), and AlwaysCopy copies even C order.
// TestReadOnlyInput: ORT never writes inputs, so read-only tensors are shared.
// settle lets earlier tests' unreachable tensors go, so that LiveForeign counts this test's.
// TestForeignMemory feeds ORT memory Go did not allocate (an anonymous mmap): zero-copy, kept
// alive by the value after the tensor is released, and unmapped exactly once after both are gone.
// runForeign makes an ORT value of x, releases x, and runs a model on the value.
// TestFromValue converts values of every type onnxruntime_go makes, without copying, and
// destroys each exactly once when its tensor goes.
// TestRoundTrip: ToValue then FromValue gives a tensor over the same memory.
// TestSessionOutputsInPlace: outputs of a declared shape are Go memory ORT wrote into; RunWith
// writes into the caller's tensors.
func TestSessionOutputsInPlace(t *testing.T) {
	s, err := onnxx.NewSession(model("matmul_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	a := core.MustNew(core.Float32, 8, 16)
	b := core.MustNew(core.Float32, 16, 4)
	ad, _ := core.Elements[float32](a)
	bd, _ := core.Elements[float32](b)
	for i := range ad {
		ad[i] = 1
	}
	for i := range bd {
		bd[i] = float32(i % 4)
	}
	out, err := s.Run(map[string]*core.Tensor{"A": a, "B": b})
	require.NoError(t, err)
	c := out["C"]
	v, err := core.At[float32](c, 7, 3)
	require.NoError(t, err)
	assert.Equal(t, float32(48), v)

	dst := core.MustNew(core.Float32, 8, 4)
	out, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": dst})
	require.NoError(t, err)
	assert.Same(t, dst, out["C"])
	v, err = core.At[float32](dst, 0, 2)
	require.NoError(t, err)
	assert.Equal(t, float32(32), v)

	wrong := core.MustNew(core.Float32, 4, 8)
	_, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": wrong})
	require.ErrorIs(t, err, onnxx.ErrModel)
	tr, _ := core.MustNew(core.Float32, 4, 8).Transpose()
	_, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": tr})
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	ro, _ := dst.AsReadOnly()
	_, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"C": ro})
	require.ErrorIs(t, err, core.ErrReadOnly)
}

// TestSessionErrors: inputs and outputs that do not match the model are refused clearly.
func TestSessionErrors(t *testing.T) {
	s, err := onnxx.NewSession(model("matmul_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	a, b := core.MustNew(core.Float32, 8, 16), core.MustNew(core.Float32, 16, 4)
	for _, tc := range []struct {
		name string
		in   map[string]*core.Tensor
	}{
		{"missing", map[string]*core.Tensor{"A": a}},
		{"extra", map[string]*core.Tensor{"A": a, "B": b, "Q": b}},
		{"dtype", map[string]*core.Tensor{"A": a, "B": core.MustNew(core.Float64, 16, 4)}},
		{"shape", map[string]*core.Tensor{"A": a, "B": core.MustNew(core.Float32, 4, 16)}},
		{"rank", map[string]*core.Tensor{"A": a, "B": core.MustNew(core.Float32, 64)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Run(tc.in)
			require.ErrorIs(t, err, onnxx.ErrModel)
		})
	}
	_, err = s.RunWith(map[string]*core.Tensor{"A": a, "B": b}, map[string]*core.Tensor{"nope": a})
	require.ErrorIs(t, err, onnxx.ErrModel)
	_, err = onnxx.NewSession(model("matmul_float32"), []string{"Z"}, nil, nil)
	require.ErrorIs(t, err, onnxx.ErrModel)
	_, err = onnxx.NewSession(model("matmul_float32"), nil, []string{"Z"}, nil)
	require.ErrorIs(t, err, onnxx.ErrModel)
	_, err = onnxx.NewSession(model("no_such_model"), nil, nil, nil)
	require.Error(t, err)
}

// TestRunScalar runs a model with 0-d input and output.
func TestRunScalar(t *testing.T) {
	out, err := onnxx.Run(model("scalar"), map[string]*core.Tensor{"X": core.Scalar(float32(41))}, nil)
	require.NoError(t, err)
	y := out["Y"]
	require.Equal(t, 0, y.Ndim())
	v, err := core.At[float32](y)
	require.NoError(t, err)
	assert.Equal(t, float32(42), v)
}

// TestEmptyTensors: tensors with a 0 in their shape become ORT values and come back.
// TestRunWithScalarDestination: a 0-d destination receives the 0-d output.
func TestRunWithScalarDestination(t *testing.T) {
	s, err := onnxx.NewSession(model("scalar"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	dst := core.MustNew(core.Float32)
	out, err := s.RunWith(map[string]*core.Tensor{"X": core.Scalar(float32(1.5))}, map[string]*core.Tensor{"Y": dst})
	require.NoError(t, err)
	assert.Same(t, dst, out["Y"])
	v, err := core.At[float32](dst)
	require.NoError(t, err)
	assert.Equal(t, float32(2.5), v)
}

// TestDynamicShapeCache: with dynamic axes the first run lets ORT allocate, and later runs with
// the same input shapes write straight into tensors allocated in Go memory.
func TestDynamicShapeCache(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	in := map[string]*core.Tensor{"X": core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)}
	first, err := s.Run(in)
	require.NoError(t, err)
	second, err := s.Run(in)
	require.NoError(t, err)
	for _, out := range []map[string]*core.Tensor{first, second} {
		y, err := core.ReadOnlyElements[float32](out["Y"])
		require.NoError(t, err)
		assert.Equal(t, []float32{3, 5, 7, 9, 11, 13}, y)
		sum, err := core.ReadOnlyElements[float32](out["S"])
		require.NoError(t, err)
		assert.Equal(t, []float32{6, 15}, sum)
	}
}

// TestConcurrentRuns shares one Session between goroutines (run with -race).
func TestConcurrentRuns(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				n := int64(1 + (g+i)%4)
				x := core.MustNew(core.Float32, n, 3)
				out, err := s.Run(map[string]*core.Tensor{"X": x})
				if err != nil {
					errs <- err
					return
				}
				y, _ := core.ReadOnlyElements[float32](out["Y"])
				for _, v := range y {
					if v != 1 {
						errs <- assert.AnError
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestInit(t *testing.T) {
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, onnxx.Init())
		}()
	}
	wg.Wait()
	p, err := onnxx.LibraryPath()
	require.NoError(t, err)
	assert.FileExists(t, p)

	t.Setenv("ONNXRUNTIME_LIB", "/nonexistent/libonnxruntime.so")
	_, err = onnxx.LibraryPath()
	require.ErrorIs(t, err, onnxx.ErrNoRuntime)
	assert.Contains(t, err.Error(), "/nonexistent/libonnxruntime.so")
	t.Setenv("ONNXRUNTIME_LIB", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, err = onnxx.LibraryPath()
	require.ErrorIs(t, err, onnxx.ErrNoRuntime)
	assert.Contains(t, err.Error(), "fetch-ort.sh")
	require.NoError(t, onnxx.Init(), "Init after a successful Init does nothing")
}

func TestDTypes(t *testing.T) {
	for name, dt := range dtypeNames {
		ot, err := onnxx.ToDType(dt)
		require.NoError(t, err, name)
		back, err := onnxx.FromDType(ot)
		require.NoError(t, err)
		assert.Equal(t, dt, back)
	}
	_, err := onnxx.FromDType(onnxx.String)
	require.ErrorIs(t, err, onnxx.ErrDType)
}

// TestRunInto: positional runs into the caller's tensors reuse the values made for the same
// tensors, see changes of the inputs' elements, and make new values for other tensors.
func TestRunInto(t *testing.T) {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	xs := []float32{1, 2, 3, 4, 5, 6}
	x := core.MustFromSlice(xs, 2, 3)
	y, sum := core.MustNew(core.Float32, 2, 3), core.MustNew(core.Float32, 2)
	require.NoError(t, s.RunInto([]*core.Tensor{x}, []*core.Tensor{y, sum}))
	got, _ := core.ReadOnlyElements[float32](y)
	assert.Equal(t, []float32{3, 5, 7, 9, 11, 13}, got)

	xs[0] = 10 // the same tensor again: ORT reads its current elements
	require.NoError(t, s.RunInto([]*core.Tensor{x}, []*core.Tensor{y, sum}))
	assert.Equal(t, []float32{21, 5, 7, 9, 11, 13}, got)
	sums, _ := core.ReadOnlyElements[float32](sum)
	assert.Equal(t, []float32{15, 15}, sums)

	// other tensors, of another shape, with the same session
	x2 := core.MustFromSlice([]float32{0, 0, 0}, 1, 3)
	y2, sum2 := core.MustNew(core.Float32, 1, 3), core.MustNew(core.Float32, 1)
	require.NoError(t, s.RunInto([]*core.Tensor{x2}, []*core.Tensor{y2, sum2}))
	got2, _ := core.ReadOnlyElements[float32](y2)
	assert.Equal(t, []float32{1, 1, 1}, got2)

	// a view of the same memory with another shape is a different tensor: no stale value
	flat, err := x.Reshape(1, 6)
	require.NoError(t, err)
	_, err = s.Run(map[string]*core.Tensor{"X": flat})
	require.ErrorIs(t, err, onnxx.ErrModel, "the model wants 3 columns")

	// a released input is refused, not read through the value kept for it
	x.Release()
	err = s.RunInto([]*core.Tensor{x}, []*core.Tensor{y, sum})
	require.ErrorIs(t, err, core.ErrReleased)

	for _, tc := range []struct {
		name    string
		in, out []*core.Tensor
		want    error
	}{
		{"count", []*core.Tensor{x2}, []*core.Tensor{y2}, onnxx.ErrModel},
		{"nil output", []*core.Tensor{x2}, []*core.Tensor{y2, nil}, onnxx.ErrModel},
		{"nil input", []*core.Tensor{nil}, []*core.Tensor{y2, sum2}, onnxx.ErrModel},
		{"wrong shape", []*core.Tensor{x2}, []*core.Tensor{y, sum2}, nil},
		{"read-only", []*core.Tensor{x2}, []*core.Tensor{must(y2.AsReadOnly()), sum2}, core.ErrReadOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.RunInto(tc.in, tc.out)
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}

// TestRunIntoRepeatedChecks: a run repeated on the same tensors (the path that reuses every
// kept value) refuses what the first run refused: a destination overlapping an input, a
// destination whose shape is not the output's for these inputs; afterwards the session runs
// normally and nothing leaked.
func TestRunIntoRepeatedChecks(t *testing.T) {
	before := leakcheck.Settle()
	rec, err := onnxx.NewSession(model("recurrent"), nil, nil, nil)
	require.NoError(t, err)
	defer rec.Destroy()
	x, h, y := core.MustNew(core.Float32, 2, 4), core.MustNew(core.Float32, 2, 8), core.MustNew(core.Float32, 2, 2)
	for range 3 {
		err := rec.RunInto([]*core.Tensor{x, h}, []*core.Tensor{y, h})
		require.ErrorIs(t, err, onnxx.ErrOverlap)
		assert.Contains(t, err.Error(), `output "Hn" overlaps input "H"`)
	}
	hn := core.MustNew(core.Float32, 2, 8)
	require.NoError(t, rec.RunInto([]*core.Tensor{x, h}, []*core.Tensor{y, hn}))

	dyn, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	require.NoError(t, err)
	defer dyn.Destroy()
	x1 := core.MustFromSlice([]float32{1, 2, 3}, 1, 3)
	wrong, sum := core.MustNew(core.Float32, 2, 3), core.MustNew(core.Float32, 1)
	for range 3 {
		err := dyn.RunInto([]*core.Tensor{x1}, []*core.Tensor{wrong, sum})
		require.ErrorIs(t, err, onnxx.ErrModel)
		require.ErrorIs(t, err, onnxx.ErrRuntime)
	}
	right := core.MustNew(core.Float32, 1, 3)
	for range 2 {
		require.NoError(t, dyn.RunInto([]*core.Tensor{x1}, []*core.Tensor{right, sum}))
		got, _ := core.ReadOnlyElements[float32](right)
		assert.Equal(t, []float32{3, 5, 7}, got)
		sums, _ := core.ReadOnlyElements[float32](sum)
		assert.Equal(t, []float32{6}, sums)
	}
	require.NoError(t, rec.Destroy())
	require.NoError(t, dyn.Destroy())
	assert.Equal(t, before, leakcheck.Settle())
}

func must(t *core.Tensor, err error) *core.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

// TestRunIntoAllocs: repeated inference on the same tensors allocates nothing in onnxx (the
// allocations left are onnxruntime_go's own, two slices of C pointers per run).
// TestRunIntoKeepsNoHold: the values a session keeps for reuse do not hold the caller's memory:
// releasing a wrapped input frees it at once, and the session then refuses the released tensor.
func TestRunIntoKeepsNoHold(t *testing.T) {
	s, err := onnxx.NewSession(model("small"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	mem := make([]float32, 64)
	released := 0
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{1, 64}}, func() { released++ })
	require.NoError(t, err)
	y := core.MustNew(core.Float32, 1, 64)
	for range 3 {
		require.NoError(t, s.RunInto([]*core.Tensor{x}, []*core.Tensor{y}))
	}
	assert.Equal(t, 0, released)
	x.Release()
	assert.Equal(t, 1, released, "the session does not delay the release")
	err = s.RunInto([]*core.Tensor{x}, []*core.Tensor{y})
	require.ErrorIs(t, err, core.ErrReleased)
	_, err = s.Run(map[string]*core.Tensor{"X": x})
	require.ErrorIs(t, err, core.ErrReleased)
	assert.Equal(t, 1, released)
	runtime.KeepAlive(mem)
}
