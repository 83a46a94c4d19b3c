package ortgo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/onnxx"
)

// TestTooOld: the refusal names the onnxruntime_go release, what it needs (the C API version
// where known: this module's release; "a newer ONNX Runtime" for a newer onnxruntime_go whose
// GetApi call failed), the library and its version, and the fix.
func TestTooOld(t *testing.T) {
	err := tooOld("v1.38.0", 31, "/lib/libonnxruntime.so.1", "1.30.0")
	require.ErrorIs(t, err, onnxx.ErrNoRuntime)
	assert.Equal(t, "ortgo: onnxruntime_go v1.38.0 needs ONNX Runtime 1.31 or later (C API 31); the library at /lib/libonnxruntime.so.1 is 1.30.0: run scripts/fetch-ort.sh (ONNX Runtime "+onnxx.RuntimeVersion+") or set $ONNXRUNTIME_LIB to a newer libonnxruntime.so", err.Error())
	err = tooOld("v1.39.0", 0, "/lib/libonnxruntime.so.1", "1.31.1")
	require.ErrorIs(t, err, onnxx.ErrNoRuntime)
	assert.Contains(t, err.Error(), "ortgo: onnxruntime_go v1.39.0 needs a newer ONNX Runtime; the library at /lib/libonnxruntime.so.1 is 1.31.1: ")
	for v, want := range map[string]int{"1.30.0": 30, "1.31.1": 31, "1.24.3": 24} {
		got, ok := libraryAPI(v)
		assert.True(t, ok, v)
		assert.Equal(t, want, got, v)
	}
	for _, v := range []string{"", "2.0.0", "1.x"} {
		_, ok := libraryAPI(v)
		assert.False(t, ok, v)
	}
	assert.Equal(t, bindingRelease, linkedRelease(), "this test binary links this module's onnxruntime_go")
}
