// Command onnx is the ONNX Runtime tour: a Gonum matrix goes into an ONNX model without a copy,
// and the model's output comes back as a Gorgonia tensor and a .npy file.
//
// It needs the ONNX Runtime library (run scripts/fetch-ort.sh, or set $ONNXRUNTIME_LIB) and,
// to build the small model it runs, Python with ONNX: $PYTHON, else python3 on $PATH if it has
// onnx, else /usr/bin/python3 with Debian's python3-onnx.
//
//	go run ./examples/onnx
package main

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/gorgoniax"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/pyfind"
	"gonum.org/v1/gonum/mat"
)

// buildModel writes Y = Relu(X · W), X of shape [batch, 3] and W [3, 2], both float64 inputs.
const buildModel = `
import sys
from onnx import TensorProto, helper, save
g = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Relu", ["XW"], ["Y"])], "tour",
    [helper.make_tensor_value_info("X", TensorProto.DOUBLE, ["batch", 3]),
     helper.make_tensor_value_info("W", TensorProto.DOUBLE, [3, 2])],
    [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, ["batch", 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
save(m, sys.argv[1])
`

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	// 1. Load ONNX Runtime ($ONNXRUNTIME_LIB, or the copy fetch-ort.sh cached).
	if err := onnxx.Init(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "onnx-tour-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	model := filepath.Join(dir, "tour.onnx")
	python := pyfind.Interpreter("onnx")
	if out, err := exec.Command(python, "-c", buildModel, model).CombinedOutput(); err != nil {
		return fmt.Errorf("building the model needs Python with ONNX (%s: apt-get install python3-onnx, or set $PYTHON to an interpreter with onnx): %v\n%s", python, err, out)
	}

	// 2. Gonum matrices become core tensors over their own memory, and ORT reads that memory.
	x := mat.NewDense(2, 3, []float64{1, 2, 3, -4, -5, -6})
	w := mat.NewDense(3, 2, []float64{1, 0, 0, 1, 1, 1})
	xt, err := gonumx.FromDense(x)
	if err != nil {
		return err
	}
	wt, err := gonumx.FromDense(w)
	if err != nil {
		return err
	}
	fmt.Printf("input X %v shares the Gonum matrix's memory: %t\n", xt.Shape(), &x.RawMatrix().Data[0] == (*float64)(xt.Data()))

	s, err := onnxx.NewSession(model, nil, nil, nil)
	if err != nil {
		return err
	}
	defer s.Destroy()
	out, err := s.Run(map[string]*core.Tensor{"X": xt, "W": wt})
	if err != nil {
		return err
	}
	y := out["Y"]
	fmt.Println("output Y:", y)

	// 3. The output as a Gorgonia tensor, over the same memory.
	d, err := gorgoniax.ToDense(y)
	if err != nil {
		return err
	}
	fmt.Printf("Gorgonia:\n%v\n", d)

	// 4. And as a .npy file that NumPy reads.
	npy := filepath.Join(dir, "y.npy")
	if err := numpyx.WriteFile(npy, y); err != nil {
		return err
	}
	back, err := numpyx.ReadFile(npy)
	if err != nil {
		return err
	}
	vals, err := core.ReadOnlyElements[float64](back)
	if err != nil {
		return err
	}
	fmt.Println("read back from y.npy:", back.Shape(), vals)
	return nil
}
