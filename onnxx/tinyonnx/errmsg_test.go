package tinyonnx_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/onnxx/tinyonnx"
)

// TestErrorMessages provokes tinyonnx's refusals, of model descriptions and of malformed bytes,
// and holds each message to the module's rule: what was wrong first, "tinyonnx:" once,
// errors.Is still matching the sentinel.
func TestErrorMessages(t *testing.T) {
	good, err := tinyonnx.Dense(w, b)
	require.NoError(t, err)
	enc, err := good.Encode()
	require.NoError(t, err)
	encode := func(edit func(m *tinyonnx.Model)) func() error {
		return func() error {
			m, err := tinyonnx.Dense(w, b)
			require.NoError(t, err)
			edit(&m)
			_, err = m.Encode()
			return err
		}
	}
	read := func(b []byte) func() error {
		return func() error { _, err := tinyonnx.ReadGraphBytes(b); return err }
	}
	cases := []errstest.Case{
		{Name: "Dense nil", Want: tinyonnx.ErrModel, Err: func() error { _, err := tinyonnx.Dense(nil, nil); return err }},
		{Name: "Dense ragged", Want: tinyonnx.ErrModel, Err: func() error {
			_, err := tinyonnx.Dense([][]float64{{1, 2}, {3}}, []float64{0, 0})
			return err
		}},
		{Name: "Encode empty", Want: tinyonnx.ErrModel, Err: func() error { _, err := tinyonnx.Model{}.Encode(); return err }},
		{Name: "Encode node without op", Want: tinyonnx.ErrModel, Err: encode(func(m *tinyonnx.Model) { m.Nodes[0].Op = "" })},
		{Name: "Encode value without name", Want: tinyonnx.ErrModel, Err: encode(func(m *tinyonnx.Model) { m.Inputs[0].Name = "" })},
		{Name: "Encode int32 value", Want: tinyonnx.ErrModel, Err: encode(func(m *tinyonnx.Model) { m.Outputs[0].Type = 6 })},
		{Name: "Encode negative initializer shape", Want: tinyonnx.ErrModel, Err: encode(func(m *tinyonnx.Model) {
			m.Initializers[0].Shape = []int64{-1, 2}
		})},
		{Name: "Encode initializer without name", Want: tinyonnx.ErrModel, Err: encode(func(m *tinyonnx.Model) { m.Initializers[0].Name = "" })},
		{Name: "Encode initializer short", Want: tinyonnx.ErrModel, Err: encode(func(m *tinyonnx.Model) {
			m.Initializers[0].Data = m.Initializers[0].Data[:1]
		})},
		{Name: "ReadGraph negative size", Want: tinyonnx.ErrFormat, Err: func() error {
			_, err := tinyonnx.ReadGraph(bytes.NewReader(nil), -1)
			return err
		}},
		{Name: "no graph", Want: tinyonnx.ErrFormat, Err: read([]byte{0x08, 0x07})},
		{Name: "truncated", Want: tinyonnx.ErrFormat, Err: read(enc[:len(enc)/2])},
		{Name: "length past the end", Want: tinyonnx.ErrFormat, Err: read([]byte{0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f})},
		{Name: "endless varint", Want: tinyonnx.ErrFormat, Err: read([]byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
		{Name: "group wire type", Want: tinyonnx.ErrFormat, Err: read([]byte{0x3b})},
		{Name: "field zero", Want: tinyonnx.ErrFormat, Err: read([]byte{0x02, 0x00})},
		{Name: "graph as varint", Want: tinyonnx.ErrFormat, Err: read([]byte{0x38, 0x01})},
	}
	errstest.Run(t, `^tinyonnx: `, cases, tinyonnx.ErrModel, tinyonnx.ErrFormat)
}
