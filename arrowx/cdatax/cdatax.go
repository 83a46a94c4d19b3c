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
//	arrow.fixed_shape_tensor ⇄ tensor [N, shape...]  as above        as above
//	arrow.variable_shape_tensor ⇄ arrowx array        always          nothing (Tensor(i): as FromArray)
//
// An array whose ArrowSchema's metadata names Arrow's canonical extension type
// arrow.fixed_shape_tensor (ARROW:extension:name) is imported as that type: its
// ARROW:extension:metadata gives the shape of each element (and a permutation, which becomes
// strides), so ImportArray returns a tensor of shape [N, logical shape...]; ExportFixedShapeTensor
// sends one. The metadata is untrusted like every other field: a shape that does not fit the
// FixedSizeList, a negative dimension, a permutation that is not one, or metadata whose lengths
// run past 1 MiB or 1024 pairs are refused with arrowx.ErrMalformed, after the producer's release.
// Other extension types are read as their storage. Arrays of arrow.variable_shape_tensor (a
// Struct of a List of values and a FixedSizeList<int32> of shapes) travel as
// arrowx.VariableShapeTensorArray: ExportVariableShapeTensors and ImportVariableShapeTensors,
// whose Tensor(i) is element i over the producer's memory.
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
// before ImportArray returns an error, whatever the error. Only the top-level structs' releases
// are called, as the interface requires; their producer's releases free the children. A struct
// handed over already released (its release NULL) is refused with ErrReleased, and nothing more
// of it is read or called; the other one is still released. Imported tensors are read-only: the
// C Data Interface gives a consumer no right to write.
//
// # Untrusted input
//
// Every field of a foreign ArrowArray and ArrowSchema, and of their children, is checked before
// arrow-go reads any of it (see ImportArray for what is refused, and with which error). What no
// consumer can check is left to the producer: that each buffer holds as many bytes as the
// length, offset and type claim, and that pointers point where they say. A release callback that
// does not mark its struct released (release left non-NULL), which would make arrow-go abort the
// process, is guarded against: cdatax marks the structs released after the producer's release
// has run.
//
// ExportArray fills the caller's ArrowArray and ArrowSchema; the C consumer must call their
// release callbacks, as the interface requires. Until it does, the tensor's memory is held
// (even if the tensor is released in Go); after it, it is let go once nothing else holds it.
// Structs that still hold a live export (their release callback set) are refused with ErrLive
// rather than overwritten, which would leak what that export holds.
package cdatax

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// ErrReleased: ImportArray was handed an ArrowArray or ArrowSchema (or a child of one) whose
// release callback is NULL: released already, or moved, so that nothing in it may be read.
var ErrReleased = errors.New("cdatax: already released")

// ErrLive: ExportArray or ExportFixedShapeTensor was handed an ArrowArray or ArrowSchema that
// still holds a live export (its release callback is not NULL). Filling it would lose that
// export's release, and with it the memory the export holds, so the structs are left as they
// are: the consumer must release them first (or pass fresh, zeroed ones).
var ErrLive = errors.New("cdatax: destination holds a live export")

// ImportArray takes an array from a C producer through the Arrow C Data Interface and returns
// it as a tensor (see arrowx.FromArray), without copying its values. arr is moved, schema
// released; the producer's release runs exactly once, when the tensor is let go or before
// ImportArray returns an error (see the package documentation).
//
// Every field of both structs (and of their children) is untrusted: ImportArray checks them all
// before arrow-go reads any, and refuses with an error that names the struct, the field and its
// value: a released struct (NULL release) with ErrReleased, without calling or reading anything
// more of it; a format arrowx does not map, or a dictionary, with adapters.ErrUnsupported; a
// length, offset or null count out of range, a child count or buffer count that does not fit the
// format, a NULL where a pointer is needed, or arrow.fixed_shape_tensor metadata that does not
// describe the storage, with arrowx.ErrMalformed.
func ImportArray(arr *cdata.CArrowArray, schema *cdata.CArrowSchema, opts ...adapters.Option) (*core.Tensor, error) {
	ca, cs := (*cArray)(unsafe.Pointer(arr)), (*cSchema)(unsafe.Pointer(schema))
	release := func() { // the top-level structs only: their producer releases the children
		if ca != nil && ca.release != nil {
			releaseArray(arr)
		}
		if cs != nil && cs.release != nil {
			releaseSchema(schema)
		}
	}
	if arr == nil || schema == nil {
		release()
		return nil, errs.Errorf(core.ErrNil, "cdatax: ImportArray with a nil ArrowArray or ArrowSchema")
	}
	defer release() // the schema, always; the array, unless it was moved
	dt, err := checkForeign(ca, cs)
	if err != nil {
		return nil, err
	}
	typ, err := extensionOf(cs, dt)
	if err != nil {
		return nil, err
	}
	if !guardArray(arr) {
		return nil, fmt.Errorf("cdatax: out of C memory importing an ArrowArray of %s: %w", dt, core.ErrTooLarge)
	}
	a, err := cdata.ImportCArrayWithType(arr, dt) // moves arr unless it fails before
	if err != nil {
		return nil, fmt.Errorf("cdatax: importing an ArrowArray of %s: %v: %w", dt, err, arrowx.ErrMalformed)
	}
	defer a.Release() // the tensor holds what it uses
	d := a.Data()
	if typ != dt { // arrow.fixed_shape_tensor over the storage arrow-go imported
		d = array.NewData(typ, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
		defer d.Release()
	}
	t, err := arrowx.FromArrayData(d, opts...)
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
// release callbacks; t's memory is held until it has. Structs that still hold a live export
// (a release callback not NULL) are refused with ErrLive and left untouched.
func ExportArray(t *core.Tensor, out *cdata.CArrowArray, outSchema *cdata.CArrowSchema, opts ...adapters.Option) error {
	if out == nil || outSchema == nil {
		return errs.Errorf(core.ErrNil, "cdatax: ExportArray into a nil ArrowArray or ArrowSchema")
	}
	if err := checkUnused(out, outSchema); err != nil {
		return err
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

// ExportFixedShapeTensor is ExportArray for arrowx.ToFixedShapeTensor: it hands t to a C
// consumer as an array of Arrow's canonical arrow.fixed_shape_tensor, t.Shape()[0] tensors of
// shape t.Shape()[1:], so that the consumer (pyarrow's FixedShapeTensorArray, say) reads the
// shape from the schema's ARROW:extension:name and ARROW:extension:metadata. It shares t's
// memory as ToFixedShapeTensor does; t's memory is held until the consumer's releases have run.
// Structs that still hold a live export are refused with ErrLive, as ExportArray does.
func ExportFixedShapeTensor(t *core.Tensor, out *cdata.CArrowArray, outSchema *cdata.CArrowSchema, opts ...adapters.Option) error {
	if out == nil || outSchema == nil {
		return errs.Errorf(core.ErrNil, "cdatax: ExportFixedShapeTensor into a nil ArrowArray or ArrowSchema")
	}
	if err := checkUnused(out, outSchema); err != nil {
		return err
	}
	a, err := arrowx.ToFixedShapeTensor(t, opts...)
	if err != nil {
		return fmt.Errorf("cdatax: %w", err)
	}
	defer a.Release()
	pinBuffers(a.Data())
	cdata.ExportArrowArray(a, out, outSchema)
	return nil
}

// checkUnused refuses destination structs whose release callback is not NULL: they hold a live
// export that overwriting them would leak. Releasing it here instead was decided against: the
// release belongs to whoever consumes that export, and a struct of uninitialised C memory would
// have a garbage callback called.
func checkUnused(out *cdata.CArrowArray, outSchema *cdata.CArrowSchema) error {
	ca, cs := (*cArray)(unsafe.Pointer(out)), (*cSchema)(unsafe.Pointer(outSchema))
	switch {
	case ca.release != nil && cs.release != nil:
		return errs.Errorf(ErrLive, "cdatax: the destination ArrowArray and ArrowSchema have release callbacks set "+
			"(a live export): release them first, or export into zeroed structs")
	case ca.release != nil:
		return errs.Errorf(ErrLive, "cdatax: the destination ArrowArray has its release callback set "+
			"(a live export): release it first, or export into a zeroed struct")
	case cs.release != nil:
		return errs.Errorf(ErrLive, "cdatax: the destination ArrowSchema has its release callback set "+
			"(a live export): release it first, or export into a zeroed struct")
	}
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
