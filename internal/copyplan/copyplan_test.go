package copyplan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dlpack-go/dlpack/internal/copyplan"
)

func TestMerge(t *testing.T) {
	for _, c := range []struct {
		name string
		dims []copyplan.Dim
		want []copyplan.Dim
	}{
		{"C order both", []copyplan.Dim{{2, 12, 12}, {3, 4, 4}, {4, 1, 1}}, []copyplan.Dim{{24, 1, 1}}},
		{"sizes of 1 dropped", []copyplan.Dim{{1, 99, 7}, {3, 1, 1}, {1, 5, 5}}, []copyplan.Dim{{3, 1, 1}}},
		{"transpose stays", []copyplan.Dim{{3, 4, 1}, {4, 1, 3}}, []copyplan.Dim{{3, 4, 1}, {4, 1, 3}}},
		{"rows with a gap stay", []copyplan.Dim{{3, 8, 4}, {4, 1, 1}}, []copyplan.Dim{{3, 8, 4}, {4, 1, 1}}},
		{"outer pair merges, inner stays", []copyplan.Dim{{2, 24, 6}, {3, 8, 2}, {2, 1, 1}}, []copyplan.Dim{{6, 8, 2}, {2, 1, 1}}},
		{"nothing", nil, []copyplan.Dim{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := copyplan.Merge(append([]copyplan.Dim{}, c.dims...))
			assert.Equal(t, c.want, append([]copyplan.Dim{}, got...))
		})
	}
}

func TestExtent(t *testing.T) {
	lo, hi := copyplan.Extent([]int64{2, 3}, []int64{-3, 1})
	assert.Equal(t, [2]int64{-3, 2}, [2]int64{lo, hi})
	lo, hi = copyplan.Extent([]int64{4, 0}, []int64{1, 1})
	assert.Equal(t, [2]int64{0, -1}, [2]int64{lo, hi})
	lo, hi = copyplan.Extent(nil, nil)
	assert.Equal(t, [2]int64{0, 0}, [2]int64{lo, hi}, "a 0-d layout is its one element")
}
