//go:build cgo

package pyexchange_test

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gpu"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// Register makes a Go function callable from Python as lib.halve(array); a signature Python
// cannot call is refused when registered, not when called.
func ExampleRegister() {
	halve := func(x *core.Tensor) error {
		v, err := core.Elements[float64](x)
		if err != nil {
			return err
		}
		for i := range v {
			v[i] /= 2
		}
		return nil
	}
	err := pyexchange.Register("halve", halve, "halve(x)\n\nHalves a C-order float64 array in place.")
	fmt.Println(err)

	err = pyexchange.Register("bad", func(xs []float64) error { return nil }, "")
	fmt.Println(errors.Is(err, pyexchange.ErrRegister))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// pyexchange: bad: parameter 0 has type []float64; want *core.Tensor, an integer, a float, bool or string
}

// ExceptionFor says which Python exception a Go error raises; MapError adds a library's own.
func ExampleExceptionFor() {
	errShape := errors.New("mylib: shapes differ")
	pyexchange.MapError(errShape, pyexchange.ValueError)
	fmt.Println(pyexchange.ExceptionFor(fmt.Errorf("add: %w", errShape)))
	fmt.Println(pyexchange.ExceptionFor(fmt.Errorf("scale: %w", core.ErrTypeMismatch)))
	fmt.Println(pyexchange.ExceptionFor(errors.New("something else")))
	// Output:
	// ValueError
	// TypeError
	// RuntimeError
}

// A c-shared library that hands CUDA tensors to Python installs a StreamSync from its init
// function: every __dlpack__(stream=s) of such a tensor then makes the consumer's stream s wait
// for the work this library queued (devicecheck/cudalib does this for the device check).
func ExampleSetStreamSync() {
	producer := gpu.LegacyStream // the stream the library writes its tensors on
	pyexchange.SetStreamSync(core.CUDA, func(t *core.Tensor, stream int64) error {
		return gpu.ReadyFor(t, producer, stream)
	})
	defer pyexchange.SetStreamSync(core.CUDA, nil) // (an example: leave the process as it was)
}
