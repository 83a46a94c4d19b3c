package gomlxx_test

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/gomlxx"
	"github.com/dlpack-go/dlpack/gonumx"
)

// Gonum writes a matrix straight into GoMLX's memory, GoMLX computes on it with its pure-Go
// backend, and the result comes back to Gonum: no element is copied on the way out, and none
// on the way in either, since GoMLX allocated the memory Gonum wrote.
func Example() {
	// GoMLX allocates; Gonum fills the memory through a view of it
	x := tensors.FromShape(shapes.Make(dtypes.Float64, 2, 3))
	view, err := gomlxx.FromTensor(x, adapters.ZeroCopyOnly())
	if err != nil {
		panic(err)
	}
	dense, err := gonumx.ToDense(view, adapters.ZeroCopyOnly())
	if err != nil {
		panic(err)
	}
	dense.Scale(2, mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6}))

	// GoMLX sums the rows on the pure-Go backend
	sum, err := graph.NewExec(gobackend.GetBackend(), func(x *graph.Node) *graph.Node { return graph.ReduceSum(x, 1) })
	if err != nil {
		panic(err)
	}
	y, err := sum.Exec1(x)
	if err != nil {
		panic(err)
	}

	// Take moves the result's buffer out of GoMLX, and Gonum reads it in place
	var copied bool
	result, err := gomlxx.Take(y, adapters.ReportCopy(&copied))
	if err != nil {
		panic(err)
	}
	v, err := gonumx.ToVecDense(result, adapters.ZeroCopyOnly())
	if err != nil {
		panic(err)
	}
	fmt.Println(mat.Formatted(v.T()), "copied:", copied, "GoMLX tensor valid:", y.Ok())
	// Output:
	// [12  30] copied: false GoMLX tensor valid: false
}

// A tensor from elsewhere enters GoMLX by one copy; ReportCopy says so, and ZeroCopyOnly
// refuses it.
func ExampleToTensor() {
	w, err := gonumx.FromDense(mat.NewDense(2, 2, []float64{1, 2, 3, 4}))
	if err != nil {
		panic(err)
	}
	_, err = gomlxx.ToTensor(w, adapters.ZeroCopyOnly())
	fmt.Println(err != nil)
	var copied bool
	g, err := gomlxx.ToTensor(w, adapters.ReportCopy(&copied))
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Shape(), copied)
	// Output:
	// true
	// (Float64)[2, 2] true
}
