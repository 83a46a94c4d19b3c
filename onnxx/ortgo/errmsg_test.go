package ortgo_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
)

// TestErrorMessages provokes ortgo's refusals (with the real onnxruntime_go) and holds each
// message to the module's rule: what was wrong first, one package prefix (ortgo's, or onnxx's
// for a dtype that onnxx maps), errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	released := core.MustFromSlice([]float32{1})
	released.Release()
	devMem := make([]float32, 4) // stands in for device memory: never touched
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&devMem[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	f8 := core.MustNew(core.DLDataType{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}, 3)
	vec := core.MustNew(core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 4}, 3)
	tr, err := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3).Transpose()
	require.NoError(t, err)
	toValue := func(x *core.Tensor, opts ...adapters.Option) func() error {
		return func() error {
			v, err := ortgo.ToValue(x, opts...)
			if v != nil {
				v.Destroy()
			}
			return err
		}
	}
	cases := []errstest.Case{
		{Name: "ToValue nil", Want: core.ErrNil, Err: toValue(nil)},
		{Name: "ToValue released", Want: core.ErrReleased, Err: toValue(released)},
		{Name: "ToValue device", Want: onnxx.ErrUnsupportedDevice, Err: toValue(dev)},
		{Name: "ToValue float8", Want: onnxx.ErrDType, Err: toValue(f8)},
		{Name: "ToValue lanes", Want: onnxx.ErrDType, Err: toValue(vec)},
		{Name: "ToValue 0-d float16", Want: onnxx.ErrDType, Err: toValue(core.Scalar(float16.Fromfloat32(1)))},
		{Name: "ToValue 0-d bfloat16", Want: onnxx.ErrDType, Err: toValue(core.Scalar(core.BF16FromFloat32(1)))},
		{Name: "ToValue zero-copy transpose", Want: adapters.ErrCopyRequired, Err: toValue(tr, adapters.ZeroCopyOnly())},
		{Name: "ToValue zero-copy 0-d", Want: adapters.ErrCopyRequired, Err: toValue(core.Scalar(float32(1)), adapters.ZeroCopyOnly())},
		{Name: "FromValue nil", Want: onnxx.ErrValue, Err: func() error { _, err := ortgo.FromValue(nil); return err }},
		{Name: "FromValue string tensor", Want: onnxx.ErrValue, Err: func() error {
			v, err := ort.NewStringTensor(ort.NewShape(2))
			require.NoError(t, err)
			defer v.Destroy()
			_, err = ortgo.FromValue(v)
			return err
		}},
		{Name: "ToDType float8", Want: onnxx.ErrDType, Err: func() error { _, err := ortgo.ToDType(f8.DType()); return err }},
		{Name: "FromDType string", Want: onnxx.ErrDType, Err: func() error {
			_, err := ortgo.FromDType(ort.TensorElementDataTypeString)
			return err
		}},
	}
	errstest.Run(t, `^(ortgo|onnxx): `, cases, onnxx.ErrNoRuntime, onnxx.ErrRuntime, onnxx.ErrModel, onnxx.ErrOverlap,
		onnxx.ErrProvider, onnxx.ErrValue, onnxx.ErrDType, onnxx.ErrUnsupportedDevice, ortgo.ErrNotInitialized)
	for _, tc := range cases[:3] {
		require.Regexp(t, `^ortgo: `, tc.Err().Error(), tc.Name)
	}
}
