package ortgo_test

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
	ort "github.com/yalue/onnxruntime_go"
)

// ToValue makes an ORT input over a tensor's own memory: writes to the tensor are what ORT reads.
func ExampleToValue() {
	if err := ortgo.Init(); err != nil {
		fmt.Println(err)
		return
	}
	data := []float32{1, 2, 3, 4}
	x := core.MustFromSlice(data, 2, 2)
	v, err := ortgo.ToValue(x)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Destroy()
	data[0] = 10
	fmt.Println(v.GetShape(), v.(*ort.Tensor[float32]).GetData())
	// Output: [2 2] [10 2 3 4]
}

// FromValue turns an ORT value into a core tensor over the value's memory; the tensor owns the
// value from then on.
func ExampleFromValue() {
	if err := ortgo.Init(); err != nil {
		fmt.Println(err)
		return
	}
	v, err := ort.NewTensor(ort.NewShape(2, 3), []int64{1, 2, 3, 4, 5, 6})
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err := ortgo.FromValue(v)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Release() // destroys v
	e, _ := core.At[int64](t, 1, 2)
	fmt.Println(t, e)
	// Output: Tensor(int64, [2 3], cpu:0) 6
}
