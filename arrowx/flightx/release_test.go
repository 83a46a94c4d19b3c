package flightx_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// TestGetReleasesAtOnce: the tensor Get assembles from several batches (mapped memory, from
// package memory's NewUninit) gives its block back at its Release, not at a later collection:
// core.LiveForeign is back where it was before the Get with no collection in between, and the
// next Get of the same size reuses the block (its pages already mapped in).
func TestGetReleasesAtOnce(t *testing.T) {
	x := core.MustNew(core.Float32, 4<<20) // 16 MiB: mapped, and four batches of 4 MiB
	c := flightServer(t, "x", x)
	ctx := context.Background()
	base := leakcheck.Settle()
	// empty the block cache, so that a block of this size that an earlier test gave back (older,
	// so taken first) cannot stand in for the one this Get gives back
	memory.SetAllocation(memory.SetAllocation(memory.Allocation{}))
	a, _, err := c.Get(ctx, "x")
	require.NoError(t, err)
	require.True(t, a.Foreign(), "a tensor of this size is over mapped memory")
	at := a.Data()
	assert.Equal(t, base+1, core.LiveForeign())
	a.Release()
	assert.Equal(t, base, core.LiveForeign(), "the block is given back at Release")
	b, _, err := c.Get(ctx, "x")
	require.NoError(t, err)
	defer b.Release()
	assert.Equal(t, at, b.Data(), "the next Get reuses the block")
}
