//go:build cgo

package cdlpack_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
	"github.com/dlpack-go/dlpack/core/cdlpack/internal/ctest"
)

// A managed tensor is handed over once: importing it again while the first import holds it is
// refused, and the refusal does not run the deleter (that would free the first import's memory).
func TestImportTwiceRefused(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		c := ctest.NewCounter()
		var first, second *core.Tensor
		var err error
		if legacy {
			m := ctest.ProduceLegacy(c, 0, 2, 3)
			first, err = cdlpack.ImportLegacy(m)
			require.NoError(t, err)
			second, err = cdlpack.ImportLegacy(m)
		} else {
			m := ctest.ProduceVersioned(c, 0, 2, 3)
			first, err = cdlpack.ImportVersioned(m)
			require.NoError(t, err)
			second, err = cdlpack.ImportVersioned(m)
		}
		require.ErrorIs(t, err, core.ErrImported, "legacy=%v", legacy)
		assert.Nil(t, second)
		assert.Zero(t, c.Calls(), "the refused import must not run the deleter")
		got, err := core.At[float64](first, 1, 2)
		require.NoError(t, err)
		assert.Equal(t, 5.0, got, "the first import still reads its memory")
		first.Release()
		assert.Equal(t, int64(1), c.Calls())
	}
}
