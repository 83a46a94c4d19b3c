package adapters_test

import (
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
)

// TestErrorMessages provokes the refusals of package adapters and holds each message to the
// module's rule: what was wrong first, each package prefix once, errors.Is still matching. The
// copy and cast kernels' refusals are memory's (TestKernelErrorMessages there).
func TestErrorMessages(t *testing.T) {
	cases := []errstest.Case{
		{Name: "ZeroCopyOnly", Want: adapters.ErrCopyRequired, Err: func() error {
			_, err := adapters.Apply(adapters.ZeroCopyOnly()).Choose(false, "adapters: strides [1 2] are not C order")
			return err
		}},
		{Name: "cast rule", Want: adapters.ErrCast, Err: func() error { return adapters.Apply().CheckCast(core.Float64, core.Float32, "") }},
	}
	errstest.Run(t, `^(adapters: |core: |tensor is )`, cases) // a CastError leaves the prefix to the adapter that wraps it
}
