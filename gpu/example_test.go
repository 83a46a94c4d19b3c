package gpu_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu"
)

// Moving a tensor to the GPU and back. It needs a CUDA device, so it is compiled, not run.
func ExampleTo() {
	host := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	dev, err := gpu.To(host, gpu.Device(0))
	if err != nil {
		fmt.Println(err) // errors.Is(err, gpu.ErrNoDevice) without a GPU
		return
	}
	defer dev.Release()
	t, err := dev.Transpose() // a view of device memory
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := gpu.To(t, core.CPUDevice)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Shape(), back.Device())
}

// The stream argument of the Python protocol.
func ExampleStreamFromProtocol() {
	for _, v := range []int64{1, 2, -1, 0} {
		s, err := gpu.StreamFromProtocol(v)
		if err != nil {
			fmt.Println(v, "->", errors.Is(err, gpu.ErrStream))
			continue
		}
		fmt.Println(v, "->", s, s.Protocol())
	}
	// Output:
	// 1 -> legacy 1
	// 2 -> per-thread 2
	// -1 -> no-sync -1
	// 0 -> true
}

// What a host adapter does with a tensor that may be on a device: under ZeroCopyOnly a device
// tensor is refused with a clear error; by default it would be moved to Go memory.
func ExampleToHost() {
	host := core.MustFromSlice([]float64{1, 2}, 2)
	t, err := gpu.ToHost(host, adapters.ZeroCopyOnly())
	fmt.Println(t == host, err)
	// Output:
	// true <nil>
}
