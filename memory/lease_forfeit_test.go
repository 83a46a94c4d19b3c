package memory_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// matrix stands for another library's value over a tensor's memory (a *mat.Dense): what is
// derived from it (row) reads the memory without any holder core can count.
type matrix struct{ data []float32 }

// TestLeaseForfeit: a lent tensor attached to another value (core.Attach) forfeits its block.
// After the value is collected and the tensor released, a slice derived from the value still
// reads what was written, and the lease never lends that block again (Lost, Lend nil); without
// Attach, the block is lent again.
func TestLeaseForfeit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attach bool
	}{{"attached", true}, {"not attached", false}} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := memory.NewLease(core.Float32, 2, 4)
			require.NoError(t, err)
			x := l.Lend()
			e, err := core.Elements[float32](x)
			require.NoError(t, err)
			copy(e, []float32{1, 2, 3, 4, 5, 6, 7, 8})
			var row []float32
			if tc.attach {
				m := &matrix{data: e}
				require.NoError(t, core.Attach(m, x))
				row = m.data[4:8] // a view of the other library's, derived from m
			}
			x.Release()
			runtime.GC()
			runtime.GC()
			if !tc.attach {
				assert.False(t, l.Lost())
				y := l.Lend()
				require.NotNil(t, y, "a block released without Attach is lent again")
				y.Release()
				return
			}
			assert.True(t, l.Lost(), "an attached block is lost to the lease")
			assert.Nil(t, l.Lend(), "an attached block is never lent again")
			assert.Equal(t, []float32{5, 6, 7, 8}, row)
		})
	}
}

// TestLeaseForfeitView: Attach on a view of a lent tensor forfeits the block too.
func TestLeaseForfeitView(t *testing.T) {
	l, err := memory.NewLease(core.Float64, 3)
	require.NoError(t, err)
	x := l.Lend()
	v, err := x.View()
	require.NoError(t, err)
	require.NoError(t, core.Attach(&matrix{}, v))
	v.Release()
	x.Release()
	assert.True(t, l.Lost())
	assert.Nil(t, l.Lend())
}
