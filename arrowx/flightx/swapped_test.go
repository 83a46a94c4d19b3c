package flightx_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/core"
)

// TestPlainVariableShapeFieldsSwapped: a plain Arrow stream of an arrow.variable_shape_tensor
// column whose storage struct has "shape" before "data" (as the specification allows: the
// fields are named) is read by a flightx client from a plain server, and stored by a flightx
// server from a plain DoPut, with every tensor right; reading such a stream used to panic the
// process (the type assumed data came first).
func TestPlainVariableShapeFieldsSwapped(t *testing.T) {
	noLeaks(t)
	want := []*core.Tensor{core.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3), core.MustFromSlice([]float32{7, 8}, 1, 2)}
	defer releaseAll(want)
	va, err := arrowx.NewVariableShapeTensorArray(want, nil, nil)
	require.NoError(t, err)
	defer va.Release()
	col := arrowtest.ShapeFirst(t, va)
	defer col.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "t", Type: col.DataType(), Nullable: true}}, nil),
		[]arrow.Array{col}, int64(col.Len()))
	defer rec.Release()

	ctx := context.Background()
	got, _, err := dial(t, startPlain(t, rec)).GetTensors(ctx, "x")
	require.NoError(t, err)
	sameList(t, want, got, "from a plain server")
	releaseAll(got)

	srv, addr := serve(t)
	require.NoError(t, plainPut(t, addr, "swapped", []arrow.RecordBatch{rec}))
	stored, _, err := srv.GetTensors("swapped")
	require.NoError(t, err)
	sameList(t, want, stored, "stored from a plain DoPut")
	releaseAll(stored)
	got, _, err = dial(t, addr).GetTensors(ctx, "swapped")
	require.NoError(t, err)
	sameList(t, want, got, "served back")
	releaseAll(got)
	assert.Zero(t, srv.Panics())
}
