package core_test

import (
	"fmt"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
)

// FromSlice shares the slice's memory: no copy, writes are seen both ways.
func ExampleFromSlice() {
	data := []float32{1, 2, 3, 4, 5, 6}
	x, err := core.FromSlice(data, 2, 3)
	if err != nil {
		panic(err)
	}
	data[5] = 60
	v, _ := core.At[float32](x, 1, 2)
	fmt.Println(x, x.Strides(), v)
	// Output: Tensor(float32, [2 3], cpu:0) [3 1] 60
}

// Transpose and Slice are views: new strides over the same memory.
func ExampleTensor_Slice() {
	x := core.MustFromSlice([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 3, 4)
	t, _ := x.Transpose()
	fmt.Println(t.Shape(), t.Strides(), t.IsContiguous())

	// x[:, ::-2]: every other column, from the last
	s, _ := x.Slice(1, core.End, core.Begin, -2)
	for i := range s.Dim(0) {
		a, _ := core.At[int32](s, i, 0)
		b, _ := core.At[int32](s, i, 1)
		fmt.Println(a, b)
	}
	fmt.Println(s.Strides(), s.Data() == unsafe.Add(x.Data(), 3*4))
	// Output:
	// [4 3] [1 4] false
	// 3 1
	// 7 5
	// 11 9
	// [4 -2] true
}

// Reshape gives a view when the strides allow it, and says so when a copy would be needed.
func ExampleTensor_Reshape() {
	x := core.MustFromSlice([]float64{0, 1, 2, 3, 4, 5}, 2, 3)
	r, _ := x.Reshape(3, -1)
	fmt.Println(r.Shape(), r.Strides())

	t, _ := x.Transpose()
	_, err := t.Reshape(6)
	fmt.Println(err != nil)
	// Output:
	// [3 2] [2 1]
	// true
}

// Wrap puts foreign memory under a Tensor; its release runs once, when the last holder (here a
// view that outlives the tensor) lets go.
func ExampleWrap() {
	foreign := make([]float64, 4) // stands for memory from C, a device, a memory map
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&foreign[0]), Device: core.CPUDevice,
		DType: core.Float64, Shape: []int64{2, 2}}, func() { fmt.Println("released") })
	if err != nil {
		panic(err)
	}
	row, _ := x.Index(0, 1)
	x.Release()
	fmt.Println("tensor released; view still usable:", !row.Released())
	row.Release()
	// Output:
	// tensor released; view still usable: true
	// released
}

// A bridge that imports a producer's tensor for one call and always releases it afterwards uses
// WrapExplicit: the same ownership as Wrap, without the collector's cleanup on the tensor.
func ExampleWrapExplicit() {
	foreign := []int32{1, 2, 3} // stands for an argument's memory, held by its producer
	call := func(arg *core.Tensor) int32 {
		xs, _ := core.ReadOnlyElements[int32](arg)
		return xs[0] + xs[1] + xs[2]
	}
	arg, err := core.WrapExplicit(core.Desc{Data: unsafe.Pointer(&foreign[0]), Device: core.CPUDevice,
		DType: core.Int32, Shape: []int64{3}}, func() { fmt.Println("the producer's deleter ran") })
	if err != nil {
		panic(err)
	}
	h, _ := core.Hold(arg) // held for the whole call
	fmt.Println("sum:", call(arg))
	h.Release()
	arg.Release() // the bridge's promise: every path releases
	// Output:
	// sum: 6
	// the producer's deleter ran
}

// Indices walks a shape in C order, the way Offset and At address elements.
func ExampleIndices() {
	t := core.MustFromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	tt, _ := t.Transpose()
	for idx := range core.Indices(tt.Shape()) {
		v, _ := core.At[int32](tt, idx...)
		fmt.Print(idx, "=", v, " ")
	}
	fmt.Println()
	// Output:
	// [0 0]=1 [0 1]=4 [1 0]=2 [1 1]=5 [2 0]=3 [2 1]=6
}
