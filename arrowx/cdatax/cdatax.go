// Package cdatax moves tensors across the Arrow C Data Interface (ArrowArray and ArrowSchema,
// through arrow-go's cdata package), so that a C, C++ or Python (pyarrow) producer of Arrow data
// reaches core tensors without a copy, and a Go tensor reaches an Arrow consumer in C the same
// way. It needs cgo; package arrowx, which does the Arrow ⇄ tensor mapping, does not.
//
// # What is zero-copy
//
//	direction                                        shares memory   copies
//	C ArrowArray (primitive, FixedSizeList) → tensor  always          booleans; nulls with arrowx.FillNulls
//	tensor (C order, Arrow primitive dtype) → C       always          other layouts (once), bool (bit-packed)
//
// The mapping is arrowx.FromArray's and arrowx.ToArray's: a primitive array is a 1-D tensor, a
// FixedSizeList (nested for more dimensions) an N-D one; offsets are honoured; arrays with nulls
// are refused (arrowx.ErrNulls) unless arrowx.FillNulls is given.
//
// # Ownership
//
// ImportArray moves the producer's ArrowArray (the struct is marked released; the caller frees
// only the struct's own memory) and always releases the ArrowSchema. The producer's release
// callback runs exactly once: when the last holder of the tensor (and of its views) lets go, or
// before ImportArray returns an error. Imported tensors are read-only: the C Data Interface
// gives a consumer no right to write.
//
// ExportArray fills the caller's ArrowArray and ArrowSchema; the C consumer must call their
// release callbacks, as the interface requires. Until it does, the tensor's memory is held
// (even if the tensor is released in Go); after it, it is let go once nothing else holds it.
package cdatax

import (
	"fmt"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
)

// ImportArray takes an array from a C producer through the Arrow C Data Interface and returns
// it as a tensor (see arrowx.FromArray), without copying its values. arr is moved, schema
// released; the producer's release runs exactly once, when the tensor is let go (see the
// package documentation).
func ImportArray(arr *cdata.CArrowArray, schema *cdata.CArrowSchema, opts ...adapters.Option) (*core.Tensor, error) {
	if arr == nil || schema == nil {
		if arr != nil {
			cdata.ReleaseCArrowArray(arr)
		}
		if schema != nil {
			cdata.ReleaseCArrowSchema(schema)
		}
		return nil, fmt.Errorf("%w: cdatax: ImportArray with a nil ArrowArray or ArrowSchema", arrowx.ErrNil)
	}
	_, a, err := cdata.ImportCArray(arr, schema) // moves arr, releases schema, even on error
	if err != nil {
		return nil, fmt.Errorf("%w: cdatax: importing an ArrowArray: %v", arrowx.ErrMalformed, err)
	}
	defer a.Release() // the tensor holds what it uses
	t, err := arrowx.FromArrayData(a.Data(), opts...)
	if err != nil {
		return nil, fmt.Errorf("cdatax: %w", err)
	}
	if t.ReadOnly() {
		return t, nil
	}
	defer t.Release()
	return t.AsReadOnly()
}

// ExportArray hands t to a C consumer through the Arrow C Data Interface: it fills out and
// outSchema with the array arrowx.ToArray makes of t (sharing t's memory when arrowx.Shareable
// says so, else over one copy, as the adapters options decide). The consumer must call both
// release callbacks; t's memory is held until it has.
func ExportArray(t *core.Tensor, out *cdata.CArrowArray, outSchema *cdata.CArrowSchema, opts ...adapters.Option) error {
	if out == nil || outSchema == nil {
		return fmt.Errorf("%w: cdatax: ExportArray into a nil ArrowArray or ArrowSchema", arrowx.ErrNil)
	}
	a, err := arrowx.ToArray(t, opts...)
	if err != nil {
		return fmt.Errorf("cdatax: %w", err)
	}
	defer a.Release() // the export holds its own reference
	pinBuffers(a.Data())
	cdata.ExportArrowArray(a, out, outSchema)
	return nil
}

// pinBuffers pins the Go memory of every buffer of d (and of its children) for as long as the
// buffer is reachable, which the export keeps it until the consumer's release: C holds the
// addresses, so cgo's rules want them pinned (GOEXPERIMENT=cgocheck2 checks it). Pinning C
// memory does nothing.
func pinBuffers(d arrow.ArrayData) {
	for _, b := range d.Buffers() {
		if b == nil || b.Len() == 0 {
			continue
		}
		p := new(runtime.Pinner)
		p.Pin(&b.Bytes()[0])
		runtime.AddCleanup(b, func(p *runtime.Pinner) { p.Unpin() }, p)
	}
	for _, c := range d.Children() {
		pinBuffers(c)
	}
}
