package arrowx_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// checked returns a checked allocator that the test asserts empty at its end.
func checked(t *testing.T) *amemory.CheckedAllocator {
	mem := amemory.NewCheckedAllocator(amemory.NewGoAllocator())
	t.Cleanup(func() {
		leakcheck.Settle() // buffers held by unreachable tensors and arrays are let go by cleanups
		mem.AssertSize(t, 0)
	})
	return mem
}

func float32Array(mem amemory.Allocator, vals ...float32) *array.Float32 {
	b := array.NewFloat32Builder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewFloat32Array()
}

func TestFromArrayPrimitiveIsAView(t *testing.T) {
	mem := checked(t)
	base := leakcheck.Settle()
	arr := float32Array(mem, 1, 2, 3, 4, 5)
	ten, err := arrowx.FromArray(arr, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	assert.Equal(t, []int64{5}, ten.Shape())
	assert.Equal(t, core.Float32, ten.DType())
	assert.Same(t, &arr.Float32Values()[0], (*float32)(ten.Data()), "the tensor is over the array's buffer")
	assert.False(t, ten.ReadOnly(), "a builder's buffer is mutable")
	vals, err := ten.Float32s()
	require.NoError(t, err)
	vals[2] = 30
	assert.Equal(t, float32(30), arr.Value(2), "a write through the tensor shows in the array")

	// the tensor keeps the buffer alive after the array is released
	arr.Release()
	assert.Equal(t, []float32{1, 2, 30, 4, 5}, vals)
	assert.NotZero(t, mem.CurrentAlloc(), "the buffer is still held by the tensor")
	ten.Release()
	assert.Zero(t, mem.CurrentAlloc(), "releasing the tensor released the buffer")
	assert.Equal(t, base, leakcheck.Settle())
}

func TestFromArrayHonoursOffset(t *testing.T) {
	mem := checked(t)
	arr := float32Array(mem, 0, 1, 2, 3, 4, 5, 6)
	defer arr.Release()
	sl := array.NewSlice(arr, 2, 5).(*array.Float32)
	defer sl.Release()
	ten, err := arrowx.FromArray(sl)
	require.NoError(t, err)
	defer ten.Release()
	assert.Same(t, &arr.Float32Values()[2], (*float32)(ten.Data()))
	vals, err := core.ReadOnlyElements[float32](ten)
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3, 4}, vals)
}

// nested builds a FixedSizeList<FixedSizeList<float64, 3>, 2> of n rows with values 0, 1, ...
func nested(mem amemory.Allocator, n int, nullRow int) arrow.Array {
	inner := arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float64)
	b := array.NewFixedSizeListBuilder(mem, 2, inner)
	defer b.Release()
	ib := b.ValueBuilder().(*array.FixedSizeListBuilder)
	vb := ib.ValueBuilder().(*array.Float64Builder)
	k := 0.0
	for i := range n {
		if i == nullRow {
			b.AppendNull()
			k += 6
			continue
		}
		b.Append(true)
		for range 2 {
			ib.Append(true)
			for range 3 {
				vb.Append(k)
				k++
			}
		}
	}
	return b.NewArray()
}

func TestFromArrayNestedFixedSizeList(t *testing.T) {
	mem := checked(t)
	arr := nested(mem, 4, -1)
	defer arr.Release()
	ten, err := arrowx.FromArray(arr, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer ten.Release()
	assert.Equal(t, []int64{4, 2, 3}, ten.Shape())
	leaf := arr.(*array.FixedSizeList).ListValues().(*array.FixedSizeList).ListValues().(*array.Float64)
	assert.Same(t, &leaf.Float64Values()[0], (*float64)(ten.Data()))
	v, err := core.At[float64](ten, 2, 1, 2)
	require.NoError(t, err)
	assert.Equal(t, float64(2*6+1*3+2), v)

	// a slice of the outer list starts at row 1 of the same memory
	sl := array.NewSlice(arr, 1, 3)
	defer sl.Release()
	st, err := arrowx.FromArray(sl)
	require.NoError(t, err)
	defer st.Release()
	assert.Equal(t, []int64{2, 2, 3}, st.Shape())
	assert.Same(t, &leaf.Float64Values()[6], (*float64)(st.Data()))
}

func TestNullsRefusedOrFilled(t *testing.T) {
	mem := checked(t)
	b := array.NewFloat32Builder(mem)
	b.AppendValues([]float32{1, 2, 3}, []bool{true, false, true})
	arr := b.NewArray()
	b.Release()
	defer arr.Release()

	_, err := arrowx.FromArray(arr)
	require.ErrorIs(t, err, arrowx.ErrNulls)

	_, err = arrowx.FromArray(arr, arrowx.FillNulls(-1), adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)

	var copied bool
	ten, err := arrowx.FromArray(arr, arrowx.FillNulls(-1), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer ten.Release()
	assert.True(t, copied)
	assert.NotZero(t, ten.Flags()&core.FlagIsCopied, "a filled copy is flagged")
	vals, err := ten.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, -1, 3}, vals)

	// a null list fills the whole row, at any level
	narr := nested(mem, 3, 1)
	defer narr.Release()
	_, err = arrowx.FromArray(narr)
	require.ErrorIs(t, err, arrowx.ErrNulls)
	nt, err := arrowx.FromArray(narr, arrowx.FillNulls(7))
	require.NoError(t, err)
	defer nt.Release()
	got, err := nt.Float64s()
	require.NoError(t, err)
	for i, v := range got {
		switch {
		case i >= 6 && i < 12:
			assert.Equal(t, 7.0, v, "element %d is under the null row", i)
		default:
			assert.Equal(t, float64(i), v)
		}
	}
}

func TestBooleansAreCopied(t *testing.T) {
	mem := checked(t)
	b := array.NewBooleanBuilder(mem)
	want := []bool{true, false, false, true, true, false, true, false, true, true}
	b.AppendValues(want, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	sl := array.NewSlice(arr, 3, 10) // a bit offset that is not a byte boundary
	defer sl.Release()

	_, err := arrowx.FromArray(sl, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	ten, err := arrowx.FromArray(sl)
	require.NoError(t, err)
	defer ten.Release()
	got, err := ten.Bools()
	require.NoError(t, err)
	assert.Equal(t, want[3:], got)

	back, err := arrowx.ToArray(ten)
	require.NoError(t, err)
	defer back.Release()
	require.Equal(t, arrow.BOOL, back.DataType().ID())
	for i, w := range want[3:] {
		assert.Equal(t, w, back.(*array.Boolean).Value(i))
	}
}

func TestToArrayShares(t *testing.T) {
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	arr, err := arrowx.ToArray(x, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer arr.Release()
	fsl, ok := arr.(*array.FixedSizeList)
	require.True(t, ok, "a 2-D tensor is a FixedSizeList array, got %T", arr)
	assert.Equal(t, 2, fsl.Len())
	leaf := fsl.ListValues().(*array.Float32)
	assert.Same(t, (*float32)(x.Data()), &leaf.Float32Values()[0])

	xt, err := x.Transpose()
	require.NoError(t, err)
	_, err = arrowx.ToArray(xt, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	arrT, err := arrowx.ToArray(xt)
	require.NoError(t, err)
	defer arrT.Release()
	back, err := arrowx.FromArray(arrT)
	require.NoError(t, err)
	defer back.Release()
	assert.Equal(t, []int64{3, 2}, back.Shape())
	vals, err := core.ReadOnlyElements[float32](back)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 4, 2, 5, 3, 6}, vals)

	_, err = arrowx.ToArray(core.Scalar[float32](1))
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	_, err = arrowx.ToArray(core.MustNew(core.Complex64, 2))
	require.ErrorIs(t, err, adapters.ErrUnsupported)
}

func TestFloat16(t *testing.T) {
	mem := checked(t)
	b := array.NewFloat16Builder(mem)
	b.AppendValues([]float16.Num{float16.New(1.5), float16.New(-2)}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	ten, err := arrowx.FromArray(arr, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer ten.Release()
	assert.Equal(t, core.Float16, ten.DType())
	v, err := memory.At(ten, 1)
	require.NoError(t, err)
	assert.Equal(t, complex(-2, 0), v)
}

// TestForeignMemoryLivesAsLongAsTheArray: a tensor over foreign memory, handed to Arrow, is
// released only when the Arrow array (and what was made of it) is gone, and exactly once.
func TestForeignMemoryLivesAsLongAsTheArray(t *testing.T) {
	base := leakcheck.Settle()
	mem := make([]float64, 4)
	released := 0
	x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float64,
		Shape: []int64{4}}, func() { released++ })
	require.NoError(t, err)
	arr, err := arrowx.ToArray(x)
	require.NoError(t, err)
	x.Release()
	leakcheck.Settle()
	assert.Zero(t, released, "the array holds the memory")
	back, err := arrowx.FromArray(arr)
	require.NoError(t, err)
	arr.Release()
	arr = nil
	leakcheck.Settle()
	assert.Zero(t, released, "the tensor made of the array holds the memory")
	back.Release()
	assert.Equal(t, base, leakcheck.Settle())
	assert.Equal(t, 1, released)
}

func TestMalformedArrays(t *testing.T) {
	short := amemory.NewBufferBytes(make([]byte, 8)) // room for 2 float32, claims 5
	d := array.NewData(arrow.PrimitiveTypes.Float32, 5, []*amemory.Buffer{nil, short}, nil, 0, 0)
	defer d.Release()
	_, err := arrowx.FromArrayData(d)
	require.ErrorIs(t, err, arrowx.ErrMalformed)

	child := array.NewData(arrow.PrimitiveTypes.Float32, 2, []*amemory.Buffer{nil, short}, nil, 0, 0)
	defer child.Release()
	l := array.NewData(arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), 2, []*amemory.Buffer{nil},
		[]arrow.ArrayData{child}, 0, 0)
	defer l.Release()
	_, err = arrowx.FromArrayData(l)
	require.ErrorIs(t, err, arrowx.ErrMalformed)

	_, err = arrowx.FromArray(nil)
	require.ErrorIs(t, err, core.ErrNil)

	s := array.NewStringBuilder(amemory.DefaultAllocator)
	s.Append("x")
	sa := s.NewArray()
	s.Release()
	defer sa.Release()
	_, err = arrowx.FromArray(sa)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
}

// TestMalformedOffsetsOverflow: offsets and lengths whose sum overflows an int64 (a producer the
// array constructors never checked) are refused with ErrMalformed, for bit-packed leaves too,
// whose byte count would otherwise come out negative and pass the buffer check.
func TestMalformedOffsetsOverflow(t *testing.T) {
	bits := amemory.NewBufferBytes([]byte{0xff})
	d := array.NewData(arrow.FixedWidthTypes.Boolean, 1, []*amemory.Buffer{nil, bits}, nil, 0, math.MaxInt64-2)
	defer d.Release()
	_, err := arrowx.FromArrayData(d)
	require.ErrorIs(t, err, arrowx.ErrMalformed)

	// a list at offset 1 over a child at offset MaxInt64: the child's first element overflows
	child := array.NewData(arrow.FixedWidthTypes.Boolean, 4, []*amemory.Buffer{nil, bits}, nil, 0, math.MaxInt64)
	defer child.Release()
	l := array.NewData(arrow.FixedSizeListOf(1, arrow.FixedWidthTypes.Boolean), 1, []*amemory.Buffer{nil},
		[]arrow.ArrayData{child}, 0, 1)
	defer l.Release()
	_, err = arrowx.FromArrayData(l)
	require.ErrorIs(t, err, arrowx.ErrMalformed)
}

// TestListPastItsChild: a FixedSizeList whose elements run past its child's length is refused,
// even when the child's values buffer happens to hold more elements than the child claims.
func TestListPastItsChild(t *testing.T) {
	vals := amemory.NewBufferBytes(make([]byte, 4*6)) // 6 float32, the child claims 5
	child := array.NewData(arrow.PrimitiveTypes.Float32, 5, []*amemory.Buffer{nil, vals}, nil, 0, 0)
	defer child.Release()
	// one list of 2 at offset 2: child elements 4 and 5, and the child has 0 .. 4
	l := array.NewData(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), 1, []*amemory.Buffer{nil},
		[]arrow.ArrayData{child}, 0, 2)
	defer l.Release()
	_, err := arrowx.FromArrayData(l)
	require.ErrorIs(t, err, arrowx.ErrMalformed)

	ok := array.NewData(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), 1, []*amemory.Buffer{nil},
		[]arrow.ArrayData{child}, 0, 1) // child elements 2 and 3
	defer ok.Release()
	x, err := arrowx.FromArrayData(ok)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, x.Shape())
	x.Release()
}

func TestArrowTensorBothWays(t *testing.T) {
	mem := checked(t)
	arr := float32Array(mem, 0, 1, 2, 3, 4, 5)
	defer arr.Release()
	for _, c := range []struct {
		name    string
		strides []int64 // bytes
		want    []float32
	}{
		{"row-major", []int64{12, 4}, []float32{0, 1, 2, 3, 4, 5}},
		{"column-major", []int64{4, 8}, []float32{0, 2, 4, 1, 3, 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := tensor.New(arr.Data(), []int64{2, 3}, c.strides, nil)
			defer at.Release()
			ten, err := arrowx.FromTensor(at, adapters.ZeroCopyOnly())
			require.NoError(t, err)
			defer ten.Release()
			assert.Same(t, &arr.Float32Values()[0], (*float32)(ten.Data()))
			got, err := memory.Contiguous(ten)
			require.NoError(t, err)
			vals, err := got.Float32s()
			require.NoError(t, err)
			assert.Equal(t, c.want, vals)

			back, err := arrowx.ToTensor(ten, adapters.ZeroCopyOnly())
			require.NoError(t, err)
			defer back.Release()
			assert.Equal(t, c.strides, back.Strides())
			assert.Same(t, &arr.Float32Values()[0], &back.(*tensor.Float32).Float32Values()[0])
		})
	}

	bad := tensor.New(arr.Data(), []int64{2, 3}, []int64{6, 2}, nil) // 2 bytes is no float32
	defer bad.Release()
	_, err := arrowx.FromTensor(bad)
	require.ErrorIs(t, err, arrowx.ErrMalformed)
	big := tensor.New(arr.Data(), []int64{3, 3}, []int64{12, 4}, nil) // 9 elements over 6
	defer big.Release()
	_, err = arrowx.FromTensor(big)
	require.ErrorIs(t, err, arrowx.ErrMalformed)
	// element 1 lies 2^63-2 bytes past the first: offset + extent overflows, and must not pass
	// the buffer check as a negative number
	bytes16 := array.NewData(arrow.PrimitiveTypes.Int8, 14, []*amemory.Buffer{nil, amemory.NewBufferBytes(make([]byte, 16))}, nil, 0, 2)
	defer bytes16.Release()
	far := tensor.New(bytes16, []int64{2}, []int64{math.MaxInt64 - 1}, nil)
	defer far.Release()
	_, err = arrowx.FromTensor(far)
	require.ErrorIs(t, err, arrowx.ErrMalformed)

	// a negative-stride view is copied; float16 has no arrow-go tensor
	x := core.MustFromSlice([]float64{1, 2, 3})
	r, err := x.Reverse(0)
	require.NoError(t, err)
	_, err = arrowx.ToTensor(r, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	rt, err := arrowx.ToTensor(r)
	require.NoError(t, err)
	defer rt.Release()
	assert.Equal(t, []float64{3, 2, 1}, rt.(*tensor.Float64).Float64Values())
	_, err = arrowx.ToTensor(core.MustNew(core.Float16, 2))
	require.ErrorIs(t, err, adapters.ErrUnsupported)
}

// FromTensor decides (to share, or under AlwaysCopy to copy) before it finds that the tensor's
// elements lie outside its buffer: the caller's ReportCopy flag is left as it was, whatever was
// in it.
func TestFromTensorFailedLeavesReport(t *testing.T) {
	mem := checked(t)
	arr := float32Array(mem, 0, 1, 2, 3, 4, 5)
	defer arr.Release()
	big := tensor.New(arr.Data(), []int64{3, 3}, []int64{12, 4}, nil) // 9 elements over 6
	defer big.Release()
	for _, policy := range []adapters.Option{nil, adapters.AlwaysCopy()} {
		for _, sentinel := range []bool{false, true} {
			copied := sentinel
			_, err := arrowx.FromTensor(big, policy, adapters.ReportCopy(&copied))
			require.ErrorIs(t, err, arrowx.ErrMalformed)
			assert.Equal(t, sentinel, copied, "AlwaysCopy: %v: ReportCopy was set by a conversion that failed", policy != nil)
		}
	}
}

func TestRecordBatchAsMatrix(t *testing.T) {
	mem := checked(t)
	x := core.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 3, 2) // C order: columns are strided
	rec, err := arrowx.ToRecord(x, []string{"a", "b"})
	require.NoError(t, err)
	defer rec.Release()
	assert.Equal(t, []float64{1, 3, 5}, rec.Column(0).(*array.Float64).Float64Values())

	// the copy ToRecord made is in Fortran order, so FromRecord views it
	v, err := arrowx.FromRecord(rec, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer v.Release()
	assert.Equal(t, []int64{1, 3}, v.Strides())
	assert.Same(t, &rec.Column(0).(*array.Float64).Float64Values()[0], (*float64)(v.Data()))
	c, err := memory.Contiguous(v)
	require.NoError(t, err)
	vals, err := c.Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, vals)

	// through IPC, the columns of one message body stay equally spaced when their size is a
	// multiple of the 64-byte padding: a view of the read buffer
	const rows = 16
	big := core.MustNew(core.Float32, rows, 3)
	f, err := big.Float32s()
	require.NoError(t, err)
	for i := range f {
		f[i] = float32(i)
	}
	rec2, err := arrowx.ToRecord(big, nil)
	require.NoError(t, err)
	defer rec2.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec2.Schema()), ipc.WithAllocator(mem))
	require.NoError(t, w.Write(rec2))
	require.NoError(t, w.Close())
	r, err := ipc.NewReader(&buf, ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer r.Release()
	require.True(t, r.Next())
	got, err := arrowx.FromRecord(r.RecordBatch())
	require.NoError(t, err)
	defer got.Release()
	assert.Equal(t, []int64{rows, 3}, got.Shape())
	gc, err := memory.Contiguous(got)
	require.NoError(t, err)
	gv, err := gc.Float32s()
	require.NoError(t, err)
	assert.Equal(t, f, gv)

	// columns that are not equally spaced (here: the same column twice) are copied once
	a := float32Array(mem, 1, 2)
	defer a.Release()
	sep := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Float32},
		{Name: "b", Type: arrow.PrimitiveTypes.Float32}}, nil), []arrow.Array{a, a}, 2)
	defer sep.Release()
	_, err = arrowx.FromRecord(sep, adapters.ZeroCopyOnly())
	require.ErrorIs(t, err, adapters.ErrCopyRequired)
	var copied bool
	st, err := arrowx.FromRecord(sep, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	defer st.Release()
	assert.True(t, copied)
	sv, err := st.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 1, 2, 2}, sv)

	// columns of different types are refused
	i32 := array.NewInt32Builder(mem)
	i32.AppendValues([]int32{1, 2}, nil)
	ia := i32.NewArray()
	i32.Release()
	defer ia.Release()
	mixed := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Float32},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32}}, nil), []arrow.Array{a, ia}, 2)
	defer mixed.Release()
	_, err = arrowx.FromRecord(mixed)
	require.ErrorIs(t, err, arrowx.ErrMismatch)
}

// TestRecordColumnsOfSeparateAllocations: columns built one by one are separate allocations,
// which Go's allocator often places at equal distances; a view across them would straddle
// allocations (invalid pointer arithmetic, a checkptr fatal error under -race), so they are
// copied. Columns of one buffer (ToRecord's, an IPC body's) are still viewed.
func TestRecordColumnsOfSeparateAllocations(t *testing.T) {
	mem := amemory.NewGoAllocator()
	for try := range 8 {
		var cols []arrow.Array
		var fields []arrow.Field
		for j := range 3 {
			b := array.NewFloat64Builder(mem)
			b.AppendValues([]float64{float64(10 * j), float64(10*j + 1), float64(10*j + 2), float64(10*j + 3)}, nil)
			cols = append(cols, b.NewArray())
			b.Release()
			fields = append(fields, arrow.Field{Name: strconv.Itoa(j), Type: arrow.PrimitiveTypes.Float64})
		}
		rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 4)
		for _, c := range cols {
			c.Release()
		}
		var copied bool
		x, err := arrowx.FromRecord(rec, adapters.ReportCopy(&copied))
		require.NoError(t, err)
		assert.True(t, copied, "try %d: columns of separate allocations were viewed, strides %v", try, x.Strides())
		c, err := memory.Contiguous(x)
		require.NoError(t, err)
		v, err := c.Float64s()
		require.NoError(t, err)
		assert.Equal(t, []float64{0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23}, v)
		x.Release()
		rec.Release()
	}

	// a column slice of a wider Fortran-order matrix: ToRecord's columns lie in one buffer
	wide := core.MustNew(core.Float32, 4, 5)
	f, err := wide.Float32s()
	require.NoError(t, err)
	for i := range f {
		f[i] = float32(i)
	}
	fort, err := wide.Permute(1, 0) // [5 4] in Fortran order
	require.NoError(t, err)
	part, err := fort.Slice(0, 1, 4, 1) // rows 1..3: column stride 5 > 3 rows
	require.NoError(t, err)
	rec, err := arrowx.ToRecord(part, nil, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer rec.Release()
	back, err := arrowx.FromRecord(rec, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer back.Release()
	assert.Equal(t, []int64{1, 5}, back.Strides())
	assert.Equal(t, part.Data(), back.Data())
}

func TestDTypes(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16,
		core.Uint32, core.Uint64, core.Float16, core.Float32, core.Float64, core.Bool} {
		at, err := arrowx.ToDType(dt)
		require.NoError(t, err, dt)
		back, err := arrowx.FromDType(at)
		require.NoError(t, err)
		assert.Equal(t, dt, back)
	}
	_, err := arrowx.ToDType(core.BFloat16)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	assert.Contains(t, err.Error(), "bfloat16")
	_, err = arrowx.ToDType(core.DLDataType{Code: core.CodeFloat, Bits: 7, Lanes: 1})
	require.ErrorIs(t, err, core.ErrDType)
	_, err = arrowx.FromDType(arrow.BinaryTypes.String)
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	assert.Contains(t, err.Error(), "utf8")
}

func roundTrip(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	var c1, c2 bool
	arr, err := arrowx.ToArray(t, append(opts, adapters.ReportCopy(&c1))...)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	back, err := arrowx.FromArray(arr, append(opts, adapters.ReportCopy(&c2))...)
	if err != nil {
		return nil, err
	}
	o.Report(c1 || c2)
	return back, nil
}

// TestConformance runs the kit over arrays. arrow-go cannot make a FixedSizeList of size 0
// (arrow.FixedSizeListOf panics), so an N-D tensor with an empty inner dimension, such as the
// kit's [3 0], has no array form: the kit runs on 1-D arrays here, and N-D FixedSizeLists are
// covered by the table tests above and by TestConformanceNested.
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name: "arrowx",
		DTypes: []core.DLDataType{core.Float32, core.Float64, core.Float16, core.Int8, core.Int16, core.Int32,
			core.Int64, core.Uint8, core.Uint16, core.Uint32, core.Uint64, core.Bool},
		MinNdim:   1,
		MaxNdim:   1,
		RoundTrip: roundTrip,
		Shareable: arrowx.Shareable,
	})
}

// TestConformanceNested checks N-D FixedSizeLists on the kit's own cases (every layout, dtype and
// rank 2 to 5), leaving out only the shapes with an empty inner dimension, which must fail with
// adapters.ErrUnsupported.
func TestConformanceNested(t *testing.T) {
	for _, c := range adaptertest.Cases([]core.DLDataType{core.Float32, core.Int16, core.Bool, core.Float16}, 2, 5) {
		t.Run(c.Name, func(t *testing.T) {
			in := c.Tensor
			want, err := memory.Contiguous(in)
			require.NoError(t, err)
			wb, err := want.ReadOnlyBytes()
			require.NoError(t, err)
			var copied bool
			back, err := roundTrip(in, adapters.ReportCopy(&copied))
			if in.Empty() && in.Dim(0) != 0 {
				require.ErrorIs(t, err, adapters.ErrUnsupported)
				return
			}
			require.NoError(t, err)
			defer back.Release()
			assert.Equal(t, in.Shape(), back.Shape())
			gb, err := memory.Contiguous(back)
			require.NoError(t, err)
			got, err := gb.ReadOnlyBytes()
			require.NoError(t, err)
			assert.Equal(t, wb, got)
			share, _ := arrowx.Shareable(in)
			assert.Equal(t, !share, copied)
			if share && !in.Empty() {
				assert.Equal(t, in.Data(), back.Data(), "shared memory")
			}
		})
	}
}

func tensorRoundTrip(t *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
	o := adapters.Apply(opts...)
	var c1, c2 bool
	at, err := arrowx.ToTensor(t, append(opts, adapters.ReportCopy(&c1))...)
	if err != nil {
		return nil, err
	}
	defer at.Release()
	back, err := arrowx.FromTensor(at, append(opts, adapters.ReportCopy(&c2))...)
	if err != nil {
		return nil, err
	}
	o.Report(c1 || c2)
	return back, nil
}

// TestConformanceTensor runs the kit over arrow-go's tensor package, every rank.
func TestConformanceTensor(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name: "arrowx-tensor",
		DTypes: []core.DLDataType{core.Float32, core.Float64, core.Int8, core.Int16, core.Int32,
			core.Int64, core.Uint8, core.Uint16, core.Uint32, core.Uint64},
		RoundTrip: tensorRoundTrip,
		Shareable: arrowx.ShareableAsTensor,
	})
}

func TestErrorsMatchSentinels(t *testing.T) {
	_, err := arrowx.ToArray(nil)
	assert.True(t, errors.Is(err, core.ErrNil))
	x := core.MustFromSlice([]float32{1})
	x.Release()
	_, err = arrowx.ToArray(x)
	assert.ErrorIs(t, err, core.ErrReleased)
}

// TestFillNeverGuesses: a fill value the dtype does not hold exactly needs adapters.AllowCast.
func TestFillNeverGuesses(t *testing.T) {
	mem := checked(t)
	withNull := func(dt arrow.DataType) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		b.AppendNull()
		require.NoError(t, b.AppendValueFromString("1"))
		return b.NewArray()
	}
	for _, tc := range []struct {
		dt    arrow.DataType
		fill  float64
		ok    bool
		allow string // the filled element under AllowCast
	}{
		{arrow.PrimitiveTypes.Int32, 1.5, false, "(1+0i)"},
		{arrow.PrimitiveTypes.Int32, -7, true, "(-7+0i)"},
		{arrow.PrimitiveTypes.Uint8, -1, false, "(0+0i)"},
		{arrow.PrimitiveTypes.Uint8, 255, true, "(255+0i)"},
		{arrow.PrimitiveTypes.Int64, 0x1p63, false, "(9.223372036854776e+18+0i)"},
		{arrow.PrimitiveTypes.Int64, -0x1p63, true, "(-9.223372036854776e+18+0i)"},
		{arrow.FixedWidthTypes.Boolean, 2, false, "(1+0i)"},
		{arrow.FixedWidthTypes.Boolean, 1, true, "(1+0i)"},
		{arrow.FixedWidthTypes.Float16, 0.1, false, "(0.0999755859375+0i)"},
		{arrow.PrimitiveTypes.Float32, math.NaN(), true, "(NaN+0i)"},
		{arrow.PrimitiveTypes.Float32, 1e300, false, "(+Inf+0i)"},
	} {
		name := fmt.Sprintf("%s/%v", tc.dt, tc.fill)
		arr := withNull(tc.dt)
		out, err := arrowx.FromArray(arr, arrowx.FillNulls(tc.fill))
		if tc.ok {
			require.NoError(t, err, name)
			out.Release()
		} else {
			require.ErrorIs(t, err, adapters.ErrCast, name)
			assert.ErrorContains(t, err, "adapters.AllowCast()", name)
			assert.True(t, strings.HasPrefix(err.Error(), "arrowx: fill value"), "%s: %v", name, err)
		}
		out, err = arrowx.FromArray(arr, arrowx.FillNulls(tc.fill), adapters.AllowCast())
		require.NoError(t, err, name)
		v, err := memory.At(out, 0)
		require.NoError(t, err)
		assert.Equal(t, tc.allow, fmt.Sprint(v), name)
		out.Release()
		arr.Release()
	}
}

// TestNilIsCoreErrNil: a nil argument is refused with core.ErrNil (and so core.ErrInvalid).
func TestNilIsCoreErrNil(t *testing.T) {
	_, err := arrowx.ToArray(nil)
	require.ErrorIs(t, err, core.ErrNil)
	require.ErrorIs(t, err, core.ErrInvalid)
}
