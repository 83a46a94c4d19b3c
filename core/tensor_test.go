package core_test

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
)

func TestFromSliceZeroCopy(t *testing.T) {
	data := []float64{1, 2, 3, 4, 5, 6}
	x, err := core.FromSlice(data, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, unsafe.Pointer(&data[0]), x.Data(), "pointer identity")
	got, err := core.Elements[float64](x)
	require.NoError(t, err)
	assert.Same(t, &data[0], &got[0])
	data[4] = 50
	v, err := core.At[float64](x, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, 50.0, v, "a write to the slice is seen through the tensor")
	require.NoError(t, core.Set(x, 60.0, 0, 2))
	assert.Equal(t, 60.0, data[2], "a write through the tensor is seen in the slice")
	assert.Equal(t, []int64{3, 1}, x.Strides())
	assert.True(t, x.IsContiguous())
	assert.False(t, x.Foreign())

	_, err = core.FromSlice(data, 4, 2)
	assert.ErrorIs(t, err, core.ErrBounds)
	_, err = core.FromSlice(data, -1, -6)
	assert.ErrorIs(t, err, core.ErrShape)
	one, err := core.FromSlice(data)
	require.NoError(t, err)
	assert.Equal(t, []int64{6}, one.Shape())

	e, err := core.FromSlice([]float32{}, 0, 4)
	require.NoError(t, err)
	assert.True(t, e.Empty())
	assert.Nil(t, e.Data())
	d, err := core.Elements[float32](e)
	require.NoError(t, err)
	assert.Empty(t, d)
}

func TestFromSliceStrided(t *testing.T) {
	data := arange(12)
	cases := []struct {
		name    string
		offset  int64
		shape   []int64
		strides []int64
		want    []int64
		err     error
	}{
		{"fortran", 0, []int64{3, 4}, []int64{1, 3}, []int64{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}, nil},
		{"reversed", 11, []int64{12}, []int64{-1}, []int64{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, nil},
		{"zero stride", 5, []int64{2, 3}, []int64{0, 1}, []int64{5, 6, 7, 5, 6, 7}, nil},
		{"0-d", 7, []int64{}, nil, []int64{7}, nil},
		{"empty beyond the end", 100, []int64{0}, []int64{1}, []int64{}, nil},
		{"past the end", 1, []int64{12}, nil, nil, core.ErrBounds},
		{"before the start", 0, []int64{2}, []int64{-1}, nil, core.ErrBounds},
		{"negative offset", -1, []int64{1}, nil, nil, core.ErrBounds},
		{"stride overflow", 0, []int64{3}, []int64{math.MaxInt64}, nil, core.ErrOverflow},
		{"stride count", 0, []int64{2}, []int64{1, 1}, nil, core.ErrStrides},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, err := core.FromSliceStrided(data, c.offset, c.shape, c.strides)
			if c.err != nil {
				assert.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, elems[int64](t, x))
		})
	}
}

func TestNewAlignment(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Float32, core.Int8, core.Complex128, core.Bool, core.BFloat16} {
		for _, n := range []int64{1, 3, 17, 1000} {
			x, err := core.New(dt, n, 2)
			require.NoError(t, err)
			assert.Zero(t, uintptr(x.Data())%core.Alignment, "%s x %d", dt, n)
			b, err := x.Bytes()
			require.NoError(t, err)
			assert.Len(t, b, int(n)*2*dt.Size())
			assert.Equal(t, make([]byte, len(b)), b, "zeroed")
		}
	}
	i4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	x, err := core.New(i4, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(2), x.NumBytes(), "sub-byte types pack")
	s, err := core.New(core.Float64)
	require.NoError(t, err)
	assert.Equal(t, 0, s.Ndim())
	assert.Equal(t, int64(1), s.Len())
	_, err = core.New(core.DLDataType{Code: 42, Bits: 8, Lanes: 1}, 2)
	assert.ErrorIs(t, err, core.ErrDType)
	_, err = core.New(core.Float64, math.MaxInt64/4, 2)
	assert.ErrorIs(t, err, core.ErrOverflow)
	_, err = core.New(core.Float64, 1<<50)
	assert.ErrorIs(t, err, core.ErrOverflow, "more than Go can allocate is an error, not a panic")
	_, err = core.New(core.Float64, -1)
	assert.ErrorIs(t, err, core.ErrShape)
}

func TestTypedAccessErrors(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	_, err := core.Elements[float64](x)
	assert.ErrorIs(t, err, core.ErrTypeMismatch)
	assert.Contains(t, err.Error(), "float32")
	_, err = core.At[int32](x, 0, 0)
	assert.ErrorIs(t, err, core.ErrTypeMismatch)

	ro, _ := x.AsReadOnly()
	_, err = core.Elements[float32](ro)
	assert.ErrorIs(t, err, core.ErrReadOnly)
	_, _, err = core.Span[float32](ro)
	assert.ErrorIs(t, err, core.ErrReadOnly)
	_, err = ro.Bytes()
	assert.ErrorIs(t, err, core.ErrReadOnly)
	got, err := core.ReadOnlyElements[float32](ro)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4}, got)
	_, err = ro.ReadOnlyBytes()
	require.NoError(t, err)

	tr, _ := x.Transpose()
	_, err = core.Elements[float32](tr)
	assert.ErrorIs(t, err, core.ErrNotContiguous)
	_, err = tr.Bytes()
	assert.ErrorIs(t, err, core.ErrNotContiguous)
	span, first, err := core.Span[float32](tr)
	require.NoError(t, err)
	assert.Equal(t, float32(2), span[first+tr.Stride(0)*1+tr.Stride(1)*0], "tr[1,0] = x[0,1]")

	dev, err := core.Wrap(core.Desc{Data: fakeAddr(0x7f0000000000),
		Device: core.DLDevice{DeviceType: core.CUDA}, DType: core.Float32, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	_, err = core.Elements[float32](dev)
	assert.ErrorIs(t, err, core.ErrNotHost)
	assert.Contains(t, err.Error(), "cuda:0")
	_, err = dev.Bytes()
	assert.ErrorIs(t, err, core.ErrNotHost)

	_, err = x.Offset(2, 0)
	assert.ErrorIs(t, err, core.ErrArgument)
	_, err = core.At[float32](x, 0)
	assert.ErrorIs(t, err, core.ErrArgument)
	assert.ErrorIs(t, core.Set[float32](x, 1, -1, 0), core.ErrArgument)

	x.Release()
	assert.True(t, x.Released())
	_, err = core.Elements[float32](x)
	assert.ErrorIs(t, err, core.ErrReleased)
	_, err = core.At[float32](x, 0, 0)
	assert.ErrorIs(t, err, core.ErrReleased)
	_, err = x.Bytes()
	assert.ErrorIs(t, err, core.ErrReleased)
	assert.Contains(t, x.String(), "released")
}

func TestTwins(t *testing.T) {
	f, err := core.FromFloat32s([]float32{1, 2}, 2)
	require.NoError(t, err)
	fs, err := f.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, fs)
	h, err := core.FromFloat16s([]float16.Float16{float16.Fromfloat32(1.5)})
	require.NoError(t, err)
	assert.Equal(t, core.Float16, h.DType())
	b, err := core.FromBF16s([]core.BF16{core.BF16FromFloat32(2)})
	require.NoError(t, err)
	bs, err := b.BF16s()
	require.NoError(t, err)
	assert.Equal(t, float32(2), bs[0].Float32())
	_, err = f.Float64s()
	assert.ErrorIs(t, err, core.ErrTypeMismatch)

	// read-only tensors (a memory map, say) are read through the ReadOnly twins only
	ro, err := f.AsReadOnly()
	require.NoError(t, err)
	_, err = ro.Float32s()
	assert.ErrorIs(t, err, core.ErrReadOnly)
	rs, err := ro.ReadOnlyFloat32s()
	require.NoError(t, err)
	assert.Equal(t, fs, rs)
	assert.Same(t, &fs[0], &rs[0], "the same memory, no copy")
	_, err = ro.ReadOnlyInt64s()
	assert.ErrorIs(t, err, core.ErrTypeMismatch)
}

func TestContiguity(t *testing.T) {
	cases := []struct {
		name    string
		shape   []int64
		strides []int64
		c, f    bool
	}{
		{"c order", []int64{2, 3}, []int64{3, 1}, true, false},
		{"f order", []int64{2, 3}, []int64{1, 2}, false, true},
		{"size-1 dim any stride", []int64{2, 1, 3}, []int64{3, 999, 1}, true, false},
		{"size-1 dims negative stride", []int64{1, 4, 1}, []int64{-5, 1, 0}, true, true},
		{"vector", []int64{5}, []int64{1}, true, true},
		{"all ones", []int64{1, 1}, []int64{7, -7}, true, true},
		{"scalar", []int64{}, []int64{}, true, true},
		{"empty any strides", []int64{3, 0, 2}, []int64{0, -4, 100}, true, true},
		{"gap", []int64{2, 3}, []int64{4, 1}, false, false},
		{"reversed", []int64{3}, []int64{-1}, false, false},
		{"broadcast", []int64{2, 3}, []int64{0, 1}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, err := core.Wrap(core.Desc{Data: fakeAddr(0x100000), Device: core.CPUDevice,
				DType: core.Float32, Shape: c.shape, Strides: c.strides}, nil)
			require.NoError(t, err)
			assert.Equal(t, c.c, x.IsContiguous())
			assert.Equal(t, c.f, x.IsFortranContiguous())
		})
	}
}

// TestNewLayouts: New keeps small tensors' data in the tensor's own allocation and larger ones
// apart, and shape and strides inline up to a few dimensions; at every size and rank around
// those limits the data is aligned, zeroed and exactly as long as the tensor, writing every byte
// of it leaves the shape and strides intact, and the tensor survives collections while held.
func TestNewLayouts(t *testing.T) {
	for _, nbytes := range []int64{0, 1, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 4096} {
		for nd := 0; nd <= 6; nd++ {
			if nd == 0 && nbytes != 1 {
				continue // a 0-d uint8 tensor is one byte
			}
			shape := make([]int64, nd)
			for i := range shape {
				shape[i] = 1
			}
			if nd > 0 {
				shape[nd-1] = nbytes
			}
			name := fmt.Sprintf("%dB/%dd", nbytes, nd)
			x, err := core.New(core.Uint8, shape...)
			require.NoError(t, err, name)
			if nd > 0 {
				shape[0] = 99 // New copied the caller's shape
			}
			if nd > 0 && nbytes > 0 {
				assert.Zero(t, uintptr(x.Data())%core.Alignment, name)
			}
			b, err := x.Bytes()
			require.NoError(t, err, name)
			require.Len(t, b, int(nbytes), name)
			assert.Equal(t, make([]byte, nbytes), b, "%s: zeroed", name)
			for i := range b {
				b[i] = 0xA5
			}
			runtime.GC()
			want := make([]int64, nd)
			wantStrides := make([]int64, nd)
			for i := range want {
				want[i], wantStrides[i] = 1, nbytes
			}
			if nd > 0 {
				want[nd-1], wantStrides[nd-1] = nbytes, 1
			}
			if nbytes == 0 {
				for i := range wantStrides {
					wantStrides[i] = 1
				}
			}
			assert.Equal(t, want, x.Shape(), name)
			assert.Equal(t, wantStrides, x.Strides(), name)
			assert.True(t, x.IsContiguous(), name)
			b, err = x.Bytes()
			require.NoError(t, err, name)
			assert.Equal(t, bytes.Repeat([]byte{0xA5}, int(nbytes)), b, name)
			x.Release()
		}
	}
}

func TestNewAndFromSliceRefuseTooManyDimensions(t *testing.T) {
	shape := make([]int64, core.MaxNdim+1)
	for i := range shape {
		shape[i] = 1
	}
	_, err := core.New(core.Float32, shape...)
	assert.ErrorIs(t, err, core.ErrNdim)
	_, err = core.FromSliceStrided([]float32{1}, 0, shape, nil)
	assert.ErrorIs(t, err, core.ErrNdim)
	x, err := core.FromSliceStrided([]float32{1}, 0, shape[:core.MaxNdim], nil)
	require.NoError(t, err, "MaxNdim dimensions are fine")
	assert.Equal(t, core.MaxNdim, x.Ndim())
}

// TestNewDataOutlivesTensor: a slice of a small tensor's elements (kept in the tensor's own
// allocation) keeps that memory alive on its own, as any Go slice does, through collections and
// new allocations that would reuse freed memory.
func TestNewDataOutlivesTensor(t *testing.T) {
	elems := func(n int64) []float32 {
		x := core.MustNew(core.Float32, n)
		e, err := core.Elements[float32](x)
		require.NoError(t, err)
		for i := range e {
			e[i] = float32(i) + 0.5
		}
		return e // x itself is unreachable from here on
	}
	kept := [][]float32{elems(1), elems(16), elems(64), elems(256), elems(1000)}
	reuseFreedMemory()
	for _, e := range kept {
		for i, v := range e {
			require.Equal(t, float32(i)+0.5, v, "element %d of %d", i, len(e))
		}
	}
}
