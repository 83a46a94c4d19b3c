package memory_test

import (
	"testing"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// TestErrorMessages provokes the refusals of package memory (and of core's part checks, which
// NewUninitParts reports as they are) and holds each message to the module's rule (errs.Check).
func TestErrorMessages(t *testing.T) {
	cases := []errstest.Case{
		{Name: "bytes overflow", Want: core.ErrOverflow, Err: func() error { _, err := memory.AllocSize(core.Float64, 1<<61); return err }},
		{Name: "empty lease", Want: core.ErrInvalid, Err: func() error { _, err := memory.NewLease(core.Float32, 0); return err }},
		{Name: "parts: block", Want: core.ErrOverflow, Err: func() error { _, _, err := memory.NewUninitParts(-1, nil); return err }},
		{Name: "parts: ndim", Want: core.ErrNdim, Err: func() error {
			_, _, err := memory.NewUninitParts(8, []memory.Part{{DType: core.Float32, Shape: make([]int64, 65)}})
			return err
		}},
		{Name: "parts: shape", Want: core.ErrShape, Err: func() error {
			_, _, err := memory.NewUninitParts(8, []memory.Part{{DType: core.Float32, Shape: []int64{-1}}})
			return err
		}},
		{Name: "parts: bounds", Want: core.ErrBounds, Err: func() error {
			_, _, err := memory.NewUninitParts(8, []memory.Part{{Offset: 4, DType: core.Float32, Shape: []int64{2}}})
			return err
		}},
	}
	errstest.Run(t, `^(memory|core): `, cases)
}
