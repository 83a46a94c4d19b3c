package memory_test

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// Clone compacts any view into a new tensor, here a reversed, strided view into C and Fortran order.
func ExampleClone() {
	t := core.MustFromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	v, _ := t.Reverse(1) // [[3 2 1] [6 5 4]], strides [3 -1]
	c, err := memory.Clone(v, memory.COrder)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := memory.Clone(v, memory.FortranOrder)
	if err != nil {
		fmt.Println(err)
		return
	}
	cv, _ := c.Int32s()
	fmt.Println(c.Strides(), cv)
	fmt.Println(f.Strides(), f.IsFortranContiguous(), f.Flags()&core.FlagIsCopied != 0)
	// Output:
	// [3 1] [3 2 1 6 5 4]
	// [1 2] true true
}

// Cast converts the elements into a new C-order tensor.
func ExampleCast() {
	t := core.MustFromSlice([]float64{1.5, -2.25, 3e10}, 3)
	h, err := memory.Cast(t, core.Float16)
	if err != nil {
		fmt.Println(err)
		return
	}
	i, err := memory.Cast(t, core.Int32)
	if err != nil {
		fmt.Println(err)
		return
	}
	hv, _ := h.Float16s()
	iv, _ := i.Int32s()
	fmt.Println(h.DType(), hv[0].Float32(), hv[1].Float32(), hv[2].Float32())
	fmt.Println(i.DType(), iv[:2])
	// Output:
	// float16 1.5 -2.25 +Inf
	// int32 [1 -2]
}

// Copy writes into an existing tensor of any strides: here into the transpose of a C-order buffer.
func ExampleCopy() {
	src := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	buf := make([]float32, 6)
	dst, _ := core.MustFromSlice(buf, 3, 2).Transpose() // a 2×3 view with strides [1 2]
	if err := memory.Copy(dst, src); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(buf)
	// Output:
	// [1 4 2 5 3 6]
}

// At and SetAt read and write one element of any dtype without type parameters.
func ExampleAt() {
	t := core.MustFromSlice([]int16{1, 2, 3, 4, 5, 6}, 2, 3)
	_ = memory.SetAt(t, 7.9, 1, 2) // truncated toward zero, as a conversion to int16 does
	v, _ := memory.At(t, 1, 2)
	fmt.Println(real(v), t)
	// Output:
	// 7 Tensor(int16, [2 3], cpu:0)
}
