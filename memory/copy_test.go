package memory_test

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// view builds a strided view of a fresh random tensor.
type view struct {
	name  string
	shape []int64 // of the base tensor
	make  func(b *core.Tensor) (*core.Tensor, error)
}

func same(b *core.Tensor) (*core.Tensor, error) { return b, nil }

func permute(axes ...int) func(*core.Tensor) (*core.Tensor, error) {
	return func(b *core.Tensor) (*core.Tensor, error) { return b.Permute(axes...) }
}

// views covers every stride pattern the kernels meet.
var views = []view{
	{"0-d", nil, same},
	{"0-d index at offset", []int64{4}, func(b *core.Tensor) (*core.Tensor, error) { return b.Index(0, 3) }},
	{"1-d", []int64{7}, same},
	{"c 2x3", []int64{2, 3}, same},
	{"negative axis 0", []int64{4, 5}, func(b *core.Tensor) (*core.Tensor, error) { return b.Reverse(0) }},
	{"negative both axes", []int64{4, 5}, func(b *core.Tensor) (*core.Tensor, error) {
		r, err := b.Reverse(0)
		if err != nil {
			return nil, err
		}
		return r.Reverse(1)
	}},
	{"negative step -2", []int64{3, 9}, func(b *core.Tensor) (*core.Tensor, error) { return b.Slice(1, core.End, core.Begin, -2) }},
	{"step 3", []int64{3, 10}, func(b *core.Tensor) (*core.Tensor, error) { return b.Slice(1, 1, core.End, 3) }},
	{"broadcast rows", []int64{1, 3}, func(b *core.Tensor) (*core.Tensor, error) { return b.BroadcastTo(4, 3) }},
	{"broadcast columns", []int64{3, 1}, func(b *core.Tensor) (*core.Tensor, error) { return b.BroadcastTo(3, 5) }},
	{"broadcast scalar", nil, func(b *core.Tensor) (*core.Tensor, error) { return b.BroadcastTo(2, 3, 2) }},
	{"broadcast leading", []int64{2, 3}, func(b *core.Tensor) (*core.Tensor, error) { return b.BroadcastTo(4, 2, 3) }},
	{"fortran 3x4x5", []int64{3, 4, 5}, func(b *core.Tensor) (*core.Tensor, error) { return memory.Clone(b, memory.FortranOrder) }},
	{"offset window", []int64{6, 5}, func(b *core.Tensor) (*core.Tensor, error) {
		s, err := b.Slice(0, 2, 5, 1)
		if err != nil {
			return nil, err
		}
		return s.Slice(1, 1, 4, 1)
	}},
	{"transposed 2-d", []int64{5, 7}, permute(1, 0)},
	{"transposed 37x53 (tile remainders)", []int64{37, 53}, permute(1, 0)},
	{"transposed 130x70", []int64{130, 70}, permute(1, 0)},
	{"transposed 600x90 (full tiles and remainders)", []int64{600, 90}, permute(1, 0)},
	{"transposed 90x600", []int64{90, 600}, permute(1, 0)},
	{"transposed column window", []int64{70, 90}, func(b *core.Tensor) (*core.Tensor, error) {
		s, err := b.Slice(1, 5, 80, 1)
		if err != nil {
			return nil, err
		}
		return s.Transpose()
	}},
	{"permuted 3-d", []int64{2, 3, 4}, permute(2, 0, 1)},
	{"permuted 3-d inner pair", []int64{3, 65, 66}, permute(0, 2, 1)},
	{"permuted 4-d", []int64{2, 3, 4, 5}, permute(3, 1, 0, 2)},
	{"permuted 5-d", []int64{2, 3, 2, 3, 2}, permute(4, 2, 0, 3, 1)},
	{"size-1 dims transposed", []int64{1, 4, 1, 3}, permute(3, 2, 1, 0)},
	{"size-1 dims reversed", []int64{4, 1, 3}, func(b *core.Tensor) (*core.Tensor, error) { return b.Reverse(2) }},
	{"empty 0x3", []int64{0, 3}, same},
	{"empty 3x0 transposed", []int64{3, 0}, permute(1, 0)},
	{"empty 2x0x4 reversed", []int64{2, 0, 4}, func(b *core.Tensor) (*core.Tensor, error) { return b.Reverse(2) }},
}

func TestCloneEveryStridePattern(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range allDTypes {
		for _, v := range views {
			t.Run(dt.String()+"/"+v.name, func(t *testing.T) {
				src, err := v.make(randomTensor(t, r, dt, v.shape...))
				require.NoError(t, err)

				c, err := memory.Clone(src, memory.COrder)
				require.NoError(t, err)
				requireSameElements(t, src, c, "C order")
				assert.True(t, c.IsContiguous())
				assert.False(t, c.ReadOnly())
				assert.NotZero(t, c.Flags()&core.FlagIsCopied)

				f, err := memory.Clone(src, memory.FortranOrder)
				require.NoError(t, err)
				requireSameElements(t, src, f, "Fortran order")
				assert.True(t, f.IsFortranContiguous())
				assert.NotZero(t, f.Flags()&core.FlagIsCopied)

				// into a destination with strides of its own: reversed along every axis
				dst, err := core.New(dt, src.Shape()...)
				require.NoError(t, err)
				for ax := range dst.Ndim() {
					dst, err = dst.Reverse(ax)
					require.NoError(t, err)
				}
				require.NoError(t, memory.Copy(dst, src))
				requireSameElements(t, src, dst, "reversed destination")
			})
		}
	}
}

func TestCloneDoesNotAlias(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	c, err := memory.Contiguous(x)
	require.NoError(t, err)
	require.NoError(t, core.Set[float32](x, 100, 0, 0))
	v, err := core.At[float32](c, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, float32(1), v)
	assert.NotEqual(t, x.Data(), c.Data())
}

// TestCopyVectorDType covers element types with several lanes (an odd element size), which
// the kernel moves as bytes.
func TestCopyVectorDType(t *testing.T) {
	dt := core.DLDataType{Code: core.CodeFloat, Bits: 32, Lanes: 3} // 12 bytes
	r := rand.New(rand.NewPCG(3, 4))
	base := randomTensor(t, r, dt, 4, 5)
	src, err := base.Transpose()
	require.NoError(t, err)
	c, err := memory.Contiguous(src)
	require.NoError(t, err)
	got, err := c.Bytes()
	require.NoError(t, err)
	all, err := base.Bytes()
	require.NoError(t, err)
	k := 0
	for i := range 5 {
		for j := range 4 {
			off := (j*5 + i) * 12
			assert.Equal(t, all[off:off+12], got[k*12:(k+1)*12], "element [%d %d]", i, j)
			k++
		}
	}
}

// TestCopyInPlace copies a tensor onto itself, which Copy allows.
func TestCopyInPlace(t *testing.T) {
	x := core.MustFromSlice([]int32{1, 2, 3, 4}, 2, 2)
	require.NoError(t, memory.Copy(x, x))
	got, err := core.Elements[int32](x)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3, 4}, got)
}

func TestCopyErrors(t *testing.T) {
	src := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	ro, err := core.MustNew(core.Float32, 2, 3).AsReadOnly()
	require.NoError(t, err)
	buf := make([]float32, 6)
	cuda, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2, 3}}, nil)
	require.NoError(t, err)
	released := core.MustNew(core.Float32, 2, 3)
	released.Release()
	int4 := core.DLDataType{Code: core.CodeInt, Bits: 4, Lanes: 1}
	sub, err := core.New(int4, 2, 3)
	require.NoError(t, err)
	handle, err := core.New(core.DLDataType{Code: core.CodeOpaqueHandle, Bits: 64, Lanes: 1}, 2, 3)
	require.NoError(t, err)

	tests := []struct {
		name     string
		dst, src *core.Tensor
		want     error
	}{
		{"shape mismatch", core.MustNew(core.Float32, 3, 2), src, core.ErrShape},
		{"rank mismatch", core.MustNew(core.Float32, 6), src, core.ErrShape},
		{"read-only destination", ro, src, core.ErrReadOnly},
		{"broadcast destination", func() *core.Tensor {
			b, err := core.MustNew(core.Float32, 1, 3).BroadcastTo(2, 3)
			require.NoError(t, err)
			return b
		}(), src, core.ErrReadOnly},
		{"device source", core.MustNew(core.Float32, 2, 3), cuda, core.ErrNotHost},
		{"device destination", cuda, src, core.ErrNotHost},
		{"released source", core.MustNew(core.Float32, 2, 3), released, core.ErrReleased},
		{"released destination", released, src, core.ErrReleased},
		{"sub-byte source", core.MustNew(core.Float32, 2, 3), sub, memory.ErrUnsupported},
		{"opaque handle destination", handle, src, memory.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := memory.Copy(tt.dst, tt.src)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), "memory: ")
		})
	}
	for name, x := range map[string]*core.Tensor{"device": cuda, "released": released, "sub-byte": sub} {
		_, err := memory.Contiguous(x)
		assert.Error(t, err, name)
		_, err = memory.Cast(x, core.Float64)
		assert.Error(t, err, name)
	}
}

// TestCopiesPastMemory: the copies of a view repeating one element 2^40 times (8 TiB of
// float64) fail with core.ErrTooLarge; Go's allocator ended the process before.
func TestCopiesPastMemory(t *testing.T) {
	b, err := core.MustFromSlice([]float64{1}, 1).BroadcastTo(1 << 40)
	require.NoError(t, err)
	_, err = memory.Clone(b, memory.COrder)
	require.ErrorIs(t, err, core.ErrTooLarge)
	_, err = memory.Cast(b, core.Float32)
	require.ErrorIs(t, err, core.ErrTooLarge)
	_, err = memory.Contiguous(b)
	require.ErrorIs(t, err, core.ErrTooLarge)
}
