package onnxx_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
)

// spinInputs are the inputs of the spin model: m iterations adding 1 to v0.
func spinInputs(m int64, v0 float32) map[string]*core.Tensor {
	return map[string]*core.Tensor{"M": core.Scalar(m), "C": core.Scalar(true), "V0": core.MustFromSlice([]float32{v0}, 1)}
}

// TestRunContext: a run that would not end (a Loop of 2^62 iterations) stops when its context is
// cancelled or its deadline passes, with an error wrapping the context's and ErrRuntime; a
// context already done fails before the run; the session runs again afterwards, and a run
// whose context stays live returns its results, with a tag, a log level and a run config entry.
func TestRunContext(t *testing.T) {
	s, err := onnxx.NewSession(model("spin"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = s.RunContext(ctx, spinInputs(1<<62, 0), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, onnxx.ErrRuntime)
	var re *onnxx.RuntimeError
	assert.True(t, errors.As(err, &re), "ORT's code and message: %v", err)
	assert.Regexp(t, `^onnxx: the run stopped: context deadline exceeded`, err.Error())

	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	dst := core.MustNew(core.Float32, 1)
	err = s.RunIntoContext(ctx, []*core.Tensor{core.Scalar[int64](1 << 62), core.Scalar(true), core.MustFromSlice([]float32{0}, 1)},
		[]*core.Tensor{dst}, nil)
	assert.ErrorIs(t, err, context.Canceled)

	_, err = s.RunContext(ctx, spinInputs(3, 0), nil)
	assert.ErrorIs(t, err, context.Canceled, "a context already done: the run does not start")
	assert.Regexp(t, `^onnxx: the run did not start: context canceled`, err.Error())

	ro := &onnxx.RunOptions{Tag: "spin-1000", LogLevel: onnxx.LogError,
		Config: map[string]string{"memory.enable_memory_arena_shrinkage": "cpu:0"}}
	out, err := s.RunContext(context.Background(), spinInputs(1000, 2), ro)
	require.NoError(t, err)
	assert.Equal(t, []float32{1002}, f32(t, out["V"]))
	require.NoError(t, s.RunIntoContext(context.Background(), []*core.Tensor{core.Scalar[int64](7), core.Scalar(true),
		core.MustFromSlice([]float32{1}, 1)}, []*core.Tensor{dst}, nil))
	assert.Equal(t, []float32{8}, f32(t, dst))
}

// TestRunProfile: with RunOptions.Profile, ORT writes the run's trace to a file named by the
// prefix, a JSON array of trace events that covers the model's operators; runs without it write
// none.
func TestRunProfile(t *testing.T) {
	s, err := onnxx.NewSession(model("spin"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	dir := t.TempDir()
	_, err = s.RunContext(context.Background(), spinInputs(3, 0), &onnxx.RunOptions{Tag: "plain"})
	require.NoError(t, err)
	out, err := s.RunContext(context.Background(), spinInputs(5, 1), &onnxx.RunOptions{Profile: filepath.Join(dir, "spin")})
	require.NoError(t, err)
	assert.Equal(t, []float32{6}, f32(t, out["V"]), "a profiled run computes as any run")
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.Len(t, files, 1, "one trace, of the profiled run only")
	assert.Regexp(t, `/spin[^/]*\.json$`, files[0])
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var events []struct {
		Cat  string `json:"cat"`
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal(b, &events), "the trace is a JSON array of events")
	cats := map[string]int{}
	for _, e := range events {
		cats[e.Cat]++
	}
	assert.Positive(t, cats["Node"], "the trace times the model's operators: %v", cats)
}
