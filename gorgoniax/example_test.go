package gorgoniax_test

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gorgoniax"
)

// FromDense exports a Gorgonia tensor as it lies in memory: a view keeps its parent's strides.
func ExampleFromDense() {
	d := tensor.New(tensor.WithShape(3, 4), tensor.WithBacking([]float32{
		0, 1, 2, 3,
		4, 5, 6, 7,
		8, 9, 10, 11,
	}))
	col, _ := d.Slice(nil, tensor.S(2)) // column 2, a Gorgonia view
	t, err := gorgoniax.FromDense(col.(*tensor.Dense))
	if err != nil {
		panic(err)
	}
	fmt.Println(t.DType(), t.Shape(), t.Strides())

	_ = core.Set(t, float32(60), 1) // write through the tensor ...
	v, _ := d.At(1, 2)              // ... and Gorgonia sees it
	fmt.Println(v)
	// Output:
	// float32 [3] [4]
	// 60
}

// ToDense shares memory whenever Gorgonia can describe the strides, and copies otherwise.
func ExampleToDense() {
	t := core.MustFromSlice([]int64{1, 2, 3, 4, 5, 6}, 2, 3)
	tr, _ := t.Transpose() // column-major [3 2]

	var copied bool
	d, err := gorgoniax.ToDense(tr, adapters.ReportCopy(&copied))
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Dtype(), d.Shape(), d.Strides(), d.DataOrder().IsColMajor(), "copied:", copied)

	rev, _ := t.Reverse(1) // negative strides: Gorgonia has none
	_, err = gorgoniax.ToDense(rev, adapters.ZeroCopyOnly())
	fmt.Println(err)
	// Output:
	// int64 (3, 2) [1 3] true copied: false
	// gorgoniax: strides [3 -1] for shape [2 3]: Gorgonia has no negative or zero strides: the conversion needs a copy, and adapters.ZeroCopyOnly() forbids one
}
