package gpu_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu"
)

// Allocating device memory and filling it from a strided host view with Copy. It needs a CUDA
// device, so it is compiled, not run; without one the error matches gpu.ErrNoDevice.
func ExampleAlloc() {
	d, err := gpu.Alloc(core.Float64, 0, 3, 2)
	if errors.Is(err, gpu.ErrNoDevice) {
		fmt.Println("no GPU here")
		return
	} else if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Release()
	host := core.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	tr, _ := host.Transpose() // 3×2, Fortran order
	if err := gpu.Copy(d, tr); err != nil {
		fmt.Println(err)
		return
	}
	back := core.MustFromSlice(make([]float64, 6), 3, 2)
	if err := gpu.Copy(back, d); err != nil {
		fmt.Println(err)
		return
	}
	v, _ := back.Float64s()
	fmt.Println(d.Device(), v) // cuda:0 [1 4 2 5 3 6]
}
