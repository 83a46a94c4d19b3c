package memory_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// viewOf returns the view of buf (of dtype dt) whose first element is element off, or nil when
// some element would fall outside buf.
func viewOf(buf []byte, dt core.DLDataType, off int64, shape, strides []int64) *core.Tensor {
	size := int64(dt.Size())
	n := int64(len(buf)) / size
	lo, hi := off, off
	for i, d := range shape {
		if d == 0 {
			lo, hi = 0, 0
			break
		}
		if s := (d - 1) * strides[i]; s < 0 {
			lo += s
		} else {
			hi += s
		}
	}
	if lo < 0 || hi >= n {
		return nil
	}
	x, err := core.WrapKeep(core.Desc{Data: unsafe.Pointer(&buf[0]), ByteOffset: uint64(off * size),
		Device: core.CPUDevice, DType: dt, Shape: shape, Strides: strides}, buf)
	if err != nil {
		return nil
	}
	return x
}

// referenceCopy returns the bytes buf would hold after copying src onto dst (both views of buf)
// as if src were read whole first: every element of src is read before any is written.
func referenceCopy(t testing.TB, buf []byte, dst, src *core.Tensor) []byte {
	var vals [][]byte
	for idx := range core.Indices(src.Shape()) {
		b, err := atBytes(src, idx)
		require.NoError(t, err)
		vals = append(vals, b)
	}
	want := bytes.Clone(buf)
	base := uintptr(unsafe.Pointer(&buf[0]))
	size := int64(dst.DType().Size())
	k := 0
	for idx := range core.Indices(dst.Shape()) {
		off, err := dst.Offset(idx...)
		require.NoError(t, err)
		at := int64(uintptr(dst.Data())-base) + off*size
		copy(want[at:at+size], vals[k])
		k++
	}
	return want
}

func TestCopyOverlappingViewsIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 64
	type mk func(a *core.Tensor) (dst, src *core.Tensor)
	square := func(buf []byte) *core.Tensor { return viewOf(buf, core.Float32, 0, []int64{8, 8}, []int64{8, 1}) }
	for _, c := range []struct {
		name string
		make mk
	}{
		{"transpose onto itself", func(a *core.Tensor) (*core.Tensor, *core.Tensor) { tr, _ := a.Transpose(); return a, tr }},
		{"reversed onto itself", func(a *core.Tensor) (*core.Tensor, *core.Tensor) { rv, _ := a.Reverse(1); return a, rv }},
		{"both axes reversed", func(a *core.Tensor) (*core.Tensor, *core.Tensor) {
			rv, _ := a.Reverse(0)
			rv, _ = rv.Reverse(1)
			return a, rv
		}},
		{"shifted stepped views", func(a *core.Tensor) (*core.Tensor, *core.Tensor) {
			d, _ := a.Slice(1, 0, 6, 2)
			s, _ := a.Slice(1, 1, 7, 2)
			d2, _ := d.Slice(0, 1, 8, 1)
			s2, _ := s.Slice(0, 0, 7, 1)
			return d2, s2
		}},
		{"shift by one element", func(a *core.Tensor) (*core.Tensor, *core.Tensor) {
			flat, _ := a.Reshape(64)
			d, _ := flat.Slice(0, 1, 64, 1)
			s, _ := flat.Slice(0, 0, 63, 1)
			return d, s
		}},
		{"shift back by one element", func(a *core.Tensor) (*core.Tensor, *core.Tensor) {
			flat, _ := a.Reshape(64)
			d, _ := flat.Slice(0, 0, 63, 1)
			s, _ := flat.Slice(0, 1, 64, 1)
			return d, s
		}},
		{"same elements", func(a *core.Tensor) (*core.Tensor, *core.Tensor) { v, _ := a.View(); return a, v }},
	} {
		t.Run(c.name, func(t *testing.T) {
			buf := make([]byte, n*4)
			for i := range buf {
				buf[i] = byte(r.Uint32())
			}
			dst, src := c.make(square(buf))
			want := referenceCopy(t, buf, dst, src)
			require.NoError(t, memory.Copy(dst, src))
			assert.Equal(t, want, buf)
		})
	}
	// a cast in place over the very same elements: each is read before it is written
	buf := make([]byte, n*4)
	ints := unsafe.Slice((*int32)(unsafe.Pointer(&buf[0])), n)
	for i := range ints {
		ints[i] = int32(i - 20)
	}
	src := viewOf(buf, core.Int32, 0, []int64{n}, []int64{1})
	dst := viewOf(buf, core.Float32, 0, []int64{n}, []int64{1})
	require.NoError(t, memory.Copy(dst, src))
	floats := unsafe.Slice((*float32)(unsafe.Pointer(&buf[0])), n)
	for i, f := range floats {
		require.Equal(t, float32(i-20), f)
	}
}

func TestCopyRefusesAliasingDestination(t *testing.T) {
	data := make([]float64, 6)
	dst, err := core.FromSliceStrided(data, 0, []int64{3, 2}, []int64{0, 1})
	require.NoError(t, err)
	require.False(t, dst.ReadOnly(), "FromSliceStrided makes writable tensors")
	src := core.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
	err = memory.Copy(dst, src)
	require.ErrorIs(t, err, core.ErrOverlap)
	assert.Contains(t, err.Error(), "dimension 0 has stride 0")
	assert.Equal(t, make([]float64, 6), data, "nothing written")
	err = memory.SetAt(dst, 1, 0, 0)
	assert.NoError(t, err, "one element is one write: no ambiguity")
}

// One rule for float → integer casts from every float dtype, in every kernel: truncation toward
// zero, NaN → 0, saturation at the integer's limits (±Inf included).
func TestCastFloatToIntRule(t *testing.T) {
	floats := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e30, -1e30, 300.75, -300.75, 2.5, -2.5, 0}
	ints := []core.DLDataType{core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16, core.Uint32, core.Uint64}
	srcs := []core.DLDataType{core.Float16, core.BFloat16, core.Float32, core.Float64, core.Complex64, core.Complex128}
	want := func(f float64, dt core.DLDataType) float64 {
		bits := dt.Bits
		lo, hi := -math.Ldexp(1, int(bits)-1), math.Ldexp(1, int(bits)-1)-1
		if dt.Code == core.CodeUInt {
			lo, hi = 0, math.Ldexp(1, int(bits))-1
		}
		switch {
		case math.IsNaN(f):
			return 0
		case f <= lo:
			return lo
		case f >= hi:
			return hi
		}
		return math.Trunc(f)
	}
	for _, sdt := range srcs {
		src64 := core.MustFromSlice(append([]float64{}, floats...), int64(len(floats)))
		src, err := memory.Cast(src64, sdt) // the values as that dtype holds them
		require.NoError(t, err)
		asF64, err := memory.Cast(src, core.Float64)
		require.NoError(t, err)
		vals, err := core.Elements[float64](asF64)
		require.NoError(t, err)
		for _, idt := range ints {
			// contiguous (direct kernels) and strided (the general path where there is one)
			for _, strided := range []bool{false, true} {
				in := src
				if strided {
					in, err = src.Reverse(0)
					require.NoError(t, err)
				}
				out, err := memory.Cast(in, idt)
				require.NoError(t, err)
				for i := range vals {
					j := i
					if strided {
						j = len(vals) - 1 - i
					}
					got, err := memory.At(out, int64(i))
					require.NoError(t, err)
					// (the 64-bit limits compare as the float64 they round to, on both sides)
					assert.Equal(t, want(vals[j], idt), real(got), "%s %v → %s", sdt, vals[j], idt)
				}
			}
		}
	}
}

// FuzzCopyOverlap copies between two random views of one buffer (any overlap, any strides,
// negative ones included) and compares the whole buffer with a reference that reads every
// source element before writing any; destinations whose elements alias each other must be
// refused with nothing written.
func FuzzCopyOverlap(f *testing.F) {
	f.Add([]byte{0, 2, 4, 4, 8, 1, 0, 1, 8, 0, 0})
	f.Add([]byte{1, 2, 8, 8, 1, 8, 10, 0xff, 0xf8, 3})
	f.Add([]byte{2, 1, 30, 1, 0, 0xff, 29})
	f.Add([]byte{3, 3, 2, 3, 4, 12, 4, 1, 0, 1, 4, 12, 5})
	dtypes := []core.DLDataType{core.Int8, core.Float32, core.Uint16, core.Float64, core.Complex128}
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := int(data[0])
			data = data[1:]
			return b
		}
		dt := dtypes[next()%len(dtypes)]
		ndim := next()%3 + 1
		shape := make([]int64, ndim)
		for i := range shape {
			shape[i] = int64(next()%9 + 1)
		}
		const n = 256
		buf := make([]byte, n*dt.Size())
		r := rand.New(rand.NewPCG(uint64(len(data)), 1))
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		view := func() *core.Tensor {
			strides := make([]int64, ndim)
			for i := range strides {
				strides[i] = int64(int8(next())) % 20
			}
			return viewOf(buf, dt, int64(next()), shape, strides)
		}
		dst, src := view(), view()
		if dst == nil || src == nil {
			return
		}
		before := bytes.Clone(buf)
		err := memory.Copy(dst, src)
		if dst.CheckNoSelfOverlap() != nil {
			require.ErrorIs(t, err, core.ErrOverlap)
			require.Equal(t, before, buf, "a refused copy wrote")
			return
		}
		require.NoError(t, err)
		copy(buf, before)
		want := referenceCopy(t, buf, dst, src)
		require.NoError(t, memory.Copy(dst, src))
		require.Equal(t, want, buf)
	})
}

// The same host bytes may come labelled with two host-accessible devices (kDLCPU in one tensor,
// pinned kDLCUDAHost in another): Copy must still see the overlap, and read the source whole
// before it writes.
func TestCopyOverlapAcrossHostDevices(t *testing.T) {
	for _, dev := range []core.DLDevice{{DeviceType: core.CUDAHost}, {DeviceType: core.CUDAManaged, DeviceID: 1}} {
		buf := []float32{0, 1, 2, 3, 4, 5, 6, 7}
		desc := func(d core.DLDevice) core.Desc {
			return core.Desc{Data: unsafe.Pointer(&buf[0]), Device: d, DType: core.Float32, Shape: []int64{8}}
		}
		cpu, err := core.WrapKeep(desc(core.CPUDevice), buf)
		require.NoError(t, err)
		other, err := core.WrapKeep(desc(dev), buf)
		require.NoError(t, err)
		rev, err := cpu.Reverse(0)
		require.NoError(t, err)
		require.NoError(t, memory.Copy(other, rev))
		assert.Equal(t, []float32{7, 6, 5, 4, 3, 2, 1, 0}, buf, "%s", dev)
	}
}
