package ortgo_test

import (
	"os"
	"strings"
	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"
)

// TestOneLibrary: onnxx (purego) and onnxruntime_go (cgo) run in one process on one copy of ONNX
// Runtime: the process maps one libonnxruntime file, and a tensor goes from an onnxx output to an
// onnxruntime_go input and back.
func TestOneLibrary(t *testing.T) {
	path, version, ok := onnxx.LoadedLibrary()
	require.True(t, ok)
	assert.Equal(t, onnxx.RuntimeVersion, version)
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	files := map[string]bool{}
	for _, line := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(line); len(f) == 6 && strings.Contains(f[5], "libonnxruntime") {
			files[f[5]] = true
		}
	}
	assert.Len(t, files, 1, "one ONNX Runtime library mapped: %v (onnxx loaded %s)", files, path)

	s, err := onnxx.NewSession(model("dynamic_float32"), nil, []string{"Y"}, nil)
	require.NoError(t, err)
	defer s.Destroy()
	out, err := s.Run(map[string]*core.Tensor{"X": core.MustFromSlice([]float32{1, 2, 3}, 1, 3)})
	require.NoError(t, err)
	y := out["Y"] // over ORT's memory, from onnxx

	v, err := ortgo.ToValue(y) // onnxruntime_go reads the same memory
	require.NoError(t, err)
	defer v.Destroy()
	plain, err := ort.NewDynamicAdvancedSession(model("dynamic_float32"), []string{"X"}, []string{"Y"}, nil)
	require.NoError(t, err)
	defer plain.Destroy()
	outs := []ort.Value{nil}
	require.NoError(t, plain.Run([]ort.Value{v}, outs))
	z, err := ortgo.FromValue(outs[0])
	require.NoError(t, err)
	defer z.Release()
	got, err := core.ReadOnlyElements[float32](z)
	require.NoError(t, err)
	assert.Equal(t, []float32{7, 11, 15}, got) // 2(2x+1)+1
	y.Release()
}
