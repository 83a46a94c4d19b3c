//go:build unix

package foreignmem_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
)

// mapped reports whether addr lies in a mapping of this process (/proc/self/maps).
func mapped(t *testing.T, addr uintptr) bool {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps here: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var lo, hi uintptr
		if _, err := fmt.Sscanf(line, "%x-%x", &lo, &hi); err == nil && lo <= addr && addr < hi {
			return true
		}
	}
	return false
}

func TestTwinKeepsLayoutAndUnmapsOnRelease(t *testing.T) {
	leakcheck.Check(t)
	x := core.MustFromSlice(leakcheck.Seq(12), 3, 4)
	tr, err := x.Transpose()
	require.NoError(t, err)
	rev, err := tr.Reverse(0)
	require.NoError(t, err)
	m, err := foreignmem.Twin(rev)
	require.NoError(t, err)
	assert.Equal(t, rev.Shape(), m.Tensor.Shape())
	assert.Equal(t, rev.Strides(), m.Tensor.Strides())
	assert.True(t, m.Tensor.Foreign())
	for idx := range core.Indices(rev.Shape()) {
		want, _ := core.At[float64](rev, idx...)
		got, err := core.At[float64](m.Tensor, idx...)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	addr := uintptr(m.Tensor.Data())
	require.True(t, mapped(t, addr))
	m.Tensor.Release()
	assert.Equal(t, int32(1), m.Releases.Load())
	assert.False(t, mapped(t, addr), "released memory is unmapped: a late access faults")
	assert.True(t, foreignmem.ReleasedOnce(m.Releases))
}
