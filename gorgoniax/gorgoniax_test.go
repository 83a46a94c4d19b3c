package gorgoniax_test

import (
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
	"gorgonia.org/tensor"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/foreignmem"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gorgoniax"
	"github.com/dlpack-go/dlpack/memory"
)

func ints(idx []int64) []int {
	out := make([]int, len(idx))
	for i, x := range idx {
		out[i] = int(x)
	}
	return out
}

// sameValues asserts that Gorgonia's At on d and core.At on x agree everywhere.
func sameValues(t *testing.T, d *tensor.Dense, x *core.Tensor) {
	t.Helper()
	require.Equal(t, len(x.Shape()), d.Dims())
	for i, s := range d.Shape() {
		require.Equal(t, x.Dim(i), int64(s))
	}
	for idx := range core.Indices(x.Shape()) {
		g, err := d.At(ints(idx)...)
		require.NoError(t, err)
		c, err := core.At[float64](x, idx...)
		require.NoError(t, err)
		require.Equal(t, c, g, "at %v", idx)
	}
}

func TestFromDenseEveryDtype(t *testing.T) {
	for _, tc := range []struct {
		back any
		want core.DLDataType
	}{
		{[]bool{true, false}, core.Bool},
		{[]int8{1, -2}, core.Int8}, {[]int16{1, -2}, core.Int16}, {[]int32{1, -2}, core.Int32}, {[]int64{1, -2}, core.Int64},
		{[]int{1, -2}, core.Int64},
		{[]uint8{1, 2}, core.Uint8}, {[]uint16{1, 2}, core.Uint16}, {[]uint32{1, 2}, core.Uint32}, {[]uint64{1, 2}, core.Uint64},
		{[]uint{1, 2}, core.Uint64},
		{[]float32{1, 2}, core.Float32}, {[]float64{1, 2}, core.Float64},
		{[]complex64{1, 2i}, core.Complex64}, {[]complex128{1, 2i}, core.Complex128},
		{[]float16.Float16{float16.Fromfloat32(1), float16.Fromfloat32(2)}, core.Float16},
		{[]core.BF16{core.BF16FromFloat32(1), core.BF16FromFloat32(2)}, core.BFloat16},
	} {
		t.Run(tc.want.String()+"/"+reflect.TypeOf(tc.back).Elem().String(), func(t *testing.T) {
			d := tensor.New(tensor.WithShape(2), tensor.WithBacking(tc.back))
			x, err := gorgoniax.FromDense(d)
			require.NoError(t, err)
			assert.Equal(t, tc.want, x.DType())
			assert.Equal(t, []int64{2}, x.Shape())
			assert.Equal(t, unsafe.Pointer(reflect.ValueOf(tc.back).Pointer()), x.Data(), "pointer identity")

			// And back: the Gorgonia dtype is the sized one (int → int64), over the same memory.
			back, err := gorgoniax.ToDense(x, adapters.ZeroCopyOnly())
			require.NoError(t, err)
			gdt, err := gorgoniax.ToDType(tc.want)
			require.NoError(t, err)
			assert.Equal(t, gdt, back.Dtype())
			assert.Equal(t, x.Data(), unsafe.Pointer(&back.Header.Raw[0]))
			b, err := x.Bytes()
			require.NoError(t, err)
			size := x.DType().Size()
			before := back.Get(1)
			b[size] ^= 1 // flip the low bit of element 1 through core
			assert.NotEqual(t, before, back.Get(1), "core write seen through Gorgonia")
			back.Set(0, back.Get(1)) // Gorgonia write seen through core
			assert.Equal(t, b[size:2*size], b[:size])
		})
	}
}

func TestFromDenseViewsAndOrders(t *testing.T) {
	newBase := func() *tensor.Dense { return tensor.New(tensor.WithShape(3, 4), tensor.WithBacking(leakcheck.Seq(12))) }
	rowView, err := newBase().Slice(tensor.S(1, 3))
	require.NoError(t, err)
	colView, err := newBase().Slice(nil, tensor.S(1))
	require.NoError(t, err)
	stepView, err := newBase().Slice(nil, tensor.S(0, 4, 2))
	require.NoError(t, err)
	thunk := newBase()
	require.NoError(t, thunk.T())
	fortran := tensor.New(tensor.WithShape(2, 3), tensor.AsFortran([]float64{1, 2, 3, 4, 5, 6}))
	cube := tensor.New(tensor.WithShape(2, 3, 4), tensor.WithBacking(leakcheck.Seq(24)))
	require.NoError(t, cube.T(2, 0, 1))

	for _, tc := range []struct {
		name    string
		d       *tensor.Dense
		strides []int64
	}{
		{"rows 1:3", rowView.(*tensor.Dense), []int64{4, 1}},
		{"column 1", colView.(*tensor.Dense), []int64{4}},
		{"columns ::2", stepView.(*tensor.Dense), []int64{4, 2}},
		{"thunked transpose", thunk, []int64{1, 4}},
		{"AsFortran", fortran, []int64{1, 2}},
		{"3-d transpose (2,0,1)", cube, []int64{1, 12, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := gorgoniax.FromDense(tc.d)
			require.NoError(t, err)
			assert.Equal(t, tc.strides, x.Strides(), "Gorgonia's real strides")
			assert.Equal(t, unsafe.Pointer(&tc.d.Header.Raw[0]), x.Data(), "no copy, no materialization")
			sameValues(t, tc.d, x)

			last := x.Shape()
			for i := range last {
				last[i]--
			}
			require.NoError(t, core.Set(x, -1.0, last...))
			g, err := tc.d.At(ints(last)...)
			require.NoError(t, err)
			assert.Equal(t, -1.0, g, "core write seen through Gorgonia")
			first := make([]int, len(last))
			require.NoError(t, tc.d.SetAt(-2.0, first...))
			c, err := core.At[float64](x, make([]int64, len(last))...)
			require.NoError(t, err)
			assert.Equal(t, -2.0, c, "Gorgonia write seen through core")
		})
	}
}

func TestFromDenseEmptyScalarAndRefusals(t *testing.T) {
	empty := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(0, 3))
	assert.Panics(t, func() { empty.Data() }, "the peer's Data panics on a zero-size tensor")
	x, err := gorgoniax.FromDense(empty)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 3}, x.Shape())
	assert.True(t, x.Empty())

	sc := tensor.New(tensor.FromScalar(2.5))
	x, err = gorgoniax.FromDense(sc)
	require.NoError(t, err)
	assert.Equal(t, 0, x.Ndim())
	v, err := core.At[float64](x)
	require.NoError(t, err)
	assert.Equal(t, 2.5, v)

	_, err = gorgoniax.FromDense(tensor.New(tensor.WithShape(2), tensor.WithBacking([]string{"a", "b"})))
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	assert.Contains(t, err.Error(), "gorgoniax: ")
	masked := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2}, []bool{false, true}))
	_, err = gorgoniax.FromDense(masked)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	_, err = gorgoniax.FromDense(nil)
	require.ErrorIs(t, err, core.ErrNil)

	// An access pattern that reaches past the array is refused, not read.
	bad := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(leakcheck.Seq(4)))
	bad.AP = tensor.MakeAP(tensor.Shape{2, 2}, []int{4, 1}, 0, tensor.NotTriangle)
	_, err = gorgoniax.FromDense(bad)
	require.ErrorIs(t, err, core.ErrBounds)
}

type layout struct {
	name   string
	x      *core.Tensor
	shared bool
	order  func(tensor.DataOrder) bool // the Gorgonia data order a shared Dense has
	view   bool
}

func layouts(t *testing.T) []layout {
	t.Helper()
	must := func(x *core.Tensor, err error) *core.Tensor {
		require.NoError(t, err)
		return x
	}
	base := func() *core.Tensor { return core.MustFromSlice(leakcheck.Seq(24), 2, 3, 4) }
	rowMajor := func(o tensor.DataOrder) bool { return o.IsRowMajor() && o.IsContiguous() }
	colMajor := func(o tensor.DataOrder) bool { return o.IsColMajor() && o.IsContiguous() }
	nonContig := func(o tensor.DataOrder) bool { return o.IsNotContiguous() }
	bcast := must(core.MustFromSlice(leakcheck.Seq(4), 1, 1, 4).BroadcastTo(2, 3, 4))
	return []layout{
		{"c", base(), true, rowMajor, false},
		{"fortran", must(memory.Clone(base(), memory.FortranOrder)), true, colMajor, false},
		{"transposed", must(base().Transpose()), true, colMajor, false},
		{"offset", must(base().Slice(0, 1, 2, 1)), true, rowMajor, false},
		{"step 2", must(base().Slice(2, 0, 4, 2)), true, nonContig, true},
		{"sliced rows", must(base().Slice(1, 1, 3, 1)), true, nonContig, true},
		{"permuted", must(base().Permute(1, 2, 0)), true, nonContig, true},
		{"negative", must(base().Reverse(1)), false, nil, false},
		{"broadcast", bcast, false, nil, false},
		{"read-only", must(base().AsReadOnly()), false, nil, false},
	}
}

func TestToDenseLayouts(t *testing.T) {
	for _, tc := range layouts(t) {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := gorgoniax.Shareable(tc.x)
			assert.Equal(t, tc.shared, ok, why)
			var copied bool
			d, err := gorgoniax.ToDense(tc.x, adapters.ReportCopy(&copied))
			require.NoError(t, err)
			assert.Equal(t, !tc.shared, copied)
			sameValues(t, d, tc.x)
			// Gorgonia's own Materialize reads the layout right.
			m := d.Materialize().(*tensor.Dense)
			want, err := memory.Contiguous(tc.x)
			require.NoError(t, err)
			wantData, err := core.ReadOnlyElements[float64](want)
			require.NoError(t, err)
			if m.DataOrder().IsRowMajor() {
				assert.Equal(t, wantData, m.Data())
			}

			_, err = gorgoniax.ToDense(tc.x, adapters.ZeroCopyOnly())
			if !tc.shared {
				require.ErrorIs(t, err, adapters.ErrCopyRequired)
				assert.Contains(t, err.Error(), "gorgoniax: ")
				assert.True(t, d.DataOrder().IsRowMajor() && d.DataOrder().IsContiguous() && !d.IsView())
				return
			}
			require.NoError(t, err)
			assert.True(t, tc.order(d.DataOrder()), "data order %v", d.DataOrder())
			assert.Equal(t, tc.view, d.IsView())
			assert.Equal(t, tc.x.Data(), unsafe.Pointer(&d.Header.Raw[0]), "pointer identity")
			last := tc.x.Shape()
			for i := range last {
				last[i]--
			}
			require.NoError(t, d.SetAt(-9.0, ints(last)...))
			v, err := core.At[float64](tc.x, last...)
			require.NoError(t, err)
			assert.Equal(t, -9.0, v, "Gorgonia write seen through core")
			require.NoError(t, core.Set(tc.x, -8.0, 0, 0, 0))
			g, err := d.At(0, 0, 0)
			require.NoError(t, err)
			assert.Equal(t, -8.0, g, "core write seen through Gorgonia")

			back, err := gorgoniax.FromDense(d)
			require.NoError(t, err)
			for i, n := range tc.x.Shape() {
				if n > 1 {
					assert.Equal(t, tc.x.Stride(i), back.Stride(i), "stride %d", i)
				}
			}
			assert.Equal(t, tc.x.Data(), back.Data())

			a, err := gorgoniax.ToDense(tc.x, adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
			require.NoError(t, err)
			assert.True(t, copied)
			assert.NotEqual(t, tc.x.Data(), unsafe.Pointer(&a.Header.Raw[0]))
		})
	}
}

func TestToDenseDtypes(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8,
		core.Uint16, core.Uint32, core.Uint64, core.Float16, core.BFloat16, core.Float32, core.Float64,
		core.Complex64, core.Complex128} {
		x := core.MustNew(dt, 2, 3)
		d, err := gorgoniax.ToDense(x, adapters.ZeroCopyOnly())
		require.NoError(t, err, dt.String())
		back, err := gorgoniax.FromDType(d.Dtype())
		require.NoError(t, err)
		assert.Equal(t, dt, back)
	}
	assert.Equal(t, gorgoniax.Float16, mustDtype(t, core.Float16))
	assert.Equal(t, gorgoniax.BFloat16, mustDtype(t, core.BFloat16))

	// float16 through Gorgonia's generic machinery: a transpose materialized by Gorgonia.
	h := core.MustFromSlice([]float16.Float16{float16.Fromfloat32(1), float16.Fromfloat32(2),
		float16.Fromfloat32(3), float16.Fromfloat32(4)}, 2, 2)
	ht, err := h.Permute(1, 0)
	require.NoError(t, err)
	d, err := gorgoniax.ToDense(ht, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	v, err := d.At(0, 1)
	require.NoError(t, err)
	assert.Equal(t, float16.Fromfloat32(3).Bits(), v, "Gorgonia's At returns the bits of registered 16-bit types")

	for _, dt := range []core.DLDataType{{Code: core.CodeFloat8E4M3FN, Bits: 8, Lanes: 1},
		{Code: core.CodeInt, Bits: 4, Lanes: 1}, {Code: core.CodeFloat, Bits: 32, Lanes: 4}} {
		_, err := gorgoniax.ToDense(core.MustNew(dt, 2))
		require.ErrorIs(t, err, adapters.ErrUnsupported, dt.String())
		ok, _ := gorgoniax.Shareable(core.MustNew(dt, 2))
		assert.False(t, ok)
	}
	_, err = gorgoniax.FromDType(tensor.String)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
}

func mustDtype(t *testing.T, dt core.DLDataType) tensor.Dtype {
	t.Helper()
	g, err := gorgoniax.ToDType(dt)
	require.NoError(t, err)
	return g
}

func TestToDenseEmptyScalarAndErrors(t *testing.T) {
	d, err := gorgoniax.ToDense(core.MustNew(core.Float32, 3, 0), adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, tensor.Shape{3, 0}, d.Shape())
	back, err := gorgoniax.FromDense(d)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 0}, back.Shape())

	s, err := gorgoniax.ToDense(core.Scalar(int32(7)), adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.True(t, s.IsScalar())
	assert.Equal(t, int32(7), s.ScalarValue())

	_, err = gorgoniax.ToDense(nil)
	require.ErrorIs(t, err, core.ErrNil)
	x := core.MustNew(core.Float64, 2)
	x.Release()
	_, err = gorgoniax.ToDense(x)
	require.ErrorIs(t, err, core.ErrReleased)

	var fake [4]float64
	dev, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&fake[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float64, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	ok, why := gorgoniax.Shareable(dev)
	assert.False(t, ok)
	assert.Contains(t, why, "not host memory")
	copied := false
	_, err = gorgoniax.ToDense(dev, adapters.ReportCopy(&copied))
	require.ErrorIs(t, err, core.ErrNotHost)
	assert.False(t, copied, "ReportCopy said copied, but the conversion failed")
	_, err = gorgoniax.ToDense(dev, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
}

func TestLifetimeUnderGC(t *testing.T) {
	for _, view := range []bool{false, true} {
		m, err := foreignmem.Twin(core.MustFromSlice(leakcheck.Seq(12), 3, 4))
		require.NoError(t, err)
		x, releases := m.Tensor, m.Releases
		m = foreignmem.Mapped{}
		released := func() bool { return releases.Load() != 0 }
		if view {
			v, err := x.Slice(1, 0, 4, 2) // a Gorgonia view with a parent
			require.NoError(t, err)
			x.Release()
			x = v
		}
		d, err := gorgoniax.ToDense(x, adapters.ZeroCopyOnly())
		require.NoError(t, err)
		x.Release()
		x = nil
		for range 5 {
			runtime.GC()
		}
		assert.False(t, released(), "released while the *tensor.Dense is reachable")
		g, err := d.At(2, 1)
		require.NoError(t, err)
		assert.NotZero(t, g)

		back, err := gorgoniax.FromDense(d) // the tensor keeps the Dense, which keeps the memory
		require.NoError(t, err)
		d = nil
		for range 5 {
			runtime.GC()
		}
		assert.False(t, released(), "released while a tensor over the Dense is reachable")
		c, err := core.At[float64](back, 2, 1)
		require.NoError(t, err)
		assert.Equal(t, g, c)
		back = nil
		assert.True(t, leakcheck.Until(released), "never released once nothing holds it")
		assert.Equal(t, int32(1), releases.Load())
	}
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name: "gorgonia",
		DTypes: []core.DLDataType{core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8,
			core.Uint16, core.Uint32, core.Uint64, core.Float16, core.BFloat16, core.Float32, core.Float64,
			core.Complex64, core.Complex128},
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			d, err := gorgoniax.ToDense(x, opts...)
			if err != nil {
				return nil, err
			}
			return gorgoniax.FromDense(d)
		},
		Shareable: gorgoniax.Shareable,
	})
}
