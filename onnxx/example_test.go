package onnxx_test

import (
	"errors"
	"os"

	"fmt"
	"github.com/dlpack-go/dlpack/adapters"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
)

// A session runs a model on named core tensors. This model computes Y = 2·X + 1 and
// S = the sum of each row of X, with a dynamic batch dimension.
func ExampleSession_Run() {
	if err := onnxx.Init(); err != nil {
		fmt.Println(err)
		return
	}
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	out, err := s.Run(map[string]*core.Tensor{"X": x})
	if err != nil {
		fmt.Println(err)
		return
	}
	y, _ := core.ReadOnlyElements[float32](out["Y"])
	sum, _ := core.ReadOnlyElements[float32](out["S"])
	fmt.Println(out["Y"].Shape(), y)
	fmt.Println(out["S"].Shape(), sum)
	// Output:
	// [2 3] [3 5 7 9 11 13]
	// [2] [6 15]
}

// RunInto is the path for repeated inference: the outputs go into the caller's tensors, and a run
// on the same tensors reuses the ORT values made for the previous one.
func ExampleSession_RunInto() {
	if err := onnxx.Init(); err != nil {
		fmt.Println(err)
		return
	}
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	data := []float32{1, 2, 3, 4, 5, 6}
	ins := []*core.Tensor{core.MustFromSlice(data, 2, 3)}
	outs := []*core.Tensor{core.MustNew(core.Float32, 2, 3), core.MustNew(core.Float32, 2)}
	for step := range 2 {
		data[0] = float32(10 * step) // ORT reads the input's memory as it is now
		if err := s.RunInto(ins, outs); err != nil {
			fmt.Println(err)
			return
		}
		sum, _ := core.ReadOnlyElements[float32](outs[1])
		fmt.Println(sum)
	}
	// Output:
	// [5 15]
	// [15 15]
}

// A model can be loaded from bytes, such as a file embedded with go:embed; Inputs describes it.
func ExampleNewSessionFromBytes() {
	b, err := os.ReadFile(model("dynamic_float32")) // or a //go:embed []byte
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := onnxx.NewSessionFromBytes(b, nil, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	in := s.Inputs()[0]
	fmt.Println(in.Name, in.DType, in.Shape, in.Symbols[0])
	// Output: X float32 [-1 3] batch
}

// An input of another element type is refused unless the run is told to cast it.
func ExampleCastInputs() {
	s, err := onnxx.NewSession(model("dynamic_float32"), nil, []string{"S"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	x := core.MustFromSlice([]float64{1, 2, 3}, 1, 3) // a float64 Gonum matrix, say
	_, err = s.Run(map[string]*core.Tensor{"X": x})
	fmt.Println(errors.Is(err, onnxx.ErrDType))
	var copied bool
	out, err := s.Run(map[string]*core.Tensor{"X": x}, onnxx.CastInputs(), adapters.ReportCopy(&copied))
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, _ := core.ReadOnlyElements[float32](out["S"])
	fmt.Println(sum, copied)
	// Output:
	// true
	// [6] true
}
