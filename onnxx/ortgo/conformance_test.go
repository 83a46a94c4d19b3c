package ortgo_test

import (
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
)

// TestConformance runs the adapters conformance kit on the round trip core tensor → ORT value
// (ToValue) → core tensor (FromValue), for every dtype ORT takes, ranks 1 to 5 (0-d values are
// onnxruntime_go's own copies; TestRunScalar and TestToValueErrors cover them).
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name: "onnxx",
		DTypes: []core.DLDataType{core.Float32, core.Float64, core.Float16, core.BFloat16,
			core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16, core.Uint32,
			core.Uint64, core.Bool},
		MinNdim: 1,
		MaxNdim: 5,
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			v, err := ortgo.ToValue(x, opts...)
			if err != nil {
				return nil, err
			}
			y, err := ortgo.FromValue(v)
			if err != nil {
				v.Destroy()
				return nil, err
			}
			return y, nil
		},
		Shareable: func(x *core.Tensor) (bool, string) { return x.IsContiguous(), "not C-contiguous" },
	})
}
