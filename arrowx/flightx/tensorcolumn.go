package flightx

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// The tensor column: a stream's one column is Arrow's canonical arrow.fixed_shape_tensor (see
// the package documentation), its rows the tensor's leading dimensions and each row a tensor of
// its trailing ones, so that a reader in any language finds the element type and shape in
// Arrow's own types.

// carrier is the Arrow type that carries the elements of dt in a tensor column, and the
// dimensions it adds after the tensor's own: the dtype's Arrow primitive when it has one (bool:
// Arrow's bit-packed boolean); a complex dtype as pairs of its float ([..., 2]); a dtype Arrow
// lacks (bool, bfloat16, float8) as the unsigned integer of its width, its bits unchanged (a
// bool as a byte of 0 or 1); lanes as one more dimension of that many. The schema's dlpack.dtype
// says which dtype the carrier holds.
func carrier(dt core.DLDataType) (arrow.DataType, []int64, error) {
	if dt.Size() == 0 {
		return nil, nil, errs.Errorf(ErrProtocol, "flightx: sub-byte dtype %s cannot travel element by element", dt)
	}
	base := core.DLDataType{Code: dt.Code, Bits: dt.Bits, Lanes: 1}
	var extra []int64
	if dt.Lanes > 1 {
		extra = []int64{int64(dt.Lanes)}
	}
	if at, err := arrowx.ToDType(base); err == nil && base != core.Bool {
		return at, extra, nil
	}
	if base.Code == core.CodeComplex {
		if at, err := arrowx.ToDType(core.DLDataType{Code: core.CodeFloat, Bits: base.Bits / 2, Lanes: 1}); err == nil {
			return at, append(extra, 2), nil
		}
	}
	switch base.Bits {
	case 8:
		return arrow.PrimitiveTypes.Uint8, extra, nil
	case 16:
		return arrow.PrimitiveTypes.Uint16, extra, nil
	case 32:
		return arrow.PrimitiveTypes.Uint32, extra, nil
	case 64:
		return arrow.PrimitiveTypes.Uint64, extra, nil
	}
	return nil, nil, errs.Errorf(ErrProtocol, "flightx: dtype %s has no Arrow carrier", dt)
}

// tensorColumn describes a tensor column: its type, and how many of the tensor's elements
// (dtype elements, not carrier elements) one row holds.
type tensorColumn struct {
	typ     *arrowx.FixedShapeTensorType
	rowElem int64 // dtype elements per row
}

// split is where the tensor column cuts shape into rows and row tensors: the first k ≥ 1 such
// that a row, shape[k:], has no dimension of 0 and at most chunkBytes bytes (k = ndim, rows of
// single elements, always does; a 0-d tensor is one row of a 0-d tensor).
func split(shape []int64, size int64, chunkBytes int) int {
	if len(shape) == 0 {
		return 0
	}
	for k := 1; k < len(shape); k++ {
		row, ok := size, true
		for _, d := range shape[k:] {
			hi, lo := bits.Mul64(uint64(row), uint64(d))
			if d == 0 || hi != 0 || lo > uint64(max(chunkBytes, 1)) {
				ok = false
				break
			}
			row = int64(lo)
		}
		if ok {
			return k
		}
	}
	return len(shape)
}

// columnOf makes the tensor column of info for batches of chunkBytes.
func columnOf(info Info, chunkBytes int) (tensorColumn, error) {
	at, extra, err := carrier(info.DType)
	if err != nil {
		return tensorColumn{}, err
	}
	k := split(info.Shape, int64(info.DType.Size()), chunkBytes)
	inner := append(slices.Clone(info.Shape[k:]), extra...)
	ft, err := arrowx.NewFixedShapeTensorType(at, inner, nil, nil)
	if err != nil {
		return tensorColumn{}, errs.Errorf(ErrProtocol, "flightx: %s %v as a tensor column: %v", info.DType, info.Shape, err)
	}
	row := int64(1)
	for _, d := range info.Shape[k:] {
		row *= d
	}
	return tensorColumn{typ: ft, rowElem: row}, nil
}

// columnFrom checks a tensor column's type (untrusted) against the dtype and shape of the
// schema's metadata: the carrier of the dtype, no permutation (or the identity), and a shape that is a row of
// the tensor's (its trailing dimensions, and the carrier's own).
func columnFrom(ft *arrowx.FixedShapeTensorType, info Info) (tensorColumn, error) {
	at, extra, err := carrier(info.DType)
	if err != nil {
		return tensorColumn{}, err
	}
	bad := func(why string) (tensorColumn, error) {
		return tensorColumn{}, errs.Errorf(ErrProtocol, "flightx: column %s carries %s %v: %s", ft, info.DType, info.Shape, why)
	}
	if !arrow.TypeEqual(ft.ValueType(), at) {
		return bad(fmt.Sprintf("its value type is not %s", at))
	}
	if !identityPermutation(ft.Permutation()) {
		return bad("tensor streams have no permutation")
	}
	inner := ft.Shape()
	if len(inner) < len(extra) || !slices.Equal(inner[len(inner)-len(extra):], extra) {
		return bad(fmt.Sprintf("its shape does not end in %v", extra))
	}
	inner = inner[:len(inner)-len(extra)]
	k := len(info.Shape) - len(inner)
	if k < 0 || (k == 0 && len(info.Shape) > 0) || !slices.Equal(info.Shape[k:], inner) {
		return bad("its shape is not the tensor's trailing dimensions")
	}
	row := int64(1)
	for _, d := range inner {
		row *= d
	}
	return tensorColumn{typ: ft, rowElem: row}, nil
}

// batchRows is how many rows of col one batch of at most chunkBytes carries (one at least).
func (c tensorColumn) batchRows(size int64, chunkBytes int) int64 {
	return max(int64(chunkBytes)/(c.rowElem*size), 1)
}

// rows is how many rows carry info.
func (c tensorColumn) rows(info Info) int64 {
	if c.rowElem == 0 {
		return 0
	}
	return info.Len() / c.rowElem
}
