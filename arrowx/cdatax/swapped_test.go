package cdatax_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/arrowx/cdatax/internal/ctest"
	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/core"
)

// TestVariableShapeShapeFirst: a producer whose variable_shape_tensor struct has "shape" before
// "data" (the specification names the fields; it does not order them) is imported, each element
// a view of its memory.
func TestVariableShapeShapeFirst(t *testing.T) {
	leakcheck.Check(t)
	want := []*core.Tensor{core.MustFromSlice([]int32{1, 2, 3, 4, 5, 6}, 3, 2), core.MustFromSlice([]int32{7}, 1, 1)}
	va, err := arrowx.NewVariableShapeTensorArray(want, []string{"r", "c"}, nil)
	require.NoError(t, err)
	defer va.Release()
	arr := arrowtest.ShapeFirst(t, va)
	defer arr.Release()

	ca, cs := ctest.Alloc()
	defer ctest.Free(ca, cs)
	require.NoError(t, cdatax.ExportVariableShapeTensors(arr, (*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs)))
	back, err := cdatax.ImportVariableShapeTensors((*cdata.CArrowArray)(ca), (*cdata.CArrowSchema)(cs))
	require.NoError(t, err)
	defer back.Release()
	bt := back.ExtensionType().(*arrowx.VariableShapeTensorType)
	assert.Equal(t, "shape", bt.StorageType().(*arrow.StructType).Field(0).Name)
	assert.Equal(t, []string{"r", "c"}, bt.DimNames())
	for i, w := range want {
		x, err := back.Tensor(i, adapters.ZeroCopyOnly())
		require.NoError(t, err)
		assert.Equal(t, w.Shape(), x.Shape())
		wv, _ := core.ReadOnlyElements[int32](w)
		xv, err := core.ReadOnlyElements[int32](x)
		require.NoError(t, err)
		assert.Equal(t, wv, xv)
		x.Release()
	}
}
