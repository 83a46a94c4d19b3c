package onnxx_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
)

// RunContext stops a run when its context is done: this model loops 2^62 times, and the deadline
// ends it.
func ExampleSession_RunContext() {
	s, err := onnxx.NewSession(model("spin"), nil, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = s.RunContext(ctx, spinInputs(1<<62, 0), &onnxx.RunOptions{Tag: "forever"})
	fmt.Println(errors.Is(err, context.DeadlineExceeded), errors.Is(err, onnxx.ErrRuntime))

	out, err := s.RunContext(context.Background(), spinInputs(5, 1), nil) // 1 + 5
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := core.ReadOnlyElements[float32](out["V"])
	fmt.Println(v)
	// Output:
	// true true
	// [6]
}

// A model whose input and output types have no shape says so (IOInfo.UnknownRank, apart from a
// scalar's empty Shape), and takes tensors of any shape.
func ExampleIOInfo_unknownRank() {
	s, err := onnxx.NewSession(model("unknown_rank"), nil, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	in := s.Inputs()[0]
	fmt.Println(in.Name, in.UnknownRank, in.Dynamic())
	for _, x := range []*core.Tensor{core.MustFromSlice([]float32{-1, 2}, 2), core.MustFromSlice([]float32{3, -4, 5, -6}, 2, 1, 2)} {
		out, err := s.Run(map[string]*core.Tensor{"X": x})
		if err != nil {
			fmt.Println(err)
			return
		}
		y, _ := core.ReadOnlyElements[float32](out["Y"])
		fmt.Println(out["Y"].Shape(), y)
	}
	// Output:
	// X true true
	// [2] [0 2]
	// [2 1 2] [3 0 5 0]
}

// An output that is one of the model's inputs (outputs: [X]) comes back as a copy of it, flagged,
// never over the caller's memory.
func ExampleSession_Run_echo() {
	s, err := onnxx.NewSession(model("passthrough"), nil, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	x := core.MustFromSlice([]float32{-1, 2, -3, 4, -5, 6}, 2, 3)
	out, err := s.Run(map[string]*core.Tensor{"X": x})
	if err != nil {
		fmt.Println(err)
		return
	}
	e, _ := core.ReadOnlyElements[float32](out["X"])
	fmt.Println(e, out["X"].Flags()&core.FlagIsCopied != 0, core.MayShareMemory(x, out["X"]))
	// Output:
	// [-1 2 -3 4 -5 6] true false
}

// RunOptions.Profile has ORT write the run's trace (Chrome's trace-event JSON, which
// chrome://tracing and Perfetto open) to a file named by the prefix.
func ExampleRunOptions_profile() {
	s, err := onnxx.NewSession(model("spin"), nil, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	dir, err := os.MkdirTemp("", "profile")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	_, err = s.RunContext(context.Background(), spinInputs(5, 1), &onnxx.RunOptions{Profile: filepath.Join(dir, "spin")})
	if err != nil {
		fmt.Println(err)
		return
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "spin*.json"))
	fmt.Println("trace files:", len(traces))
	// Output: trace files: 1
}
