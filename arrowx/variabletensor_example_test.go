package arrowx_test

import (
	"fmt"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
)

// Two images of different sizes in one arrow.variable_shape_tensor column, and each back as a
// tensor over the column's memory.
func ExampleNewVariableShapeTensorArray() {
	a := core.MustFromSlice([]uint8{1, 2, 3, 4, 5, 6}, 2, 3)
	b := core.MustFromSlice([]uint8{7, 8, 9, 10}, 2, 2)
	arr, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{a, b}, []string{"h", "w"}, []int64{2, -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer arr.Release()
	fmt.Println(arr.DataType())
	for i := 0; i < arr.Len(); i++ {
		t, err := arr.Tensor(i)
		if err != nil {
			fmt.Println(err)
			return
		}
		vals, _ := core.ReadOnlyElements[uint8](t)
		fmt.Println(t.Shape(), vals)
		t.Release()
	}
	// Output:
	// extension<arrow.variable_shape_tensor[value_type=uint8, ndim=2, dim_names=[h w], uniform_shape=[2 -1]]>
	// [2 3] [1 2 3 4 5 6]
	// [2 2] [7 8 9 10]
}
