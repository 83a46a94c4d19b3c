package flightx

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx"
)

// tensorSchema is a stream's schema with a tensor column of value type and shape row, and the
// dtype and shape in the metadata.
func tensorSchema(t testing.TB, value arrow.DataType, row []int64, perm []int, dtype, shape string) (*arrow.Schema, error) {
	ft, err := arrowx.NewFixedShapeTensorType(value, row, nil, perm)
	if err != nil {
		return nil, err
	}
	md := arrow.NewMetadata([]string{KeyDType, KeyShape, KeyOrder}, []string{dtype, shape, "C"})
	return arrow.NewSchema([]arrow.Field{{Name: column, Type: ft}}, &md), nil
}

// TestTensorColumnRefused: a tensor column that does not carry the tensor the metadata
// describes is refused with ErrProtocol, naming why.
func TestTensorColumnRefused(t *testing.T) {
	f32, u16 := arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Uint16
	for _, c := range []struct {
		value        arrow.DataType
		row          []int64
		perm         []int
		dtype, shape string
		says         string // "" when accepted
	}{
		{f32, []int64{3, 4}, nil, "float32", "2,3,4", ""},
		{f32, []int64{4}, nil, "float32", "2,3,4", ""},
		{f32, []int64{}, nil, "float32", "2,3,4", ""},
		{f32, []int64{}, nil, "float32", "", ""},
		{u16, []int64{4}, nil, "bfloat16", "3,4", ""},
		{f32, []int64{4, 2}, nil, "complex64", "3,4", ""},
		{arrow.PrimitiveTypes.Float64, []int64{3, 4}, nil, "float32", "2,3,4", "its value type is not float32"},
		{f32, []int64{4}, nil, "complex64", "3,4", "its shape does not end in [2]"},
		{f32, []int64{3, 4}, []int{1, 0}, "float32", "2,3,4", "no permutation"},
		{f32, []int64{4, 3}, nil, "float32", "2,3,4", "not the tensor's trailing dimensions"},
		{f32, []int64{2, 3, 4}, nil, "float32", "2,3,4", "not the tensor's trailing dimensions"},
		{f32, []int64{5}, nil, "float32", "2,3,4", "not the tensor's trailing dimensions"},
		{f32, []int64{1}, nil, "float32", "", "not the tensor's trailing dimensions"},
	} {
		s, err := tensorSchema(t, c.value, c.row, c.perm, c.dtype, c.shape)
		require.NoError(t, err)
		_, err = DecodeSchema(s)
		if c.says == "" {
			assert.NoError(t, err, "%s %v for %s [%s]", c.value, c.row, c.dtype, c.shape)
			continue
		}
		assert.ErrorIs(t, err, ErrProtocol)
		assert.ErrorContains(t, err, c.says)
	}
}

// FuzzDecodeTensorColumn: a tensor column's value type and row shape against untrusted dtype
// and shape metadata: refused, or accepted with a row that divides the tensor and re-encoded
// into a schema that decodes to the same.
func FuzzDecodeTensorColumn(f *testing.F) {
	f.Add("float32", "2,3,4", uint8(0), []byte{3, 4})
	f.Add("complex64", "5", uint8(0), []byte{2})
	f.Add("bfloat16", "0,7", uint8(1), []byte{7})
	f.Add("bool", "", uint8(2), []byte{})
	f.Fuzz(func(t *testing.T, dtype, shape string, typ uint8, row []byte) {
		if len(row) > 8 {
			return
		}
		types := []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint8,
			arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int8}
		r := make([]int64, len(row))
		for i, d := range row {
			r[i] = int64(d)
		}
		s, err := tensorSchema(t, types[int(typ)%len(types)], r, nil, dtype, shape)
		if err != nil {
			return
		}
		info, col, err := decodeSchema(s)
		if err != nil {
			return
		}
		require.NotNil(t, col)
		if col.rowElem > 0 && info.Len()%col.rowElem != 0 {
			t.Fatalf("rows of %d elements for %v", col.rowElem, info.Shape)
		}
		again, err := schemaOf(info)
		require.NoError(t, err)
		back, err := DecodeSchema(again)
		require.NoError(t, err)
		require.Equal(t, info.DType, back.DType)
		require.True(t, slices.Equal(info.Shape, back.Shape))
	})
}
