package tinyonnx_test

import (
	"fmt"

	"github.com/dlpack-go/dlpack/onnxx/tinyonnx"
)

// A dense layer Y = Relu(X·W + B) as the bytes of an .onnx file.
func ExampleDense() {
	m, err := tinyonnx.Dense([][]float64{{1, 0}, {0, 1}, {1, 1}}, []float64{0.5, -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := m.Encode()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range m.Nodes {
		fmt.Println(n.Op, n.Inputs, "->", n.Outputs)
	}
	fmt.Println(len(b), "bytes")
	// Output:
	// MatMul [X W] -> [XW]
	// Add [XW B] -> [Z]
	// Relu [Z] -> [Y]
	// 253 bytes
}
