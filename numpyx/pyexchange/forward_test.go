package pyexchange_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dlpack-go/dlpack/core"
	old "github.com/dlpack-go/dlpack/numpyx/pyexchange"
	"github.com/dlpack-go/dlpack/pyexchange"
)

// TestForwarder checks that the old path is the new package under another name: the same
// sentinels (errors.Is matches across the two), the same handle table and the same registry.
func TestForwarder(t *testing.T) {
	for _, c := range []struct{ old, new error }{
		{old.ErrAllocate, pyexchange.ErrAllocate}, {old.ErrArgument, pyexchange.ErrArgument},
		{old.ErrRegister, pyexchange.ErrRegister}, {old.ErrStream, pyexchange.ErrStream},
		{old.ErrHandle, pyexchange.ErrHandle}, {old.ErrNotAttached, pyexchange.ErrNotAttached},
		{old.ErrOutOfMemory, pyexchange.ErrOutOfMemory},
	} {
		assert.True(t, errors.Is(c.old, c.new), "%v", c.new)
	}
	assert.Equal(t, pyexchange.ExceptionFor(core.ErrArgument), old.ExceptionFor(core.ErrArgument))

	x := core.MustFromSlice([]float64{1, 2, 3}, 3)
	before := pyexchange.LiveHandles()
	h, err := old.NewHandle(x)
	assert.NoError(t, err)
	got, err := pyexchange.Lookup(h)
	assert.NoError(t, err)
	assert.Equal(t, x.Data(), got.Data(), "one handle table behind both paths")
	assert.Equal(t, before+1, old.LiveHandles())
	assert.NoError(t, old.Release(h))
	assert.ErrorIs(t, pyexchange.Release(h), old.ErrHandle)

	assert.NoError(t, old.Register("forwarded_twice", func(a int64) (int64, error) { return 2 * a, nil }, "doubles"))
	assert.Contains(t, pyexchange.Functions(), "forwarded_twice", "one registry behind both paths")
}
