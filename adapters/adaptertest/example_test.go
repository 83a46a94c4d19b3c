package adaptertest_test

import (
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// roundTrip stands for an adapter's two conversions (tensor → ecosystem value → tensor). This one
// shares C-contiguous tensors and copies the rest, honouring the copy policy through Choose, and
// reports what it did once it has succeeded.
func roundTrip(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	copy, err := o.Choose(t.IsContiguous(), "strides are not C order")
	if err != nil {
		return nil, err
	}
	var back *core.Tensor
	if copy {
		back, err = memory.Contiguous(t)
	} else {
		back, err = t.View()
	}
	if err != nil {
		return nil, err
	}
	o.Report(copy)
	return back, nil
}

// An adapter package describes itself with an Adapter and calls Run from one of its tests:
//
//	func TestConformance(t *testing.T) { adaptertest.Run(t, adapter) }
//
// Cases lists the inputs the kit will feed it, which the adapter's own tests may reuse.
func Example() {
	adapter := adaptertest.Adapter{
		Name:      "example",
		DTypes:    []core.DLDataType{core.Float64},
		MinNdim:   2,
		MaxNdim:   2,
		RoundTrip: roundTrip,
		Shareable: func(t *core.Tensor) (bool, string) { return t.IsContiguous(), "not C-contiguous" },
	}
	for _, c := range adaptertest.Cases(adapter.DTypes, adapter.MinNdim, adapter.MaxNdim) {
		back, err := adapter.RoundTrip(c.Tensor)
		fmt.Printf("%-28s zero-copy=%-5v err=%v\n", c.Name, shares(adapter, c.Tensor), err)
		_ = back
	}
	// Output:
	// float64/2d[3 0]/c            zero-copy=true  err=<nil>
	// float64/2d[3 0]/readonly     zero-copy=true  err=<nil>
	// float64/2d[3 0]/foreign      zero-copy=true  err=<nil>
	// float64/2d[3 0]/fortran      zero-copy=true  err=<nil>
	// float64/2d[3 0]/transposed   zero-copy=true  err=<nil>
	// float64/2d[3 4]/c            zero-copy=true  err=<nil>
	// float64/2d[3 4]/offset       zero-copy=true  err=<nil>
	// float64/2d[3 4]/step2        zero-copy=false err=<nil>
	// float64/2d[3 4]/negative     zero-copy=false err=<nil>
	// float64/2d[3 4]/broadcast    zero-copy=false err=<nil>
	// float64/2d[3 4]/readonly     zero-copy=true  err=<nil>
	// float64/2d[3 4]/foreign      zero-copy=true  err=<nil>
	// float64/2d[3 4]/fortran      zero-copy=false err=<nil>
	// float64/2d[3 4]/transposed   zero-copy=false err=<nil>
}

// shares is the verdict of the adapter's zero-copy predicate.
func shares(a adaptertest.Adapter, t *core.Tensor) bool {
	ok, _ := a.Shareable(t)
	return ok
}
