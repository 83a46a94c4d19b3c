package onnxx

import (
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx/internal/modeltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settles runs run, which must succeed, and reports whether it was a settled run (see "One run
// engine").
func settles(t *testing.T, s *Session, run func() error) bool {
	t.Helper()
	n := s.b.settledRuns
	require.NoError(t, run())
	return s.b.settledRuns == n+1
}

// TestSettledRun: a run is settled exactly when every tensor is one the session kept a value
// over and the session's scratch is free; it computes what a run binding afresh computes, from
// the tensors' current elements.
func TestSettledRun(t *testing.T) {
	s, err := NewSession(modeltest.Model("small"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	xs := make([]float32, 64)
	for i := range xs {
		xs[i] = float32(i%7) - 3
	}
	x, y := core.MustFromSlice(xs, 1, 64), core.MustNew(core.Float32, 1, 64)
	ins, outs := []*core.Tensor{x}, []*core.Tensor{y}
	into := func(opts ...adapters.Option) func() error {
		return func() error { return s.RunInto(ins, outs, opts...) }
	}
	want := func() []float32 { // on a new output, bound afresh
		t.Helper()
		out, err := s.Run(map[string]*core.Tensor{"X": x}, adapters.AlwaysCopy())
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

	assert.False(t, settles(t, s, into()), "nothing is kept before the first run")
	first := append([]float32{}, got()...)
	assert.Equal(t, want(), first)

	clear(got())
	require.True(t, settles(t, s, into()), "the same tensors: the kept values")
	assert.Equal(t, first, got())
	assert.NotZero(t, got()[0]+got()[1]+got()[63], "ORT wrote the output")

	xs[0], xs[63] = 10, -10 // ORT reads the input's current elements
	require.True(t, settles(t, s, into()))
	assert.Equal(t, want(), got())
	assert.NotEqual(t, first, got())

	// another output tensor, another input tensor over the same memory: bound afresh, then kept
	y2 := core.MustNew(core.Float32, 1, 64)
	assert.False(t, settles(t, s, func() error { return s.RunInto(ins, []*core.Tensor{y2}) }))
	view, err := x.Reshape(1, 64)
	require.NoError(t, err)
	assert.False(t, settles(t, s, func() error { return s.RunInto([]*core.Tensor{view}, []*core.Tensor{y2}) }))
	assert.True(t, settles(t, s, func() error { return s.RunInto([]*core.Tensor{view}, []*core.Tensor{y2}) }))
	assert.False(t, settles(t, s, into()))
	assert.True(t, settles(t, s, into()))

	// the session's scratch taken by another run: RunInto runs on a stage of its own
	s.b.mu.Lock()
	clear(got())
	n := s.b.settledRuns
	require.NoError(t, s.RunInto(ins, outs))
	assert.Equal(t, n, s.b.settledRuns, "not settled")
	s.b.mu.Unlock()
	assert.Equal(t, want(), got())

	// AlwaysCopy copies the input: the kept value (over x itself) is not used
	var copied bool
	assert.False(t, settles(t, s, into(adapters.AlwaysCopy(), adapters.ReportCopy(&copied))))
	assert.True(t, copied)
	copied = true
	assert.True(t, settles(t, s, into(adapters.ReportCopy(&copied))))
	assert.False(t, copied, "a settled run copies nothing and says so")

	// a released output and a destroyed session are refused
	y.Release()
	require.ErrorIs(t, s.RunInto(ins, outs), core.ErrReleased)
	y3 := core.MustNew(core.Float32, 1, 64)
	assert.False(t, settles(t, s, func() error { return s.RunInto(ins, []*core.Tensor{y3}) }))
	require.NoError(t, s.Destroy())
	require.ErrorIs(t, s.RunInto(ins, []*core.Tensor{y3}), ErrModel)
}

// TestSettledRunChecksOverlap: a settled run skips the overlap check only after a settled run
// made it over every slot. A run whose output was lent checks its input against the lent block,
// not against the kept destination: here the input's slot and the output's slot overlap (kept
// by a run that failed the check), settled Runs pass, and the settled RunInto after them is
// refused.
func TestSettledRunChecksOverlap(t *testing.T) {
	s, err := NewSession(modeltest.Model("small"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	buf := make([]float32, 64)
	x1, x2, y := core.MustNew(core.Float32, 1, 64), core.MustFromSlice(buf, 1, 64), core.MustFromSlice(buf, 1, 64)
	require.NoError(t, s.RunInto([]*core.Tensor{x1}, []*core.Tensor{y}))
	for range 2 {
		require.ErrorIs(t, s.RunInto([]*core.Tensor{x2}, []*core.Tensor{y}), ErrOverlap)
	}
	for range 2 {
		assert.True(t, settles(t, s, func() error {
			out, err := s.Run(map[string]*core.Tensor{"X": x2})
			if err == nil {
				out["Y"].Release()
			}
			return err
		}), "the input kept, the output lent")
	}
	require.ErrorIs(t, s.RunInto([]*core.Tensor{x2}, []*core.Tensor{y}), ErrOverlap)
}

// TestKeptBinding: a settled run goes through the session's I/O binding, which holds the values
// of the last settled run. A run with other tensors binds theirs, so ORT reads and writes only the
// tensors of the run at hand: a destination bound before and not given now keeps its elements;
// a slot's value replaced forgets what the binding holds (a new value may reuse a released one's
// address); Destroy releases the binding with the session.
func TestKeptBinding(t *testing.T) {
	s, err := NewSession(modeltest.Model("small"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	require.True(t, s.bindKept, "a session without execution providers")
	input := func(k float32) *core.Tensor {
		xs := make([]float32, 64)
		for i := range xs {
			xs[i] = float32(i%5)*k - 1
		}
		return core.MustFromSlice(xs, 1, 64)
	}
	elements := func(y *core.Tensor) []float32 {
		e, err := core.ReadOnlyElements[float32](y)
		require.NoError(t, err)
		return append([]float32{}, e...)
	}
	want := func(x *core.Tensor) []float32 { // bound afresh: AlwaysCopy copies the input
		out, err := s.Run(map[string]*core.Tensor{"X": x}, adapters.AlwaysCopy())
		require.NoError(t, err)
		defer out["Y"].Release()
		return elements(out["Y"])
	}
	kept := func(x, y *core.Tensor) { // a run keeps new tensors' values, the next is settled
		t.Helper()
		run := func() error { return s.RunInto([]*core.Tensor{x}, []*core.Tensor{y}) }
		require.NoError(t, run())
		require.True(t, settles(t, s, run))
	}
	x1, x2 := input(1), input(-2)
	w1, w2 := want(x1), want(x2)
	require.NotEqual(t, w1, w2)
	y1, y2 := core.MustNew(core.Float32, 1, 64), core.MustNew(core.Float32, 1, 64)

	kept(x1, y1)
	assert.Equal(t, w1, elements(y1))
	require.NotZero(t, s.h.io, "the settled run made the binding")
	assert.Equal(t, []uintptr{s.b.in[0].v, s.b.out[0].v}, s.b.bound, "it holds the slots' values")

	sentinel, err := core.Elements[float32](y1)
	require.NoError(t, err)
	clear(sentinel)
	sentinel[0] = 42
	kept(x2, y2) // new slots: the binding holds x2 and y2 now
	assert.Equal(t, w2, elements(y2))
	assert.Equal(t, float32(42), elements(y1)[0], "the destination bound before is not written")
	assert.Zero(t, elements(y1)[1])
	assert.Equal(t, []uintptr{s.b.in[0].v, s.b.out[0].v}, s.b.bound)

	for i, x := range []*core.Tensor{x1, x2, x1} { // inputs in turn into the same destination
		kept(x, y2)
		assert.Equal(t, map[bool][]float32{true: w2, false: w1}[i == 1], elements(y2), "run %d", i)
	}

	s.b.mu.Lock() // what binding a new destination does
	v, err := s.api.newValue(&s.b.st, y1, s.outputs[0].ElementType, s.api.cpuInfo)
	require.NoError(t, err)
	s.b.setSlot(&s.b.out[0], y1, v, true)
	assert.Equal(t, []uintptr{0, 0}, s.b.bound, "a replaced value unbinds every value")
	s.b.mu.Unlock()
	kept(x1, y2)
	assert.Equal(t, w1, elements(y2))

	// Run's outputs: while the caller holds one, the next run is lent another lease, whose value
	// the binding takes in place of the held one's
	ya := runOne(t, s, x1)
	mine, err := core.Elements[float32](ya)
	require.NoError(t, err)
	clear(mine)
	for range 3 {
		yb := runOne(t, s, x1)
		assert.NotEqual(t, ya.Data(), yb.Data())
		assert.Equal(t, w1, elements(yb))
		assert.Equal(t, make([]float32, 64), elements(ya), "the held output is not written")
		yb.Release()
	}
	ya.Release()

	require.NoError(t, s.Destroy())
	assert.Zero(t, s.h.io, "released with the session")
}

// runOne runs s, of the small model, on x and returns its output.
func runOne(t *testing.T, s *Session, x *core.Tensor) *core.Tensor {
	t.Helper()
	out, err := s.Run(map[string]*core.Tensor{"X": x})
	require.NoError(t, err)
	return out["Y"]
}
