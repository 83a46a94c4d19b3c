package arrowx_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
)

// An Arrow array becomes a tensor over the same buffer: a write through one shows in the other.
func ExampleFromArray() {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	b := array.NewFloat64Builder(mem)
	b.AppendValues([]float64{1, 2, 3}, nil)
	arr := b.NewFloat64Array()
	b.Release()

	t, err := arrowx.FromArray(arr, adapters.ZeroCopyOnly())
	if err != nil {
		fmt.Println(err)
		return
	}
	vals, _ := t.Float64s()
	vals[0] = 10
	fmt.Println(t, arr.Value(0))

	arr.Release() // the tensor still holds the buffer
	fmt.Println(vals, mem.CurrentAlloc() > 0)
	t.Release() // now Arrow's allocator gets it back
	fmt.Println(mem.CurrentAlloc())
	// Output:
	// Tensor(float64, [3], cpu:0) 10
	// [10 2 3] true
	// 0
}

// A 2-D tensor becomes a FixedSizeList array over its own memory.
func ExampleToArray() {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	arr, err := arrowx.ToArray(x, adapters.ZeroCopyOnly())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer arr.Release()
	fmt.Println(arr.DataType(), arr.Len())
	fmt.Println(arr)
	// Output:
	// fixed_size_list<item: float32, nullable>[3] 2
	// [[1 2 3] [4 5 6]]
}

// Nulls are refused unless a fill value is given; then the result is a flagged copy.
func ExampleFillNulls() {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues([]int32{1, 0, 3}, []bool{true, false, true})
	arr := b.NewArray()
	b.Release()
	defer arr.Release()

	_, err := arrowx.FromArray(arr)
	fmt.Println(err)
	var copied bool
	t, _ := arrowx.FromArray(arr, arrowx.FillNulls(-1), adapters.ReportCopy(&copied))
	vals, _ := t.Int32s()
	fmt.Println(vals, copied, t.Flags()&core.FlagIsCopied != 0)
	// Output:
	// arrowx: int32 of shape [3] has nulls (give arrowx.FillNulls to copy with a fill value)
	// [1 -1 3] true true
}

// A batch of tensors travels as Arrow's canonical arrow.fixed_shape_tensor, which pyarrow and
// other Arrow readers understand, without a copy.
func ExampleToFixedShapeTensor() {
	batch := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2, 2, 3) // two 2×3 tensors
	arr, _ := arrowx.ToFixedShapeTensor(batch)
	defer arr.Release()
	fmt.Println(arr.DataType().(*arrowx.FixedShapeTensorType).Serialize(), arr.Len())

	back, _ := arrowx.FromArray(arr)
	fmt.Println(back.Shape(), back.Data() == batch.Data())
	// Output:
	// {"shape":[2,3]} 2
	// [2 2 3] true
}
