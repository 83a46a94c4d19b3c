package adapters

import (
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// The copy and cast kernels live in package memory since 0.6.0; these names forward to them for
// one release.

// Order is memory.Order.
//
// Deprecated: use memory.Order.
type Order = memory.Order

const (
	// COrder is memory.COrder.
	//
	// Deprecated: use memory.COrder.
	COrder = memory.COrder
	// FortranOrder is memory.FortranOrder.
	//
	// Deprecated: use memory.FortranOrder.
	FortranOrder = memory.FortranOrder
)

// Clone is memory.Clone.
//
// Deprecated: use memory.Clone.
func Clone(t *core.Tensor, order Order) (*core.Tensor, error) { return memory.Clone(t, order) }

// Contiguous is memory.Contiguous.
//
// Deprecated: use memory.Contiguous.
func Contiguous(t *core.Tensor) (*core.Tensor, error) { return memory.Contiguous(t) }

// Cast is memory.Cast.
//
// Deprecated: use memory.Cast.
func Cast(t *core.Tensor, dtype core.DLDataType) (*core.Tensor, error) { return memory.Cast(t, dtype) }

// CastOrder is memory.CastOrder.
//
// Deprecated: use memory.CastOrder.
func CastOrder(t *core.Tensor, dtype core.DLDataType, order Order) (*core.Tensor, error) {
	return memory.CastOrder(t, dtype, order)
}

// Copy is memory.Copy.
//
// Deprecated: use memory.Copy.
func Copy(dst, src *core.Tensor) error { return memory.Copy(dst, src) }

// At is memory.At.
//
// Deprecated: use memory.At.
func At(t *core.Tensor, idx ...int64) (complex128, error) { return memory.At(t, idx...) }

// SetAt is memory.SetAt.
//
// Deprecated: use memory.SetAt.
func SetAt(t *core.Tensor, v complex128, idx ...int64) error { return memory.SetAt(t, v, idx...) }
