package adapters_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
)

// How an adapter honours the caller's copy options: it says whether it could share memory, and
// Decide answers copy or not, or refuses under ZeroCopyOnly.
func ExampleOptions_Decide() {
	convert := func(shareable bool, opts ...adapters.Option) {
		var copied bool
		o := adapters.Apply(append(opts, adapters.ReportCopy(&copied))...)
		copy, err := o.Decide(shareable, "negative strides")
		fmt.Printf("%-14s shareable=%-5t copy=%-5t copied=%-5t err=%v\n", o.Policy, shareable, copy, copied, err)
	}
	convert(true)
	convert(false)
	convert(true, adapters.AlwaysCopy())
	convert(false, adapters.ZeroCopyOnly())
	// Output:
	// copy-if-needed shareable=true  copy=false copied=false err=<nil>
	// copy-if-needed shareable=false copy=true  copied=true  err=<nil>
	// copy-always    shareable=true  copy=true  copied=true  err=<nil>
	// copy-never     shareable=false copy=false copied=false err=negative strides: the conversion needs a copy, and adapters.ZeroCopyOnly() forbids one
}

// An adapter decides with Choose, makes the conversion, and reports the decision only once the
// conversion has succeeded: one that fails leaves the caller's flag as it was.
func ExampleOptions_Choose() {
	toCOrder := func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		o := adapters.Apply(opts...)
		copy, err := o.Choose(t.IsContiguous(), "strides are not C order")
		if err != nil {
			return nil, err
		}
		out := t
		if copy {
			if out, err = adapters.Contiguous(t); err != nil {
				return nil, err
			}
		}
		o.Report(copy)
		return out, nil
	}
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	for _, release := range []bool{false, true} {
		v, _ := x.Transpose() // Fortran order: copied
		if release {
			v.Release() // the copy will fail
		}
		copied := false
		_, err := toCOrder(v, adapters.ReportCopy(&copied))
		fmt.Printf("copied=%t err=%v\n", copied, err)
	}
	// Output:
	// copied=true err=<nil>
	// copied=false err=adapters: the copy's source was released
}

// Under ZeroCopyOnly an adapter fails with an error matching ErrCopyRequired.
func ExampleZeroCopyOnly() {
	_, err := adapters.Apply(adapters.ZeroCopyOnly()).Decide(false, "Fortran order")
	fmt.Println(errors.Is(err, adapters.ErrCopyRequired))
	// Output:
	// true
}

// Clone compacts any view into a new tensor, here a reversed, strided view into C and Fortran order.
func ExampleClone() {
	t := core.MustFromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	v, _ := t.Reverse(1) // [[3 2 1] [6 5 4]], strides [3 -1]
	c, err := adapters.Clone(v, adapters.COrder)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := adapters.Clone(v, adapters.FortranOrder)
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
	h, err := adapters.Cast(t, core.Float16)
	if err != nil {
		fmt.Println(err)
		return
	}
	i, err := adapters.Cast(t, core.Int32)
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
	if err := adapters.Copy(dst, src); err != nil {
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
	_ = adapters.SetAt(t, 7.9, 1, 2) // truncated toward zero, as a conversion to int16 does
	v, _ := adapters.At(t, 1, 2)
	fmt.Println(real(v), t)
	// Output:
	// 7 Tensor(int16, [2 3], cpu:0)
}
