package ortgo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
	"github.com/dlpack-go/dlpack/onnxx/ortgo/internal/models"
)

// bytesOf is a tensor's dtype, shape and elements, to compare results exactly.
type bytesOf struct {
	DType core.DLDataType
	Shape []int64
	Data  []byte
}

func snapshot(t *testing.T, x *core.Tensor) bytesOf {
	t.Helper()
	b, err := x.ReadOnlyBytes()
	require.NoError(t, err)
	return bytesOf{x.DType(), x.Shape(), append([]byte{}, b...)}
}

// TestShapelessModels runs the models without full shape information (issue 32: inputs and
// outputs of unknown rank, a partial shape, outputs whose rank or size the values decide, a
// graph without inputs) with raw onnxruntime_go (ORT allocating every output) and with onnxx on
// the same library: both give NumPy's results, byte for byte. onnxruntime_go (v1.27.0, still v1.38.0) cannot run
// a graph without inputs (its Run indexes the first input and panics), so that one is compared
// with NumPy alone.
func TestShapelessModels(t *testing.T) {
	cases, err := models.Manifest()
	require.NoError(t, err)
	names := map[string]bool{"unknown_rank": true, "unknown_rank_4d": true, "partial_shape": true,
		"constant_of_shape": true, "nonzero": true, "loop": true, "no_inputs": true}
	ran := 0
	for _, c := range cases {
		if !names[c.Name] {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			var inNames, outNames []string
			var vals []ort.Value
			ins := map[string]*core.Tensor{}
			for _, f := range c.Inputs {
				x, err := models.Load(f)
				require.NoError(t, err)
				v, err := ortgo.ToValue(x)
				require.NoError(t, err)
				defer v.Destroy()
				inNames, vals, ins[f.Name] = append(inNames, f.Name), append(vals, v), x
			}
			for _, f := range c.Outputs {
				outNames = append(outNames, f.Name)
			}
			outs := make([]ort.Value, len(outNames))
			if len(vals) > 0 {
				plain, err := ort.NewDynamicAdvancedSession(c.Model, inNames, outNames, nil)
				require.NoError(t, err)
				defer plain.Destroy()
				require.NoError(t, plain.Run(vals, outs))
			}

			s, err := onnxx.NewSession(c.Model, nil, nil, nil)
			require.NoError(t, err)
			defer s.Destroy()
			got, err := s.Run(ins)
			require.NoError(t, err)
			for i, f := range c.Outputs {
				want, err := models.Load(f)
				require.NoError(t, err)
				assert.Equal(t, snapshot(t, want), snapshot(t, got[f.Name]), "onnxx against NumPy: %s", f.Name)
				got[f.Name].Release()
				if outs[i] == nil {
					continue
				}
				raw, err := ortgo.FromValue(outs[i])
				require.NoError(t, err)
				assert.Equal(t, snapshot(t, want), snapshot(t, raw), "onnxruntime_go against NumPy: %s", f.Name)
				raw.Release()
			}
		})
	}
	assert.Equal(t, len(names), ran, "cases found in the manifest")
}

// TestScalarFedOneLikeORT: onnxruntime_go runs the scalar model on a [1] tensor, and onnxx
// returns what it returns.
func TestScalarFedOneLikeORT(t *testing.T) {
	x := core.MustFromSlice([]float32{41}, 1)
	v, err := ortgo.ToValue(x)
	require.NoError(t, err)
	defer v.Destroy()
	plain, err := ort.NewDynamicAdvancedSession(model("scalar"), []string{"X"}, []string{"Y"}, nil)
	require.NoError(t, err)
	defer plain.Destroy()
	outs := []ort.Value{nil}
	require.NoError(t, plain.Run([]ort.Value{v}, outs))
	raw, err := ortgo.FromValue(outs[0])
	require.NoError(t, err)
	defer raw.Release()

	s, err := onnxx.NewSession(model("scalar"), nil, nil, nil)
	require.NoError(t, err)
	defer s.Destroy()
	got, err := s.Run(map[string]*core.Tensor{"X": x})
	require.NoError(t, err)
	assert.Equal(t, snapshot(t, raw), snapshot(t, got["Y"]))
	assert.Equal(t, []int64{1}, got["Y"].Shape())
}

// TestEchoOutputsLikeORT: for models whose output is an input (fixed and dynamic shapes),
// onnxruntime_go (ORT allocating the outputs) and onnxx return the same values, and onnxx's
// output does not share the input's memory.
func TestEchoOutputsLikeORT(t *testing.T) {
	for _, name := range []string{"passthrough", "passthrough_dynamic"} {
		t.Run(name, func(t *testing.T) {
			x := core.MustFromSlice([]float32{-1, 2, -3, 4, -5, 6}, 2, 3)
			v, err := ortgo.ToValue(x)
			require.NoError(t, err)
			defer v.Destroy()
			plain, err := ort.NewDynamicAdvancedSession(model(name), []string{"X"}, []string{"X", "R"}, nil)
			require.NoError(t, err)
			defer plain.Destroy()
			outs := []ort.Value{nil, nil}
			require.NoError(t, plain.Run([]ort.Value{v}, outs))

			s, err := onnxx.NewSession(model(name), nil, nil, nil)
			require.NoError(t, err)
			defer s.Destroy()
			got, err := s.Run(map[string]*core.Tensor{"X": x})
			require.NoError(t, err)
			for i, out := range []string{"X", "R"} {
				raw, err := ortgo.FromValue(outs[i])
				require.NoError(t, err)
				assert.Equal(t, snapshot(t, raw), snapshot(t, got[out]), "output %s", out)
				raw.Release()
			}
			assert.False(t, core.MayShareMemory(x, got["X"]))
		})
	}
}
