package cdatax_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/arrowx/cdatax/internal/ctest"
	"github.com/dlpack-go/dlpack/core"
)

// TestVariableShapeRoundTrip: an arrow.variable_shape_tensor array goes out through arrow-go's C
// Data exporter into C structs and comes back through ImportVariableShapeTensors with its
// extension metadata, every element a view of the exported memory.
func TestVariableShapeRoundTrip(t *testing.T) {
	leakcheck.Check(t)
	a := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := core.MustFromSlice([]float32{7, 8, 9, 10}, 4, 1)
	c := core.MustFromSlice([]float32{}, 0, 5)
	arr, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{a, b, c}, []string{"H", "W"}, []int64{-1, -1})
	require.NoError(t, err)
	values := arr.Storage().Data().Children()[0].Children()[0].Buffers()[1].Bytes()

	ca, cs := ctest.Alloc()
	defer ctest.Free(ca, cs)
	require.NoError(t, cdatax.ExportVariableShapeTensors(arr, (*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs)))
	arr.Release() // the export holds the memory
	require.ErrorIs(t, cdatax.ExportVariableShapeTensors(arr, (*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs)),
		cdatax.ErrLive)

	back, err := cdatax.ImportVariableShapeTensors((*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs))
	require.NoError(t, err)
	assert.True(t, ctest.Released(ca), "the array was moved")
	assert.True(t, ctest.SchemaReleased(cs), "the schema was released")
	vt := back.ExtensionType().(*arrowx.VariableShapeTensorType)
	assert.Equal(t, []string{"H", "W"}, vt.DimNames())
	assert.Equal(t, 2, vt.Ndim())
	require.Equal(t, 3, back.Len())
	for i, want := range []*core.Tensor{a, b, c} {
		x, err := back.Tensor(i, adapters.ZeroCopyOnly())
		require.NoError(t, err)
		assert.Equal(t, want.Shape(), x.Shape())
		wv, _ := core.ReadOnlyElements[float32](want)
		xv, err := core.ReadOnlyElements[float32](x)
		require.NoError(t, err)
		assert.Equal(t, wv, xv)
		if i == 0 {
			assert.Equal(t, unsafe.Pointer(&values[0]), x.Data(), "element 0 is a view of the exported values")
		}
		x.Release()
	}
	back.Release()
}

// TestVariableShapeRefusals: what is not a variable_shape_tensor is refused, after the
// producer's release.
func TestVariableShapeRefusals(t *testing.T) {
	leakcheck.Check(t)
	arrays, schemas := ctest.ArrayReleases(), ctest.SchemaReleases()
	a, s, _ := ctest.Produce(0, false, 2, 3) // a FixedSizeList, not a Struct
	defer ctest.Free(a, s)
	_, err := cdatax.ImportVariableShapeTensors((*cdata.CArrowArray)(a), (*cdata.CArrowSchema)(s))
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	assert.Contains(t, err.Error(), `format "+w:3"`)
	assert.Equal(t, arrays+1, ctest.ArrayReleases())
	assert.Equal(t, schemas+1, ctest.SchemaReleases())

	_, err = cdatax.ImportVariableShapeTensors(nil, nil)
	require.ErrorIs(t, err, core.ErrNil)

	// a struct of the right storage without the extension name
	x := core.MustFromSlice([]float32{1, 2}, 2)
	arr, err := arrowx.NewVariableShapeTensorArray([]*core.Tensor{x}, nil, nil)
	require.NoError(t, err)
	ca, cs := ctest.Alloc()
	defer ctest.Free(ca, cs)
	var pin runtime.Pinner // C holds the Go buffers' addresses until the release
	defer pin.Unpin()
	pinAll(&pin, arr.Storage().Data())
	cdata.ExportArrowArray(arr.Storage(), (*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs))
	arr.Release()
	_, err = cdatax.ImportVariableShapeTensors((*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs))
	require.ErrorIs(t, err, adapters.ErrUnsupported)
	assert.Contains(t, err.Error(), "extension name")
	assert.True(t, ctest.Released(ca))
}

func pinAll(p *runtime.Pinner, d arrow.ArrayData) {
	for _, b := range d.Buffers() {
		if b != nil && b.Len() > 0 {
			p.Pin(&b.Bytes()[0])
		}
	}
	for _, c := range d.Children() {
		pinAll(p, c)
	}
}

// TestVariableShapeSlicedWithNulls: a sliced array whose struct has nulls goes out at offset 0
// with its validity bitmap starting at the slice, so the consumer sees the slice's nulls where
// they are and the valid elements' values, not the array's from its start.
func TestVariableShapeSlicedWithNulls(t *testing.T) {
	leakcheck.Check(t)
	var ts []*core.Tensor
	for i := range 5 {
		ts = append(ts, core.MustFromSlice([]float32{float32(10 * i), float32(10*i + 1)}, 1, 2))
	}
	whole, err := arrowx.NewVariableShapeTensorArray(ts, nil, nil)
	require.NoError(t, err)
	sd := whole.Storage().Data()
	valid := amemory.NewResizableBuffer(amemory.DefaultAllocator)
	valid.Resize(1)
	valid.Bytes()[0] = 0b10101 // elements 1 and 3 are null
	withNulls := array.NewData(sd.DataType(), sd.Len(), []*amemory.Buffer{valid}, sd.Children(), 2, 0)
	storage := array.MakeFromData(withNulls)
	ext := array.NewExtensionArrayWithStorage(whole.ExtensionType(), storage).(*arrowx.VariableShapeTensorArray)
	sliced := array.NewSlice(ext, 1, 4).(*arrowx.VariableShapeTensorArray) // null, 2, null
	storage.Release()
	withNulls.Release()
	valid.Release()
	ext.Release()
	whole.Release()

	ca, cs := ctest.Alloc()
	defer ctest.Free(ca, cs)
	require.NoError(t, cdatax.ExportVariableShapeTensors(sliced, (*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs)))
	sliced.Release()
	back, err := cdatax.ImportVariableShapeTensors((*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs))
	require.NoError(t, err)
	defer back.Release()
	require.Equal(t, 3, back.Len())
	assert.Equal(t, 0, back.Data().Offset(), "exported at offset 0")
	assert.Equal(t, []bool{true, false, true}, []bool{back.IsNull(0), back.IsNull(1), back.IsNull(2)})
	_, err = back.Tensor(0)
	require.ErrorIs(t, err, arrowx.ErrNulls)
	x, err := back.Tensor(1, adapters.ZeroCopyOnly())
	require.NoError(t, err)
	defer x.Release()
	v, err := core.ReadOnlyElements[float32](x)
	require.NoError(t, err)
	assert.Equal(t, []float32{20, 21}, v, "the slice's valid element is the array's element 2")
	assert.Equal(t, []int64{1, 2}, x.Shape())
}
