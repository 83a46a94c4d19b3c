package adapters_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// How an adapter honours the caller's copy options: it says whether it could share memory, and
// Decide answers copy or not, or refuses under ZeroCopyOnly.
func ExampleOptions_Decide() {
	convert := func(shareable bool, opts ...adapters.Option) {
		var copied bool
		o := adapters.Apply(append(opts, adapters.ReportCopy(&copied))...)
		copy, err := o.Decide(shareable, "negative strides")
		fmt.Printf("%-14s shareable=%-5t copy=%-5t copied=%-5t err=%v\n", o.Policy, shareable, copy, copied, err)
	}
	convert(true)
	convert(false)
	convert(true, adapters.AlwaysCopy())
	convert(false, adapters.ZeroCopyOnly())
	// Output:
	// copy-if-needed shareable=true  copy=false copied=false err=<nil>
	// copy-if-needed shareable=false copy=true  copied=true  err=<nil>
	// copy-always    shareable=true  copy=true  copied=true  err=<nil>
	// copy-never     shareable=false copy=false copied=false err=negative strides: the conversion needs a copy, and adapters.ZeroCopyOnly() forbids one
}

// An adapter decides with Choose, makes the conversion, and reports the decision only once the
// conversion has succeeded: one that fails leaves the caller's flag as it was.
func ExampleOptions_Choose() {
	toCOrder := func(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
		o := adapters.Apply(opts...)
		copy, err := o.Choose(t.IsContiguous(), "strides are not C order")
		if err != nil {
			return nil, err
		}
		out := t
		if copy {
			if out, err = memory.Contiguous(t); err != nil {
				return nil, err
			}
		}
		o.Report(copy)
		return out, nil
	}
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	for _, release := range []bool{false, true} {
		v, _ := x.Transpose() // Fortran order: copied
		if release {
			v.Release() // the copy will fail
		}
		copied := false
		_, err := toCOrder(v, adapters.ReportCopy(&copied))
		fmt.Printf("copied=%t err=%v\n", copied, err)
	}
	// Output:
	// copied=true err=<nil>
	// copied=false err=memory: the copy's source was released
}

// Under ZeroCopyOnly an adapter fails with an error matching ErrCopyRequired.
func ExampleZeroCopyOnly() {
	_, err := adapters.Apply(adapters.ZeroCopyOnly()).Decide(false, "Fortran order")
	fmt.Println(errors.Is(err, adapters.ErrCopyRequired))
	// Output:
	// true
}
