package cdatax_test

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/core"
)

// A tensor goes out through the C Data Interface and comes back in, as it would through a C
// library: the structs carry its memory, never a copy.
func Example() {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	var arr cdata.CArrowArray
	var schema cdata.CArrowSchema
	if err := cdatax.ExportArray(x, &arr, &schema, adapters.ZeroCopyOnly()); err != nil {
		fmt.Println(err)
		return
	}
	back, err := cdatax.ImportArray(&arr, &schema) // takes the array; releases it when let go
	if err != nil {
		fmt.Println(err)
		return
	}
	defer back.Release()
	fmt.Println(back, back.Data() == x.Data())
	// Output:
	// Tensor(float32, [2 3], cpu:0, read-only) true
}

// An ArrowArray handed over after it was released is refused without anything in it being read;
// the schema that came with it is released all the same.
func ExampleImportArray_released() {
	x := core.MustFromSlice([]float32{1, 2, 3}, 3)
	defer x.Release()
	var arr cdata.CArrowArray
	var schema cdata.CArrowSchema
	if err := cdatax.ExportArray(x, &arr, &schema); err != nil {
		fmt.Println(err)
		return
	}
	cdata.ReleaseCArrowArray(&arr) // someone let it go already
	_, err := cdatax.ImportArray(&arr, &schema)
	fmt.Println(errors.Is(err, cdatax.ErrReleased))
	fmt.Println(err)
	// Output:
	// true
	// cdatax: ArrowArray has a NULL release callback (released already, or moved)
}

// A batch of four 2×3 matrices goes out as Arrow's canonical arrow.fixed_shape_tensor (the
// shape in the ArrowSchema's metadata, which pyarrow's FixedShapeTensorArray reads) and comes
// back with its shape.
func ExampleExportFixedShapeTensor() {
	x := core.MustFromSlice(make([]float64, 24), 4, 2, 3)
	var arr cdata.CArrowArray
	var schema cdata.CArrowSchema
	if err := cdatax.ExportFixedShapeTensor(x, &arr, &schema, adapters.ZeroCopyOnly()); err != nil {
		fmt.Println(err)
		return
	}
	back, err := cdatax.ImportArray(&arr, &schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer back.Release()
	fmt.Println(back, back.Data() == x.Data())
	// Output:
	// Tensor(float64, [4 2 3], cpu:0, read-only) true
}
