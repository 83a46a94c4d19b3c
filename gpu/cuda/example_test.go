package cuda_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/gpu/cuda"
)

// Finding out whether CUDA can be used here. The outcome depends on the machine, so the
// example is compiled, not run.
func ExampleAvailable() {
	if err := cuda.Available(); err != nil {
		fmt.Println("no GPU:", errors.Is(err, cuda.ErrNoDevice), err)
		return
	}
	n, _ := cuda.DeviceCount()
	name, _ := cuda.DeviceName(0)
	fmt.Println(n, "device(s); device 0 is", name)
}

// Driver failures are *cuda.Error values: they name the entry point and the CUresult, and
// match the package's sentinel errors with errors.Is.
func ExampleError() {
	var err error = &cuda.Error{Op: "cuDeviceGet", Code: cuda.ErrorNoDevice, Name: "CUDA_ERROR_NO_DEVICE"}
	fmt.Println(err)
	fmt.Println(errors.Is(err, cuda.ErrNoDevice), errors.Is(err, cuda.ErrCUDA))
	// Output:
	// cuda: cuDeviceGet: CUDA_ERROR_NO_DEVICE (100)
	// true true
}
