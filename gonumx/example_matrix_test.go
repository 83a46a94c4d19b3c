package gonumx_test

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
)

// A Fortran-order tensor (what NumPy's order="F" or a transposed view gives) has no *mat.Dense
// layout, but ToMatrix shares it as a mat.Transpose over the same memory.
func ExampleToMatrix() {
	data := []float64{1, 4, 2, 5, 3, 6} // [[1 2 3] [4 5 6]] in column-major order
	t, _ := core.MustFromSlice(data, 3, 2).Transpose()
	m, err := gonumx.ToMatrix(t, adapters.ZeroCopyOnly())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%T\n%v\n", m, mat.Formatted(m))
	data[5] = 60 // seen through the matrix
	fmt.Println(m.At(1, 2))
	// Output:
	// mat.Transpose
	// ⎡1  2  3⎤
	// ⎣4  5  6⎦
	// 60
}

// FromMatrix shares the storage of dense matrices and their transposes, and copies (or, under
// ZeroCopyOnly, refuses) matrices that have no dense storage.
func ExampleFromMatrix() {
	d := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	var copied bool
	t, err := gonumx.FromMatrix(d.T(), adapters.ReportCopy(&copied))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Shape(), t.Strides(), "copied:", copied)

	sym := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	_, err = gonumx.FromMatrix(sym, adapters.ZeroCopyOnly())
	fmt.Println(errors.Is(err, adapters.ErrCopyRequired))
	// Output:
	// [2 2] [1 2] copied: false
	// true
}
