// Package arrowtest holds the test helpers that arrowx and the packages under it (parquetx,
// cdatax, flightx) share: tensors of known elements, and a comparison of two tensors' elements
// whatever their layouts.
package arrowtest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/endian"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// Seq is a C-order tensor of dt whose elements are 0, 1, 2, ..., 99, 0, 1, ... in C order
// (bools alternate false, true), values every Arrow dtype holds exactly.
func Seq(t testing.TB, dt core.DLDataType, shape ...int64) *core.Tensor {
	t.Helper()
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	f := make([]float64, n)
	for i := range f {
		f[i] = float64(i % 100)
		if dt == core.Bool {
			f[i] = float64(i % 2)
		}
	}
	out, err := memory.Cast(core.MustFromSlice(f, shape...), dt)
	require.NoError(t, err)
	return out
}

// RequireSame fails the test unless got has want's dtype and shape (at once) and its elements
// (strides may differ).
func RequireSame(t testing.TB, want, got *core.Tensor, msg string) {
	t.Helper()
	require.Equal(t, want.DType(), got.DType(), msg)
	require.Equal(t, want.Shape(), got.Shape(), msg)
	a, err := memory.Contiguous(want)
	require.NoError(t, err)
	defer a.Release()
	b, err := memory.Contiguous(got)
	require.NoError(t, err)
	defer b.Release()
	ab, err := a.ReadOnlyBytes()
	require.NoError(t, err)
	bb, err := b.ReadOnlyBytes()
	require.NoError(t, err)
	assert.Equal(t, ab, bb, msg)
}

// Record is a record batch of the 2-D tensor x [rows, columns], column j holding x[:, j], in
// the byte order order: its schema says so and its buffers hold the values so (swapped by hand
// when order is not this machine's), as an Arrow writer on a machine of that byte order lays
// them out; the columns lie one after the other in one buffer, as in an IPC message body. Row nullRow (unless negative) is null in every column. The caller releases it.
func Record(t testing.TB, x *core.Tensor, order endian.Endianness, nullRow int64) arrow.RecordBatch {
	t.Helper()
	adt, err := arrowx.ToDType(x.DType())
	require.NoError(t, err)
	rows, cols := x.Dim(0), x.Dim(1)
	xt, err := x.Permute(1, 0)
	require.NoError(t, err)
	defer xt.Release()
	f, err := memory.Contiguous(xt) // [columns, rows] in C order: the columns one after the other
	require.NoError(t, err)
	defer f.Release()
	all, err := f.ReadOnlyBytes()
	require.NoError(t, err)
	size := int64(x.DType().Size())
	fields := make([]arrow.Field, cols)
	arrs := make([]arrow.Array, cols)
	// one buffer of the columns one after the other, as an IPC reader leaves them
	whole := append([]byte(nil), all...)
	if order != endian.NativeEndian {
		for k := int64(0); k < int64(len(whole)); k += size {
			slices.Reverse(whole[k : k+size])
		}
	}
	for j := range cols {
		b := whole[j*rows*size : (j+1)*rows*size]
		var valid *amemory.Buffer
		nulls := 0
		if nullRow >= 0 {
			bm := make([]byte, (rows+7)/8)
			for r := range rows {
				if r != nullRow {
					bitutil.SetBit(bm, int(r))
				}
			}
			valid, nulls = amemory.NewBufferBytes(bm), 1
		}
		d := array.NewData(adt, int(rows), []*amemory.Buffer{valid, amemory.NewBufferBytes(b)}, nil, nulls, 0)
		arrs[j] = array.MakeFromData(d)
		d.Release()
		fields[j] = arrow.Field{Name: fmt.Sprint("c", j), Type: adt, Nullable: true}
	}
	rec := array.NewRecordBatch(arrow.NewSchemaWithEndian(fields, nil, order), arrs, rows)
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// ShapeFirst is va with the fields of its storage struct in the other order, "shape" then
// "data" (Arrow's specification names the fields of an arrow.variable_shape_tensor, it does not
// order them), over the same memory and with the same metadata. The caller releases it.
func ShapeFirst(t testing.TB, va *arrowx.VariableShapeTensorArray) *arrowx.VariableShapeTensorArray {
	t.Helper()
	st := va.Storage().(*array.Struct)
	fields := st.DataType().(*arrow.StructType).Fields()
	swapped := arrow.StructOf(fields[1], fields[0])
	kids := st.Data().Children()
	sd := array.NewData(swapped, st.Len(), st.Data().Buffers(), []arrow.ArrayData{kids[1], kids[0]}, 0, 0)
	defer sd.Release()
	vt, err := (&arrowx.VariableShapeTensorType{}).Deserialize(swapped, va.ExtensionType().Serialize())
	require.NoError(t, err)
	storage := array.MakeFromData(sd)
	defer storage.Release()
	return array.NewExtensionArrayWithStorage(vt.(arrow.ExtensionType), storage).(*arrowx.VariableShapeTensorArray)
}
