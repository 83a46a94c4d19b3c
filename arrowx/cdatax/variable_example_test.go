package cdatax_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/core"
)

// Tensors of different shapes travel as one arrow.variable_shape_tensor array through the C Data
// Interface, and come back as views of the memory the structs carry.
func ExampleExportVariableShapeTensors() {
	a := core.MustFromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := core.MustFromSlice([]int32{7, 8}, 1, 2)
	arr, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{a, b}, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	var carr cdata.CArrowArray
	var cschema cdata.CArrowSchema
	err = cdatax.ExportVariableShapeTensors(arr, &carr, &cschema)
	arr.Release() // the export holds what it needs
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := cdatax.ImportVariableShapeTensors(&carr, &cschema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer back.Release()
	for i := range back.Len() {
		t, err := back.Tensor(i)
		if err != nil {
			fmt.Println(err)
			return
		}
		v, _ := core.ReadOnlyElements[int32](t)
		fmt.Println(t.Shape(), v)
		t.Release()
	}
	// Output:
	// [2 3] [1 2 3 4 5 6]
	// [1 2] [7 8]
}
