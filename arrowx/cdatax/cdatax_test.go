package cdatax_test

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/arrowx/cdatax/internal/ctest"
	"github.com/dlpack-go/dlpack/core"
)

func produce(offset int64, nulls bool, shape ...int64) (*cdata.CArrowArray, *cdata.CArrowSchema, unsafe.Pointer, func()) {
	a, s, first := ctest.Produce(offset, nulls, shape...)
	return (*cdata.CArrowArray)(a), (*cdata.CArrowSchema)(s), first, func() { ctest.Free(a, s) }
}

func TestImportFromC(t *testing.T) {
	for _, c := range []struct {
		name   string
		offset int64
		shape  []int64
	}{
		{"1-D", 0, []int64{6}},
		{"1-D at an offset", 3, []int64{6}},
		{"2-D", 0, []int64{2, 3}},
		{"3-D at an offset", 5, []int64{2, 3, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := leakcheck.Settle()
			arrays, schemas := ctest.ArrayReleases(), ctest.SchemaReleases()
			arr, sc, first, free := produce(c.offset, false, c.shape...)
			defer free()
			ten, err := cdatax.ImportArray(arr, sc, adapters.ZeroCopyOnly())
			require.NoError(t, err)
			assert.True(t, ctest.Released(unsafe.Pointer(arr)), "the array was moved")
			assert.Equal(t, schemas+1, ctest.SchemaReleases(), "the schema was released")
			assert.Equal(t, c.shape, ten.Shape())
			assert.Equal(t, first, ten.Data(), "the tensor is over the C producer's memory")
			assert.True(t, ten.ReadOnly())
			vals, err := core.ReadOnlyElements[float32](ten)
			require.NoError(t, err)
			for k, v := range vals {
				require.Equal(t, float32(k)*0.5, v)
			}
			v, err := ten.View()
			require.NoError(t, err)
			ten.Release()
			leakcheck.Settle()
			assert.Equal(t, arrays, ctest.ArrayReleases(), "a view still holds the C memory")
			v.Release()
			assert.Equal(t, base, leakcheck.Settle())
			assert.Equal(t, arrays+1, ctest.ArrayReleases(), "the producer's release ran exactly once")
		})
	}
}

func TestImportNulls(t *testing.T) {
	base := leakcheck.Settle()
	arrays := ctest.ArrayReleases()
	arr, sc, _, free := produce(1, true, 2, 3)
	_, err := cdatax.ImportArray(arr, sc)
	free()
	require.ErrorIs(t, err, arrowx.ErrNulls)
	assert.Equal(t, arrays+1, ctest.ArrayReleases(), "a refused import releases the producer's array")

	arr, sc, _, free = produce(1, true, 2, 3)
	defer free()
	ten, err := cdatax.ImportArray(arr, sc, arrowx.FillNulls(-1))
	require.NoError(t, err)
	assert.Equal(t, arrays+2, ctest.ArrayReleases(), "the filled copy holds nothing of C")
	vals, err := core.ReadOnlyElements[float32](ten)
	require.NoError(t, err)
	for k, v := range vals {
		if k%3 == 2 {
			assert.Equal(t, float32(-1), v)
		} else {
			assert.Equal(t, float32(k)*0.5, v)
		}
	}
	ten.Release()
	assert.Equal(t, base, leakcheck.Settle())
}

func TestExportToC(t *testing.T) {
	base := leakcheck.Settle()
	x := core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	a, s := ctest.Alloc()
	defer ctest.Free(a, s)
	require.NoError(t, cdatax.ExportArray(x, (*cdata.CArrowArray)(a), (*cdata.CArrowSchema)(s), adapters.ZeroCopyOnly()))
	x.Release() // the export holds the memory
	sum, n := ctest.Sum(a, s)
	assert.Equal(t, 21.0, sum)
	assert.Equal(t, int64(6), n)
	assert.True(t, ctest.Released(a))

	// a foreign tensor's release runs once the C consumer released the export
	mem := make([]float32, 4)
	for i := range mem {
		mem[i] = float32(i + 1)
	}
	released := 0
	f, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{4}}, func() { released++ })
	require.NoError(t, err)
	a2, s2 := ctest.Alloc()
	defer ctest.Free(a2, s2)
	require.NoError(t, cdatax.ExportArray(f, (*cdata.CArrowArray)(a2), (*cdata.CArrowSchema)(s2)))
	f.Release()
	leakcheck.Settle()
	assert.Zero(t, released, "C still holds the array")
	sum, _ = ctest.Sum(a2, s2)
	assert.Equal(t, 10.0, sum)
	assert.Equal(t, base, leakcheck.Settle())
	assert.Equal(t, 1, released)

	_, err = cdatax.ImportArray(nil, nil)
	require.ErrorIs(t, err, core.ErrNil)
}

// An export into structs that still hold a live export is refused, and leaves them as they were:
// overwriting them would lose the first export's release and leak the memory it pins.
func TestExportIntoLiveStructs(t *testing.T) {
	leakcheck.Check(t)
	mem := make([]float32, 4)
	var released atomic.Int32 // the release runs on a cleanup goroutine
	f, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&mem[0]), Device: core.CPUDevice, DType: core.Float32,
		Shape: []int64{4}}, func() { released.Add(1) })
	require.NoError(t, err)
	for i := range mem {
		mem[i] = float32(i + 1)
	}
	a, s := ctest.Alloc()
	defer ctest.Free(a, s)
	arr, sc := (*cdata.CArrowArray)(a), (*cdata.CArrowSchema)(s)
	require.NoError(t, cdatax.ExportArray(f, arr, sc))
	f.Release()

	y := core.MustFromSlice([]float32{7, 8}, 2)
	defer y.Release()
	err = cdatax.ExportArray(y, arr, sc)
	require.ErrorIs(t, err, cdatax.ErrLive)
	assert.Contains(t, err.Error(), "ArrowArray and ArrowSchema")
	require.ErrorIs(t, cdatax.ExportFixedShapeTensor(core.MustFromSlice([]float32{1, 2}, 1, 2), arr, sc), cdatax.ErrLive)

	// the first export is intact: the consumer reads it, releases it, and its memory goes
	sum, n := ctest.Sum(a, s)
	assert.Equal(t, 10.0, sum)
	assert.Equal(t, int64(4), n)
	require.True(t, leakcheck.Until(func() bool { return released.Load() == 1 }), "the first export was let go")

	// released structs take a new export
	require.NoError(t, cdatax.ExportArray(y, arr, sc))
	sum, _ = ctest.Sum(a, s)
	assert.Equal(t, 15.0, sum)
}
