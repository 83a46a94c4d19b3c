package core_test

import (
	"fmt"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

// argDone is the release state a bridge keeps with each imported argument: here, the name of the
// producer's deleter to run.
type argDone struct{ producer string }

func (a *argDone) Release() { fmt.Println("the deleter of", a.producer, "ran") }

// A bridge that imports a producer's DLTensor for every call of a function, and releases it when
// the call returns, makes the tensor and its release state in one allocation.
func ExampleImportExplicitWith() {
	foreign := []float64{1, 2, 3, 4} // stands for an argument's memory, held by its producer
	shape := []int64{2, 2}
	dl := &core.DLTensor{Data: unsafe.Pointer(&foreign[0]), Device: core.CPUDevice, Ndim: 2,
		Dtype: core.Float64, Shape: &shape[0]}
	arg, state, err := core.ImportExplicitWith(dl, 0, argDone{producer: "numpy"})
	if err != nil {
		panic(err)
	}
	fmt.Println("state:", state.producer, "shape:", arg.Shape(), "strides:", arg.Strides())
	h, _ := core.Hold(arg) // what the called function does while it reads the memory
	xs, _ := core.ReadOnlyElements[float64](arg)
	fmt.Println("sum:", xs[0]+xs[1]+xs[2]+xs[3])
	h.Release()
	arg.Release() // the call returns
	// Output:
	// state: numpy shape: [2 2] strides: [2 1]
	// sum: 10
	// the deleter of numpy ran
}
