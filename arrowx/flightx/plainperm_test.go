package flightx_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
)

// TestPlainIdentityPermutation: a plain stream whose fixed_shape_tensor column states the
// identity permutation, as pyarrow's FixedShapeTensorArray.from_numpy_ndarray writes every
// array, is read as one without; any other permutation is refused with ErrProtocol.
func TestPlainIdentityPermutation(t *testing.T) {
	noLeaks(t)
	vals := make([]float32, 5*3*4)
	for i := range vals {
		vals[i] = float32(i)
	}
	x := core.MustFromSlice(vals, 5, 3, 4)
	for _, c := range []struct {
		perm []int
		ok   bool
	}{{[]int{0, 1}, true}, {[]int{1, 0}, false}} {
		plain, err := arrowx.ToFixedShapeTensor(x)
		require.NoError(t, err)
		ft, err := arrowx.NewFixedShapeTensorType(arrow.PrimitiveTypes.Float32, []int64{3, 4}, nil, c.perm)
		require.NoError(t, err)
		storage := plain.(array.ExtensionArray).Storage()
		a := array.NewExtensionArrayWithStorage(ft, storage)
		plain.Release()
		s := arrow.NewSchema([]arrow.Field{{Name: "data", Type: ft}}, nil)
		rec := array.NewRecordBatch(s, []arrow.Array{a}, int64(a.Len()))
		a.Release()
		t.Cleanup(rec.Release)

		cl := dial(t, startPlain(t, rec))
		got, _, err := cl.Get(context.Background(), "x")
		if !c.ok {
			require.ErrorIs(t, err, flightx.ErrProtocol, "permutation %v", c.perm)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, []int64{5, 3, 4}, got.Shape())
		gv, err := core.ReadOnlyElements[float32](got)
		require.NoError(t, err)
		assert.Equal(t, vals, gv)
		got.Release()
	}
}
