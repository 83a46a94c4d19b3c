// Command gonum-gorgonia runs Gonum's linear algebra over Gorgonia tensors' memory, through
// DLPack-style core tensors, without copying a single element, and proves it: it prints the
// addresses both libraries see and shows that a write through one library is read by the other.
//
//	go run ./examples/gonum-gorgonia
package main

import (
	"fmt"
	"log"
	"unsafe"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/gorgoniax"
)

// gonumView returns the Gonum matrix over a Gorgonia tensor's memory; it fails rather than copy.
func gonumView(d *tensor.Dense) mat.Matrix {
	t, err := gorgoniax.FromDense(d)
	if err != nil {
		log.Fatal(err)
	}
	m, err := gonumx.ToMatrix(t, adapters.ZeroCopyOnly())
	if err != nil {
		log.Fatal(err)
	}
	return m
}

// gonumVec returns a Gonum vector over a 1-D Gorgonia tensor's memory, never a copy.
func gonumVec(d *tensor.Dense) *mat.VecDense {
	t, err := gorgoniax.FromDense(d)
	if err != nil {
		log.Fatal(err)
	}
	v, err := gonumx.ToVecDense(t, adapters.ZeroCopyOnly())
	if err != nil {
		log.Fatal(err)
	}
	return v
}

func first(d *tensor.Dense) unsafe.Pointer { return unsafe.Pointer(&d.Header.Raw[0]) }

func main() {
	// 1. Solve A x = b in Gonum, A, b and x living in Gorgonia tensors.
	a := tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{
		4, 1, 0,
		1, 3, 1,
		0, 1, 2,
	}))
	b := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))
	x := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(3))

	ga, gb, gx := gonumView(a), gonumVec(b), gonumVec(x)
	fmt.Printf("A: Gorgonia data at %p, Gonum data at %p\n", first(a), &ga.(*mat.Dense).RawMatrix().Data[0])
	fmt.Printf("x: Gorgonia data at %p, Gonum data at %p\n", first(x), &gx.RawVector().Data[0])
	if err := gx.SolveVec(ga, gb); err != nil { // Gonum writes the solution into x's memory
		log.Fatal(err)
	}
	fmt.Printf("Gonum solved A x = b; Gorgonia's x now holds %.4f\n", x.Data())

	// 2. The singular values of a column-major Gorgonia matrix, written into a Gorgonia vector.
	f := tensor.New(tensor.WithShape(2, 3), tensor.AsFortran([]float64{3, 0, 0, 0, 2, 0}))
	gf := gonumView(f) // a mat.Transpose over the same memory: no copy of the column-major data
	var svd mat.SVD
	if !svd.Factorize(gf, mat.SVDNone) {
		log.Fatal("SVD failed")
	}
	sv := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(2))
	svd.Values(gonumVec(sv).RawVector().Data) // Gonum fills Gorgonia's memory
	fmt.Printf("column-major f seen by Gonum as %T; singular values in Gorgonia: %.4f\n", gf, sv.Data())

	// 3. Proof by mutation, both directions.
	if err := a.SetAt(40.0, 0, 0); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Gorgonia wrote A[0,0] = 40; Gonum reads %v\n", ga.At(0, 0))
	ga.(*mat.Dense).Set(2, 2, -1)
	v, _ := a.At(2, 2)
	fmt.Printf("Gonum wrote A[2,2] = -1; Gorgonia reads %v\n", v)

	// 4. Where a copy is unavoidable, the caller is told.
	t, _ := gorgoniax.FromDense(a)
	rev, _ := t.Reverse(0) // negative strides: no Gonum layout fits
	var copied bool
	if _, err := gonumx.ToDense(rev, adapters.ReportCopy(&copied)); err != nil {
		log.Fatal(err)
	}
	_, err := gonumx.ToDense(rev, adapters.ZeroCopyOnly())
	fmt.Printf("reversed rows: copied = %v; with ZeroCopyOnly: %v\n", copied, err)
}
