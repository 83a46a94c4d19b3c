//go:build cgo

package cdlpack_test

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
)

// Export a Go tensor as a DLManagedTensorVersioned (what C code receives), then import it back,
// as a C library that hands the tensor back would: the memory is the same, nothing was copied.
func Example() {
	data := []float32{1, 2, 3, 4, 5, 6}
	x := core.MustFromSlice(data, 2, 3)

	m, err := cdlpack.ExportVersioned(x)
	if err != nil {
		panic(err)
	}
	x.Release() // the export holds the memory until its deleter runs
	fmt.Println("version:", m.Version.Major, m.Version.Minor, "ndim:", m.DLTensor.Ndim, "live exports:", cdlpack.LiveExports())

	y, err := cdlpack.ImportVersioned(m) // y now owns m: its Release runs m's deleter
	if err != nil {
		panic(err)
	}
	fmt.Println(y, "same memory:", (*float32)(y.Data()) == &data[0])
	y.Release()
	fmt.Println("live exports:", cdlpack.LiveExports())
	// Output:
	// version: 1 3 ndim: 2 live exports: 1
	// Tensor(float32, [2 3], cpu:0) same memory: true
	// live exports: 0
}
