package gomlxx

import (
	"runtime"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The records of views of collected tensors are swept: the map never grows with the number of
// tensors ever viewed, only with the live ones.
func TestOriginsAreSwept(t *testing.T) {
	count := func() (n int) {
		origins.Range(func(any, any) bool { n++; return true })
		return n
	}
	for range 3 * sweepEvery {
		if _, err := FromTensor(tensors.FromFlatDataAndDimensions([]float32{1, 2}, 2)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
	live := tensors.FromFlatDataAndDimensions([]float32{3}, 1)
	v, err := FromTensor(live)
	require.NoError(t, err)
	for range sweepEvery { // a sweep runs among these records
		_, err := FromTensor(tensors.FromFlatDataAndDimensions([]float32{4}, 1))
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, count(), sweepEvery+1, "the collected tensors' records were swept")
	v, err = FromTensor(live)
	require.NoError(t, err)
	assert.Same(t, live, recall(v.Data()), "the live tensor's record stays")
}
