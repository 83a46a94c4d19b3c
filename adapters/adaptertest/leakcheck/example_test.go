package leakcheck_test

import (
	"fmt"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
)

// A leak test takes its baseline once earlier garbage has settled, then checks that foreign
// memory it made is released.
func ExampleSettle() {
	base := leakcheck.Settle()
	t, _ := core.Wrap(core.Desc{Data: nil, Device: core.CPUDevice, DType: core.Float32, Shape: []int64{0}},
		func() { fmt.Println("released") })
	fmt.Println(core.LiveForeign() - base)
	t.Release()
	fmt.Println(leakcheck.Settle() - base)
	// Output:
	// 1
	// released
	// 0
}
