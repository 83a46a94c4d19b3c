package core_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

func TestPermuteTranspose(t *testing.T) {
	x := core.MustFromSlice(arange(24), 2, 3, 4)
	cases := []struct {
		name    string
		view    func() (*core.Tensor, error)
		shape   []int64
		strides []int64
		first   []int64 // the first few elements in C order
	}{
		{"identity", func() (*core.Tensor, error) { return x.Permute(0, 1, 2) }, []int64{2, 3, 4}, []int64{12, 4, 1}, []int64{0, 1, 2, 3, 4}},
		{"201", func() (*core.Tensor, error) { return x.Permute(2, 0, 1) }, []int64{4, 2, 3}, []int64{1, 12, 4}, []int64{0, 4, 8, 12, 16, 20, 1}},
		{"transpose", x.Transpose, []int64{4, 3, 2}, []int64{1, 4, 12}, []int64{0, 12, 4, 16, 8, 20, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := c.view()
			require.NoError(t, err)
			assert.Equal(t, c.shape, v.Shape())
			assert.Equal(t, c.strides, v.Strides())
			assert.Equal(t, x.Data(), v.Data(), "a view shares memory")
			assert.Equal(t, c.first, elems[int64](t, v)[:len(c.first)])
		})
	}
	for _, bad := range [][]int{{0, 1}, {0, 1, 1}, {0, 1, 3}, {-1, 0, 1}, {0, 1, 2, 3}} {
		_, err := x.Permute(bad...)
		assert.ErrorIs(t, err, core.ErrArgument, "%v", bad)
	}
	s := core.Scalar(float32(1))
	st, err := s.Transpose()
	require.NoError(t, err)
	assert.Empty(t, st.Shape())
}

func TestSlice(t *testing.T) {
	x := core.MustFromSlice(arange(10))
	cases := []struct {
		start, stop, step int64
		want              []int64
	}{
		{core.Begin, core.End, 1, arange(10)},
		{2, 5, 1, []int64{2, 3, 4}},
		{1, 10, 3, []int64{1, 4, 7}},
		{-3, core.End, 1, []int64{7, 8, 9}},
		{-100, 3, 1, []int64{0, 1, 2}}, // clamped start
		{8, 100, 1, []int64{8, 9}},     // clamped stop
		{5, 2, 1, []int64{}},           // empty
		{core.End, core.Begin, -1, []int64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
		{8, 2, -2, []int64{8, 6, 4}},
		{-1, -4, -1, []int64{9, 8, 7}},
		{100, -100, -3, []int64{9, 6, 3, 0}},     // both clamped, negative step
		{2, 8, -1, []int64{}},                    // wrong direction
		{3, 4, 1, []int64{3}},                    // one element
		{0, core.End, math.MaxInt64, []int64{0}}, // huge step
		{core.End, core.Begin, -math.MaxInt64, []int64{9}},
	}
	for _, c := range cases {
		v, err := x.Slice(0, c.start, c.stop, c.step)
		require.NoError(t, err, "%v", c)
		assert.Equal(t, c.want, elems[int64](t, v), "[%d:%d:%d]", c.start, c.stop, c.step)
		assert.Equal(t, []int64{int64(len(c.want))}, v.Shape())
	}
	for _, bad := range []struct {
		axis int
		step int64
	}{{0, 0}, {1, 1}, {-1, 1}, {0, math.MinInt64}} {
		_, err := x.Slice(bad.axis, 0, 1, bad.step)
		assert.ErrorIs(t, err, core.ErrArgument, "%v", bad)
	}

	m := core.MustFromSlice(arange(12), 3, 4)
	v, err := m.Slice(1, 3, core.Begin, -2) // columns 3, 1
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 2}, v.Shape())
	assert.Equal(t, []int64{4, -2}, v.Strides())
	assert.Equal(t, []int64{3, 1, 7, 5, 11, 9}, elems[int64](t, v))
	assert.False(t, v.IsContiguous())
}

func TestReverseIndex(t *testing.T) {
	m := core.MustFromSlice(arange(6), 2, 3)
	r, err := m.Reverse(0)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4, 5, 0, 1, 2}, elems[int64](t, r))
	r, err = r.Reverse(1)
	require.NoError(t, err)
	assert.Equal(t, []int64{5, 4, 3, 2, 1, 0}, elems[int64](t, r))
	assert.Equal(t, []int64{-3, -1}, r.Strides())

	row, err := m.Index(0, -1)
	require.NoError(t, err)
	assert.Equal(t, []int64{3}, row.Shape())
	assert.Equal(t, []int64{3, 4, 5}, elems[int64](t, row))
	col, err := m.Index(1, 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 4}, elems[int64](t, col))
	assert.Equal(t, []int64{3}, col.Strides())
	el, err := col.Index(0, 1)
	require.NoError(t, err)
	assert.Equal(t, 0, el.Ndim())
	assert.Equal(t, []int64{4}, elems[int64](t, el))

	for _, bad := range []struct {
		axis int
		i    int64
	}{{0, 2}, {0, -3}, {2, 0}, {-1, 0}, {1, math.MinInt64}} {
		_, err := m.Index(bad.axis, bad.i)
		assert.ErrorIs(t, err, core.ErrArgument, "%v", bad)
	}
	_, err = m.Reverse(2)
	assert.ErrorIs(t, err, core.ErrArgument)
}

func TestReshape(t *testing.T) {
	x := core.MustFromSlice(arange(24), 2, 3, 4)
	tr, err := x.Transpose()
	require.NoError(t, err)
	rev, err := x.Reverse(2)
	require.NoError(t, err)
	sl, err := x.Slice(2, 0, 4, 2)
	require.NoError(t, err)
	rows, err := x.Slice(1, 0, 2, 1)
	require.NoError(t, err)
	cases := []struct {
		name    string
		src     *core.Tensor
		shape   []int64
		want    []int64 // shape after -1 is inferred
		strides []int64
		err     error
	}{
		{"flatten", x, []int64{24}, []int64{24}, []int64{1}, nil},
		{"infer", x, []int64{-1, 6}, []int64{4, 6}, []int64{6, 1}, nil},
		{"infer last", x, []int64{6, -1}, []int64{6, 4}, []int64{4, 1}, nil},
		{"unit dims", x, []int64{1, 2, 1, 12, 1}, []int64{1, 2, 1, 12, 1}, []int64{1, 12, 1, 1, 1}, nil},
		{"split", x, []int64{2, 3, 2, 2}, []int64{2, 3, 2, 2}, []int64{12, 4, 2, 1}, nil},
		{"transposed split outer", tr, []int64{2, 2, 3, 2}, []int64{2, 2, 3, 2}, []int64{2, 1, 4, 12}, nil},
		{"transposed flatten", tr, []int64{24}, nil, nil, core.ErrNotViewable},
		{"reversed merge", rev, []int64{6, 4}, []int64{6, 4}, []int64{4, -1}, nil},
		{"reversed flatten", rev, []int64{24}, nil, nil, core.ErrNotViewable},
		{"strided merge outer", sl, []int64{6, 2}, []int64{6, 2}, []int64{4, 2}, nil},
		{"every other flatten", sl, []int64{12}, []int64{12}, []int64{2}, nil},
		{"sliced rows flatten", rows, []int64{16}, nil, nil, core.ErrNotViewable},
		{"sliced rows merge inner", rows, []int64{2, 8}, []int64{2, 8}, []int64{12, 1}, nil},
		{"wrong size", x, []int64{5, 5}, nil, nil, core.ErrShape},
		{"two -1", x, []int64{-1, -1}, nil, nil, core.ErrShape},
		{"negative", x, []int64{-2, -12}, nil, nil, core.ErrShape},
		{"-1 with 0", x, []int64{0, -1}, nil, nil, core.ErrShape},
		{"overflow", x, []int64{math.MaxInt64, 4}, nil, nil, core.ErrOverflow},
		{"too many dims", x, make([]int64, 65), nil, nil, core.ErrNdim},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := c.src.Reshape(c.shape...)
			if c.err != nil {
				assert.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, v.Shape())
			assert.Equal(t, c.strides, v.Strides())
			assert.Equal(t, elems[int64](t, c.src), elems[int64](t, v), "same elements in C order")
		})
	}
	e := core.MustFromSlice([]int64{}, 0, 5)
	v, err := e.Reshape(5, 1)
	assert.ErrorIs(t, err, core.ErrShape)
	assert.Nil(t, v)
	v, err = e.Reshape(5, 0, 2)
	require.NoError(t, err, "any shape of 0 elements")
	assert.Equal(t, []int64{5, 0, 2}, v.Shape())
	v, err = e.Reshape(5, 0)
	require.NoError(t, err)
	assert.Equal(t, []int64{5, 0}, v.Shape())
	s, err := core.Scalar(int64(7)).Reshape(1, 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{7}, elems[int64](t, s))
	s, err = s.Reshape()
	require.NoError(t, err)
	assert.Equal(t, 0, s.Ndim())
}

func TestBroadcastTo(t *testing.T) {
	row := core.MustFromSlice([]int64{1, 2, 3}, 1, 3)
	b, err := row.BroadcastTo(2, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, 1}, b.Strides())
	assert.Equal(t, []int64{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}, elems[int64](t, b))
	assert.True(t, b.ReadOnly(), "elements alias each other")
	_, err = core.Elements[int64](b)
	assert.ErrorIs(t, err, core.ErrReadOnly)
	assert.False(t, row.ReadOnly())

	for _, bad := range [][]int64{{3}, {2, 4}, {2, -3}, {math.MaxInt64, 2, 3}, make([]int64, 65)} {
		_, err := row.BroadcastTo(bad...)
		assert.ErrorIs(t, err, core.ErrInvalid, "%v", bad)
	}
	e, err := row.BroadcastTo(0, 3)
	require.NoError(t, err)
	assert.True(t, e.Empty())
}

func TestViewsOfReleased(t *testing.T) {
	x := core.MustFromSlice(arange(4))
	x.Release()
	_, err := x.View()
	assert.ErrorIs(t, err, core.ErrReleased)
	_, err = x.Slice(0, 0, 1, 1)
	assert.ErrorIs(t, err, core.ErrReleased)
	_, err = x.Reshape(2, 2)
	assert.ErrorIs(t, err, core.ErrReleased)
}

func TestAsReadOnlyWithFlags(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2})
	ro, err := x.AsReadOnly()
	require.NoError(t, err)
	assert.True(t, ro.ReadOnly())
	assert.False(t, x.ReadOnly())
	assert.ErrorIs(t, core.Set[float32](ro, 3, 0), core.ErrReadOnly)
	c, err := x.WithFlags(core.FlagIsCopied)
	require.NoError(t, err)
	assert.Equal(t, core.FlagIsCopied, c.Flags())
	assert.Contains(t, ro.String(), "read-only")
}

// TestSubByteViewsStayCompact: a view of a packed int4 tensor whose strides are not compact C
// order would have elements that ByteRange (and so MayShareMemory) does not count — the second
// element of a column of a [2 3] int4 matrix lies in byte 1, outside the one byte ByteRange gave
// — and would be exported as a descriptor that import refuses. Such views fail with ErrSubByte;
// those that keep the tensor compact still work.
func TestSubByteViewsStayCompact(t *testing.T) {
	i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	x := core.MustNew(i4, 2, 3)
	flat, err := x.Reshape(6)
	require.NoError(t, err)
	bad := map[string]func() (*core.Tensor, error){
		"column":    func() (*core.Tensor, error) { return x.Index(1, 0) },
		"transpose": x.Transpose,
		"step":      func() (*core.Tensor, error) { return flat.Slice(0, 0, core.End, 4) },
		"broadcast": func() (*core.Tensor, error) { return flat.BroadcastTo(2, 6) },
	}
	for name, view := range bad {
		v, err := view()
		assert.ErrorIs(t, err, core.ErrSubByte, name)
		if err == nil {
			lo, hi := v.ByteRange()
			t.Logf("%s: %s spans %d bytes by ByteRange", name, v, hi-lo)
		}
	}
	b, err := core.Wrap(core.Desc{Data: unsafe.Add(x.Data(), 1), Device: core.CPUDevice, DType: core.Uint8, Shape: []int64{1}}, nil)
	require.NoError(t, err)
	for _, view := range []func() (*core.Tensor, error){
		func() (*core.Tensor, error) { return x.Index(0, 0) },
		func() (*core.Tensor, error) { return flat.Slice(0, 0, 4, 1) },
		func() (*core.Tensor, error) { return x.Reshape(3, 1, 2) },
		func() (*core.Tensor, error) { return x.Permute(0, 1) },
		x.View,
	} {
		v, err := view()
		require.NoError(t, err)
		assert.True(t, v.IsContiguous())
		assert.Equal(t, x.Data(), v.Data())
		if v.Len() > 2 {
			assert.True(t, core.MayShareMemory(v, b), "%s shares byte 1", v)
		}
	}
}

// WithFlags cannot call a packed sub-byte tensor padded.
func TestWithFlagsKeepsSubBytePacked(t *testing.T) {
	x := core.MustNew(core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}, 4)
	_, err := x.WithFlags(core.FlagIsSubbyteTypePadded)
	require.ErrorIs(t, err, core.ErrSubByte)
	ro, err := x.WithFlags(core.FlagReadOnly)
	require.NoError(t, err)
	assert.True(t, ro.ReadOnly())
}
