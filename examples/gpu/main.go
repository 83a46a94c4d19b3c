// Command gpu moves a tensor to a CUDA device and back, with views of device memory on the way,
// and says what it found. It needs no CUDA SDK and builds with CGO_ENABLED=0: package gpu/cuda
// opens the driver at run time. On a machine without a driver or device it says so and exits 0;
// any other failure exits 1.
//
//	go run ./examples/gpu
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu"
	"github.com/dlpack-go/dlpack/gpu/cuda"
)

func main() {
	if err := run(); err != nil {
		if errors.Is(err, gpu.ErrNoDevice) {
			fmt.Println("no GPU here:", err)
			return
		}
		fmt.Fprintln(os.Stderr, "gpu:", err)
		os.Exit(1)
	}
}

func run() error {
	if err := cuda.Available(); err != nil {
		return err
	}
	name, err := cuda.DeviceName(0)
	if err != nil {
		return err
	}
	fmt.Println("device 0:", name)

	host := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	dev, err := gpu.To(host, gpu.Device(0))
	if err != nil {
		return err
	}
	defer dev.Release()
	fmt.Printf("to the GPU: %v at %p (a copy: host and device memory are different memory)\n", dev, dev.Data())

	// The CPU never touches device memory: core's accessors refuse, and so do host adapters
	// under ZeroCopyOnly.
	_, err = dev.Float32s()
	fmt.Println("reading it on the CPU:", errors.Is(err, core.ErrNotHost))
	_, err = gpu.ToHost(dev, adapters.ZeroCopyOnly())
	fmt.Println("ToHost under ZeroCopyOnly refused:", errors.Is(err, adapters.ErrCopyRequired))

	// A view of device memory (no copy) comes back to the host in any strides.
	tr, err := dev.Transpose()
	if err != nil {
		return err
	}
	var copied bool
	back, err := gpu.ToHost(tr, adapters.ReportCopy(&copied))
	if err != nil {
		return err
	}
	got, err := core.ReadOnlyElements[float32](back)
	if err != nil {
		return err
	}
	want := []float32{1, 4, 2, 5, 3, 6}
	fmt.Printf("the transposed view back on the host: %v (copied: %t, equal: %t)\n", got, copied, slices.Equal(got, want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("the round trip gave %v, want %v", got, want)
	}
	return nil
}
