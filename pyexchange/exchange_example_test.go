//go:build cgo

package pyexchange_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// The exchange table dlpackgo.Tensor publishes, and its allocator called as a consumer calls it:
// a tensor the consumer fills, which Go (or any DLPack consumer) then takes over.
func ExampleExchangeAllocate() {
	api := pyexchange.ExchangeAPI()
	fmt.Println("version", api.Header.Version.Major, api.Header.Version.Minor)

	f32 := core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 1}
	m, err := pyexchange.ExchangeAllocate(f32, core.DLDevice{DeviceType: core.CPU}, []int64{2, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err := cdlpack.ImportVersioned(m) // Go owns it now; its deleter runs on the last Release
	if err != nil {
		fmt.Println(err)
		return
	}
	vals, _ := t.Float32s()
	vals[4] = 1.5
	fmt.Println(t.Shape(), t.Strides(), vals)
	t.Release()

	_, err = pyexchange.ExchangeAllocate(f32, core.DLDevice{DeviceType: core.CUDA}, []int64{2})
	fmt.Println(errors.Is(err, pyexchange.ErrAllocate), err)
	// Output:
	// version 1 3
	// [2 3] [3 1] [0 0 0 0 1.5 0]
	// true pyexchange: BufferError: dlpackgo: allocator: device type 2 is not supported (CPU only)
}
