package ggufx_test

import (
	"encoding/binary"
	"math"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/memory"
)

// plainFile is a file with one tensor of each plain type, ne [3, 2] (shape [2, 3]), element i
// holding i+1 (negated for odd i in the signed types), built by hand.
func plainFile() []byte {
	types := []struct {
		typ  uint32
		size int
		enc  func(b []byte, v float64)
	}{
		{0, 4, func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v))) }},
		{1, 2, func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, float16.Fromfloat32(float32(v)).Bits()) }},
		{30, 2, func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, uint16(math.Float32bits(float32(v))>>16)) }},
		{28, 8, func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) }},
		{24, 1, func(b []byte, v float64) { b[0] = byte(int8(v)) }},
		{25, 2, func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, uint16(int16(v))) }},
		{26, 4, func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, uint32(int32(v))) }},
		{27, 8, func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, uint64(int64(v))) }},
	}
	r := start(3, uint64(len(types)), 0)
	for i, tp := range types {
		r.tensor(ggufx.Type(tp.typ).String(), tp.typ, uint64(64*i), 3, 2)
	}
	for i, tp := range types {
		r.data(32, 0, nil)
		for len(r.b)%64 != 0 {
			r.b = append(r.b, 0)
		}
		_ = i
		b := make([]byte, 6*tp.size)
		for e := range 6 {
			v := float64(e + 1)
			if e%2 == 1 {
				v = -v
			}
			tp.enc(b[e*tp.size:], v)
		}
		r.bytes(b...)
	}
	return r.b
}

func TestOpenPlainTypes(t *testing.T) {
	path := file(t, plainFile())
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	defer f.Close()
	want := []float64{1, -2, 3, -4, 5, -6}
	for _, name := range f.Names() {
		ti, err := f.Info(name)
		require.NoError(t, err)
		var copied bool
		x, err := f.Tensor(name)
		require.NoError(t, err, name)
		dt, ok := ti.Type.DType()
		require.True(t, ok)
		assert.Equal(t, dt, x.DType(), name)
		assert.Equal(t, []int64{2, 3}, x.Shape(), "%s: C order, ne reversed", name)
		assert.True(t, x.ReadOnly())
		assert.True(t, x.Foreign(), "%s: a view of the mapping", name)
		assert.False(t, copied)
		c, err := memory.Cast(x, core.Float64)
		require.NoError(t, err)
		got, err := c.Float64s()
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
		// zero-copy: two tensors of one name share the bytes
		y, err := f.Tensor(name)
		require.NoError(t, err)
		assert.Equal(t, x.Data(), y.Data())
		x.Release()
		y.Release()
		c.Release()
	}
}

// The mapping is undone exactly once, by its last holder: the File or a tensor.
func TestOpenOwnership(t *testing.T) {
	path := file(t, plainFile())
	live, unmapped := ggufx.LiveMappings(), ggufx.Unmaps()
	f, err := ggufx.Open(path)
	require.NoError(t, err)
	assert.Equal(t, live+1, ggufx.LiveMappings())
	x, err := f.Tensor("F32")
	require.NoError(t, err)
	b, bi, err := f.Blocks("I64")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close twice")
	_, err = f.Tensor("F32")
	require.ErrorIs(t, err, ggufx.ErrClosed)
	_, _, err = f.Blocks("F32")
	require.ErrorIs(t, err, ggufx.ErrClosed)
	_, err = f.Dequantize("F32", core.Float32)
	require.ErrorIs(t, err, ggufx.ErrClosed)
	assert.Equal(t, live+1, ggufx.LiveMappings(), "the tensors hold the mapping")
	v, err := x.ReadOnlyFloat32s()
	require.NoError(t, err)
	assert.Equal(t, float32(-6), v[5])
	assert.Equal(t, []int64{6, 8}, b.Shape())
	assert.Equal(t, ggufx.BlockInfo{Type: ggufx.I64, BlockSize: 1, BlockBytes: 8, Blocks: 6, Shape: []int64{2, 3}}, bi)
	x.Release()
	assert.Equal(t, live+1, ggufx.LiveMappings())
	b.Release()
	assert.Equal(t, live, ggufx.LiveMappings())
	assert.Equal(t, unmapped+1, ggufx.Unmaps())

	// an unreachable File and tensor let go too
	func() {
		f, err := ggufx.Open(path)
		require.NoError(t, err)
		_, err = f.Tensor("F16")
		require.NoError(t, err)
	}()
	require.Eventually(t, func() bool { runtime.GC(); return ggufx.LiveMappings() == live }, 5*time.Second, 10*time.Millisecond)
}

func TestOpenCopyPolicy(t *testing.T) {
	path := file(t, plainFile())
	f, err := ggufx.Open(path, adapters.AlwaysCopy())
	require.NoError(t, err)
	defer f.Close()
	x, err := f.Tensor("I16")
	require.NoError(t, err)
	assert.False(t, x.ReadOnly())
	assert.NotZero(t, x.Flags()&core.FlagIsCopied)
	v, err := x.Int16s()
	require.NoError(t, err)
	assert.Equal(t, []int16{1, -2, 3, -4, 5, -6}, v)

	var copied = true
	g, err := ggufx.Open(path, adapters.ZeroCopyOnly(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer g.Close()
	y, err := g.Tensor("I16")
	require.NoError(t, err)
	assert.False(t, copied)
	assert.Zero(t, y.Flags()&core.FlagIsCopied)
}

func TestTensorRefusesQuantized(t *testing.T) {
	f, err := ggufx.Open(file(t, valid()))
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Tensor("q")
	require.ErrorIs(t, err, ggufx.ErrQuantized)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	for _, s := range []string{`"q"`, "Q4_0", "File.Blocks", "File.Dequantize"} {
		assert.Contains(t, err.Error(), s)
	}
	b, bi, err := f.Blocks("q")
	require.NoError(t, err)
	defer b.Release()
	assert.Equal(t, []int64{1, 18}, b.Shape())
	assert.Equal(t, core.Uint8, b.DType())
	assert.Equal(t, ggufx.BlockInfo{Type: ggufx.Q4_0, BlockSize: 32, BlockBytes: 18, Blocks: 1, Shape: []int64{32}}, bi)
	_, err = f.Tensor("nope")
	require.ErrorIs(t, err, ggufx.ErrNotFound)
	assert.Contains(t, err.Error(), `"nope"`)
	// the bytes of the file
	w, err := f.Tensor("w")
	require.NoError(t, err)
	defer w.Release()
	bs, err := w.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, byte(23), bs[23])
	assert.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(bs)))%32, "aligned in the mapping")
}

// Open reads the header and no more: a file whose data is far away, never touched, opens.
func TestOpenEmptyAndBad(t *testing.T) {
	_, err := ggufx.Open(file(t, nil))
	require.ErrorIs(t, err, ggufx.ErrTruncated)
	_, err = ggufx.Open(file(t, start(1, 0, 0).b))
	require.ErrorIs(t, err, ggufx.ErrVersion)
	assert.Contains(t, err.Error(), "x.gguf")
	_, err = ggufx.Open("/no/such/file.gguf")
	require.Error(t, err)
	f, err := ggufx.Open(file(t, start(3, 1, 0).tensor("e", 0, 0, 0, 4).b))
	require.NoError(t, err)
	defer f.Close()
	e, err := f.Tensor("e")
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 0}, e.Shape())
	d, err := f.Dequantize("e", core.Float16)
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 0}, d.Shape())
}

func TestMetadata(t *testing.T) {
	r := start(3, 0, 14)
	r.str("u8").u32(0).u8(200)
	r.str("i8").u32(1).u8(0xff)
	r.str("u16").u32(2).u16(60000)
	r.str("i16").u32(3).u16(0xfffe)
	r.str("u32").u32(4).u32(4e9)
	r.str("i32").u32(5).u32(0xfffffffd)
	r.str("f32").u32(6).f32(1.5)
	r.str("bool").u32(7).u8(1)
	r.str("str").u32(8).str("héllo")
	r.str("strs").u32(9).u32(8).u64(3).str("a").str("").str("c")
	r.str("u64").u32(10).u64(1 << 60)
	r.str("i64").u32(11).u64(uint64(1<<64 - 5))
	r.str("f64").u32(12).u64(math.Float64bits(-2.25))
	r.str("f32s").u32(9).u32(6).u64(2).f32(0.5).f32(-1)
	h, err := ggufx.ParseHeader(r.b)
	require.NoError(t, err)
	m := h.Metadata
	assert.Equal(t, 14, m.Len())
	assert.Equal(t, []string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "strs", "u64", "i64", "f64", "f32s"}, m.Keys())
	get := func(v any, err error) any { require.NoError(t, err); return v }
	assert.Equal(t, uint8(200), get(m.Uint8("u8")))
	assert.Equal(t, int8(-1), get(m.Int8("i8")))
	assert.Equal(t, uint16(60000), get(m.Uint16("u16")))
	assert.Equal(t, int16(-2), get(m.Int16("i16")))
	assert.Equal(t, uint32(4e9), get(m.Uint32("u32")))
	assert.Equal(t, int32(-3), get(m.Int32("i32")))
	assert.Equal(t, float32(1.5), get(m.Float32("f32")))
	assert.Equal(t, true, get(m.Bool("bool")))
	assert.Equal(t, "héllo", get(m.String("str")))
	assert.Equal(t, []string{"a", "", "c"}, get(m.Strings("strs")))
	assert.Equal(t, uint64(1<<60), get(m.Uint64("u64")))
	assert.Equal(t, int64(-5), get(m.Int64("i64")))
	assert.Equal(t, -2.25, get(m.Float64("f64")))
	assert.Equal(t, []float32{0.5, -1}, get(m.Float32s("f32s")))
	_, err = m.Uint32("str")
	require.ErrorIs(t, err, ggufx.ErrValueType)
	assert.Contains(t, err.Error(), `metadata "str" is string, not uint32`)
	_, err = m.Int32s("strs")
	require.ErrorIs(t, err, ggufx.ErrValueType)
	assert.Contains(t, err.Error(), "is an array of string, not an array of int32")
	_, err = m.String("missing")
	require.ErrorIs(t, err, ggufx.ErrNotFound)
	assert.Contains(t, err.Error(), `"missing"`)
	n := 0
	for k, v := range m.All() {
		if k == "strs" {
			assert.Equal(t, ggufx.TypeArray, v.Type())
			assert.Equal(t, ggufx.TypeString, v.ElemType())
			assert.Equal(t, `[3]string{"a" "" "c"}`, v.String())
			break
		}
		n++
	}
	assert.Equal(t, 9, n, "All stops when asked")
}
