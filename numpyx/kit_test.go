package numpyx_test

import (
	"bytes"
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// TestConformance runs the adapters conformance kit over a .npy round trip: every dtype, rank
// and layout the kit generates is written and read back. A file round trip always copies.
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name:   "numpyx.Write+Read",
		DTypes: allDTypes,
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			if _, err := adapters.Apply(opts...).Decide(false, "a .npy round trip writes and reads bytes"); err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			if err := numpyx.Write(&buf, x); err != nil {
				return nil, err
			}
			return numpyx.Read(&buf)
		},
	})
}
