package onnxx_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
)

// Init loads ONNX Runtime once per process; without a library it fails with ErrNoRuntime and
// says how to get one.
func ExampleInit() {
	err := onnxx.Init()
	if errors.Is(err, onnxx.ErrNoRuntime) {
		fmt.Println("run scripts/fetch-ort.sh:", err)
		return
	}
	fmt.Println("loaded:", err == nil, "again:", onnxx.Init() == nil)
	// Output:
	// loaded: true again: true
}

// Run is a one-shot session: load the model, run it on named tensors, free the session.
func ExampleRun() {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	out, err := onnxx.Run(model("dynamic_float32"), map[string]*core.Tensor{"X": x}, []string{"S"})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := core.ReadOnlyElements[float32](out["S"])
	fmt.Println(len(out), out["S"].Shape(), s)
	// Output:
	// 1 [2] [6 15]
}
