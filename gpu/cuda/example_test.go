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
