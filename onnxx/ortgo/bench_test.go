package ortgo_test

import (
	"slices"
	"testing"
	"time"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
	ort "github.com/yalue/onnxruntime_go"
)

// BenchmarkToValue: making an input is O(1) in the tensor's size (1 MiB and 256 MiB of float32),
// beside the copying path (adapters.AlwaysCopy) at 1 MiB.
func BenchmarkToValue(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int64
		opts []adapters.Option
	}{
		{"zerocopy/1MiB", 1 << 18, nil},
		{"zerocopy/256MiB", 1 << 26, nil},
		{"copy/1MiB", 1 << 18, []adapters.Option{adapters.AlwaysCopy()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			x := core.MustNew(core.Float32, bc.n)
			b.SetBytes(bc.n * 4)
			b.ResetTimer()
			for b.Loop() {
				v, err := ortgo.ToValue(x, bc.opts...)
				if err != nil {
					b.Fatal(err)
				}
				v.Destroy()
			}
		})
	}
}

// BenchmarkSmallModel: end-to-end latency of Relu(X·W + B), X 1×64, side by side (onnxx calls ORT's
// C API through purego, onnxruntime_go through cgo):
//
//   - onnxruntime_go: plain onnxruntime_go as it is used for repeated inference, an input and an
//     output tensor made once and passed to every run (the baseline);
//   - onnxx/RunInto: the same with core tensors, which the session makes ORT values of once;
//   - onnxx/RunWith: the map API with a preallocated destination;
//   - onnxx/Run: the convenience path, a new output tensor per run, released after it (its block
//     lent again to the next run), and onnxx/Run/collected, left to the collector;
//   - onnxruntime_go/fresh: onnxruntime_go making both values anew for every run, for reference.
func BenchmarkSmallModel(b *testing.B) {
	in, opts := smallSetup(b)
	session := func(b *testing.B) *onnxx.Session { return smallSession(b, "small") }
	b.Run("onnxruntime_go", func(b *testing.B) {
		s := smallPlain(b, "small", opts)
		x, y := smallValues(b, in)
		ins, outs := []ort.Value{x}, []ort.Value{y}
		defer cpuPerOp(b)()
		for b.Loop() {
			if err := s.Run(ins, outs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("onnxx/RunInto", func(b *testing.B) {
		s := session(b)
		ins := []*core.Tensor{core.MustFromSlice(in, 1, 64)}
		outs := []*core.Tensor{core.MustNew(core.Float32, 1, 64)}
		defer cpuPerOp(b)()
		for b.Loop() {
			if err := s.RunInto(ins, outs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("onnxx/RunWith", func(b *testing.B) {
		s := session(b)
		ins := map[string]*core.Tensor{"X": core.MustFromSlice(in, 1, 64)}
		outs := map[string]*core.Tensor{"Y": core.MustNew(core.Float32, 1, 64)}
		defer cpuPerOp(b)()
		for b.Loop() {
			if _, err := s.RunWith(ins, outs); err != nil {
				b.Fatal(err)
			}
		}
	})
	benchSmallRun(b, "small", in)
	b.Run("onnxruntime_go/fresh", func(b *testing.B) {
		s := smallPlain(b, "small", opts)
		defer cpuPerOp(b)()
		for b.Loop() {
			x, err := ort.NewTensor(ort.NewShape(1, 64), in)
			if err != nil {
				b.Fatal(err)
			}
			y, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 64))
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Run([]ort.Value{x}, []ort.Value{y}); err != nil {
				b.Fatal(err)
			}
			x.Destroy()
			y.Destroy()
		}
	})
}

// BenchmarkSmallModelRounds is BenchmarkSmallModel's paths interleaved: on a shared machine whose
// speed drifts from one second to the next, paths timed one after another are compared across
// that drift, so this benchmark runs each path for a round of 1000 runs in turn, 40 rounds, and
// reports each path's median CPU time per run over the rounds (the process's, all threads, from
// getrusage: the collector's work for a path's garbage included) and the median of its ratio to
// the same round's onnxruntime_go line (tensors reused), as <path>-ns/op and <path>-ratio, and
// the same of wall time per run as <path>-wall-ns/op and <path>-wall-ratio. Run with
// -benchtime=1x: the rounds are the benchmark's own.
func BenchmarkSmallModelRounds(b *testing.B) {
	in, opts := smallSetup(b)
	s, plain := smallSession(b, "small"), smallPlain(b, "small", opts)
	x, y := smallValues(b, in)
	ins, outs := []*core.Tensor{core.MustFromSlice(in, 1, 64)}, []*core.Tensor{core.MustNew(core.Float32, 1, 64)}
	insMap, outsMap := map[string]*core.Tensor{"X": ins[0]}, map[string]*core.Tensor{"Y": outs[0]}
	run := func(release bool) func() error {
		s := smallSession(b, "small") // its own: outputs dropped unreleased keep their session's leases until collected
		return func() error {
			out, err := s.Run(insMap)
			if err == nil && release {
				out["Y"].Release()
			}
			return err
		}
	}
	paths := []struct {
		name string
		run  func() error
	}{
		{"onnxruntime_go", func() error { return plain.Run([]ort.Value{x}, []ort.Value{y}) }},
		{"RunInto", func() error { return s.RunInto(ins, outs) }},
		{"RunWith", func() error { _, err := s.RunWith(insMap, outsMap); return err }},
		{"Run", run(true)},
		{"Run-collected", run(false)},
		{"onnxruntime_go-fresh", func() error {
			x, err := ort.NewTensor(ort.NewShape(1, 64), in)
			if err != nil {
				return err
			}
			defer x.Destroy()
			y, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 64))
			if err != nil {
				return err
			}
			defer y.Destroy()
			return plain.Run([]ort.Value{x}, []ort.Value{y})
		}},
	}
	const rounds, perRound = 40, 1000
	ns, ratios := make([][]float64, len(paths)), make([][]float64, len(paths))       // CPU time
	wall, wallRatios := make([][]float64, len(paths)), make([][]float64, len(paths)) // wall time
	for range b.N {
		for range rounds {
			for i, p := range paths {
				c0, w0 := cpuTime(), time.Now()
				for range perRound {
					if err := p.run(); err != nil {
						b.Fatal(err)
					}
				}
				w, c := time.Since(w0), cpuTime()-c0
				ns[i] = append(ns[i], float64(c)/perRound)
				ratios[i] = append(ratios[i], ns[i][len(ns[i])-1]/ns[0][len(ns[0])-1])
				wall[i] = append(wall[i], float64(w)/perRound)
				wallRatios[i] = append(wallRatios[i], wall[i][len(wall[i])-1]/wall[0][len(wall[0])-1])
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	for i, p := range paths {
		b.ReportMetric(median(ns[i]), p.name+"-ns/op")
		b.ReportMetric(median(wall[i]), p.name+"-wall-ns/op")
		if i > 0 {
			b.ReportMetric(median(ratios[i]), p.name+"-ratio")
			b.ReportMetric(median(wallRatios[i]), p.name+"-wall-ratio")
		}
	}
}

// median returns the middle value of x (which it sorts).
func median(x []float64) float64 {
	slices.Sort(x)
	return x[len(x)/2]
}

// BenchmarkSmallDynamicModel: the model of BenchmarkSmallModel exported with a dynamic batch
// dimension, as models for serving are (X [batch, 64], Y [batch, 64]), run at batch 1: ORT
// allocates Y on every run. Side by side:
//
//   - onnxruntime_go: DynamicAdvancedSession.Run with a nil output, which ORT allocates and
//     onnxruntime_go hands back as a value, destroyed after the run;
//   - onnxx/Run: the tensor over ORT's output, released after the run;
//   - onnxx/Run/collected: the same, left to the collector as most callers leave small results.
func BenchmarkSmallDynamicModel(b *testing.B) {
	in, opts := smallSetup(b)
	b.Run("onnxruntime_go", func(b *testing.B) {
		s := smallPlain(b, "small_dynamic", opts)
		x, _ := smallValues(b, in)
		ins := []ort.Value{x}
		defer cpuPerOp(b)()
		for b.Loop() {
			outs := []ort.Value{nil}
			if err := s.Run(ins, outs); err != nil {
				b.Fatal(err)
			}
			outs[0].Destroy()
		}
	})
	benchSmallRun(b, "small_dynamic", in)
}

// benchSmallRun benchmarks Session.Run of the small model name as onnxx/Run, its output released
// after each run, and as onnxx/Run/collected, left to the collector.
func benchSmallRun(b *testing.B, name string, in []float32) {
	for _, release := range []bool{true, false} {
		sub := "onnxx/Run"
		if !release {
			sub += "/collected"
		}
		b.Run(sub, func(b *testing.B) {
			s := smallSession(b, name)
			ins := map[string]*core.Tensor{"X": core.MustFromSlice(in, 1, 64)}
			defer cpuPerOp(b)()
			for b.Loop() {
				out, err := s.Run(ins)
				if err != nil {
					b.Fatal(err)
				}
				if release {
					out["Y"].Release()
				}
			}
		})
	}
}

// smallSession is an onnxx session of the small model name at one ORT thread, destroyed when b
// ends.
func smallSession(b *testing.B, name string) *onnxx.Session {
	s, err := onnxx.NewSession(model(name), nil, nil, &onnxx.SessionOptions{IntraOpThreads: 1, InterOpThreads: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Destroy() })
	return s
}

// smallPlain is the onnxruntime_go session of the small model name, destroyed when b ends.
func smallPlain(b *testing.B, name string, opts *ort.SessionOptions) *ort.DynamicAdvancedSession {
	s, err := ort.NewDynamicAdvancedSession(model(name), []string{"X"}, []string{"Y"}, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Destroy() })
	return s
}

// smallValues makes onnxruntime_go's X (over in) and Y values of the small model, destroyed when b
// ends.
func smallValues(b *testing.B, in []float32) (x, y *ort.Tensor[float32]) {
	x, err := ort.NewTensor(ort.NewShape(1, 64), in)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.Destroy() })
	y, err = ort.NewEmptyTensor[float32](ort.NewShape(1, 64))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { y.Destroy() })
	return x, y
}

// smallSetup returns the input of the small models' benchmarks and onnxruntime_go session options
// with one ORT thread, destroyed when b ends: one thread for both sides, as on a small shared
// machine ORT's pool threads spinning for work measure the machine's load rather than either path.
func smallSetup(b *testing.B) ([]float32, *ort.SessionOptions) {
	in := make([]float32, 64)
	for i := range in {
		in[i] = float32(i) / 64
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { opts.Destroy() })
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		b.Fatal(err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		b.Fatal(err)
	}
	return in, opts
}

// cpuPerOp starts counting the process's CPU time; the function it returns reports it per
// iteration as cpu-ns/op. On a shared machine the CPU time a path takes varies less than its wall
// time, which includes waiting for a core. (It counts every thread: ORT's, the collector's.)
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkAdd64MiB: Z = X + Y over 64 MiB float32 inputs: onnxx sharing the inputs' memory
// beside the copying path (inputs copied into C order first, as for a strided tensor).
func BenchmarkAdd64MiB(b *testing.B) {
	const n = 16 << 20
	x, y := core.MustNew(core.Float32, n), core.MustNew(core.Float32, n)
	s, err := onnxx.NewSession(model("add64m"), nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Destroy()
	z := core.MustNew(core.Float32, n)
	outs := map[string]*core.Tensor{"Z": z}
	b.Run("zerocopy", func(b *testing.B) {
		b.SetBytes(3 * 4 * n)
		for b.Loop() {
			if _, err := s.RunWith(map[string]*core.Tensor{"X": x, "Y": y}, outs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(3 * 4 * n)
		for b.Loop() {
			xc, err := memory.Contiguous(x)
			if err != nil {
				b.Fatal(err)
			}
			yc, err := memory.Contiguous(y)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.RunWith(map[string]*core.Tensor{"X": xc, "Y": yc}, outs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLargeDynamicOutput: Y = Concat(X, X) with X [2^19, 3] float32 (6 MiB) and Y of a shape
// the model does not declare (12 MiB), so ORT allocates Y on every run, side by side:
//
//   - onnxruntime_go: DynamicAdvancedSession.Run with a nil output, which copies ORT's output into
//     Go memory and releases ORT's;
//   - onnxx/Run: the tensor is over ORT's buffer (no copy) and releases it when released.
func BenchmarkLargeDynamicOutput(b *testing.B) {
	const rows = 1 << 19
	in := make([]float32, rows*3)
	for i := range in {
		in[i] = float32(i)
	}
	b.Run("onnxruntime_go", func(b *testing.B) {
		s, err := ort.NewDynamicAdvancedSession(model("dyn_float32"), []string{"X"}, []string{"Y"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Destroy()
		x, err := ort.NewTensor(ort.NewShape(rows, 3), in)
		if err != nil {
			b.Fatal(err)
		}
		defer x.Destroy()
		b.SetBytes(2 * rows * 3 * 4)
		outs := []ort.Value{nil}
		defer cpuPerOp(b)()
		for b.Loop() {
			outs[0] = nil
			if err := s.Run([]ort.Value{x}, outs); err != nil {
				b.Fatal(err)
			}
			outs[0].Destroy()
		}
	})
	b.Run("onnxx/Run", func(b *testing.B) {
		s, err := onnxx.NewSession(model("dyn_float32"), nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Destroy()
		ins := map[string]*core.Tensor{"X": core.MustFromSlice(in, rows, 3)}
		b.SetBytes(2 * rows * 3 * 4)
		defer cpuPerOp(b)()
		for b.Loop() {
			out, err := s.Run(ins)
			if err != nil {
				b.Fatal(err)
			}
			out["Y"].Release()
		}
	})
}
