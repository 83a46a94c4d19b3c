package core_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
)

func TestExplicitView(t *testing.T) {
	base := leakcheck.Settle()
	for _, shape := range [][]int64{{}, {6}, {2, 3}, {1, 1, 1, 1, 2, 3}} {
		released := 0
		mem := make([]float32, 6)
		x, err := core.WrapExplicit(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice,
			DType: core.Float32, Shape: shape, Flags: core.FlagReadOnly}, func() { released++ })
		require.NoError(t, err)
		v, err := x.ExplicitView()
		require.NoError(t, err)
		assert.Equal(t, x.Data(), v.Data(), "zero-copy")
		assert.Equal(t, x.Shape(), v.Shape())
		assert.Equal(t, x.Strides(), v.Strides())
		assert.True(t, v.ReadOnly())

		x.Release() // the view holds the memory on, and is not released with x
		assert.Zero(t, released)
		h, err := core.Hold(v)
		require.NoError(t, err)
		h.Release()
		_, err = x.ExplicitView()
		assert.ErrorIs(t, err, core.ErrReleased)

		w, err := v.ExplicitView()
		require.NoError(t, err)
		v.Release()
		v.Release() // once
		assert.Zero(t, released, "w holds it")
		_, err = core.Hold(v)
		assert.ErrorIs(t, err, core.ErrReleased)
		w.Release()
		assert.Equal(t, 1, released)
	}
	assert.Equal(t, base, core.LiveForeign())

	// a tensor over Go memory (no owner) keeps what it kept
	g, err := core.New(core.Float64, 3)
	require.NoError(t, err)
	v, err := g.ExplicitView()
	require.NoError(t, err)
	assert.Equal(t, g.Data(), v.Data())
	g.Release()
	h, err := core.Hold(v)
	assert.NoError(t, err)
	h.Release()
	v.Release()
}
