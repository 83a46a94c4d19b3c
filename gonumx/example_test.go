package gonumx_test

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
)

// FromDense shares a Gonum matrix's memory, a sliced one included (its stride is kept).
func ExampleFromDense() {
	m := mat.NewDense(3, 4, []float64{
		1, 2, 3, 4,
		5, 6, 7, 8,
		9, 10, 11, 12,
	})
	sub := m.Slice(1, 3, 1, 3).(*mat.Dense) // rows 1-2, columns 1-2
	t, err := gonumx.FromDense(sub)
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Shape(), t.Strides())

	_ = core.Set(t, 60.0, 0, 0) // write through the tensor ...
	fmt.Println(m.At(1, 1))     // ... and Gonum sees it
	// Output:
	// [2 2] [4 1]
	// 60
}

// ToDense shares a tensor's memory when its layout fits, and says when it had to copy.
func ExampleToDense() {
	t := core.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	var copied bool
	m, err := gonumx.ToDense(t, adapters.ReportCopy(&copied))
	if err != nil {
		panic(err)
	}
	m.Set(0, 0, -1)
	v, _ := core.At[float64](t, 0, 0)
	fmt.Println("copied:", copied, "tensor sees:", v)

	// A column-major tensor does not fit a *mat.Dense: ZeroCopyOnly refuses, ToMatrix shares it.
	f, _ := t.Transpose()
	_, err = gonumx.ToDense(f, adapters.ZeroCopyOnly())
	fmt.Println(err != nil)
	mt, _ := gonumx.ToMatrix(f, adapters.ZeroCopyOnly())
	fmt.Printf("%T %v\n", mt, mat.Formatted(mt, mat.Squeeze()))
	// Output:
	// copied: false tensor sees: -1
	// true
	// mat.Transpose ⎡-1  4⎤
	// ⎢ 2  5⎥
	// ⎣ 3  6⎦
}

// A conversion never guesses: a complex tensor does not become a real matrix unless asked.
func ExampleToDense_cast() {
	z := core.MustFromSlice([]complex128{1 + 2i, 3}, 1, 2)
	if _, err := gonumx.ToDense(z); errors.Is(err, adapters.ErrCast) {
		fmt.Println(err)
	}
	m, _ := gonumx.ToDense(z, adapters.AllowCast()) // the real parts
	fmt.Println(m.RawMatrix().Data)
	// Output:
	// gonumx: tensor is complex128, *mat.Dense holds float64: casting would drop the imaginary part (pass adapters.AllowCast() to cast)
	// [1 3]
}
