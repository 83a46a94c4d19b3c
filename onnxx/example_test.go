package onnxx_test

import (
	"fmt"

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
	y, _ := core.ReadOnlyData[float32](out["Y"])
	sum, _ := core.ReadOnlyData[float32](out["S"])
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
		sum, _ := core.ReadOnlyData[float32](outs[1])
		fmt.Println(sum)
	}
	// Output:
	// [5 15]
	// [15 15]
}
