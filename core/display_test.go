package core_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dlpack-go/dlpack/core"
)

// core's tests do not import package display: SimpleRender falls back to the one-line form, and
// delegates to whatever SetRenderer installs (package display's own tests check its renderer).
func TestSimpleRenderDelegates(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	assert.Equal(t, map[string]interface{}{"text/plain": "Tensor(float32, [2 2], cpu:0)"}, x.SimpleRender())

	var got *core.Tensor
	core.SetRenderer(func(t *core.Tensor) map[string]any {
		got = t
		return map[string]any{"text/html": "<b>x</b>"}
	})
	defer core.SetRenderer(nil)
	assert.Equal(t, map[string]interface{}{"text/html": "<b>x</b>"}, x.SimpleRender())
	assert.Same(t, x, got)

	core.SetRenderer(nil)
	assert.Equal(t, "Tensor(float32, [2 2], cpu:0)", x.SimpleRender()["text/plain"])
}
