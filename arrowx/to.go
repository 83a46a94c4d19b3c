package arrowx

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/memory"
)

// Shareable reports whether ToArray can give an array over t's own memory, and if not, why:
// t must be on the host, at least 1-D, C-contiguous, of a dtype Arrow has as a byte-wide
// primitive (not bool, which Arrow packs into bits), with every list size fitting Arrow's int32.
// Read-only tensors are shareable: Arrow arrays are immutable, and FromArray of such an array
// gives a read-only tensor back.
func Shareable(t *core.Tensor) (ok bool, why string) {
	if why := hostWhy(t); why != "" {
		return false, why
	}
	switch {
	case t.Ndim() == 0:
		return false, "an Arrow array has at least one dimension"
	case t.DType() == core.Bool:
		return false, "Arrow booleans are bit-packed"
	case !t.IsContiguous():
		return false, fmt.Sprintf("strides %v are not C order", t.Strides())
	}
	if _, err := ToDType(t.DType()); err != nil {
		return false, err.Error()
	}
	for _, d := range t.Shape()[1:] {
		if d > math.MaxInt32 || d == 0 {
			return false, fmt.Sprintf("dimension %d is no FixedSizeList size (1 to 2^31-1)", d)
		}
	}
	return true, ""
}

// ToArray makes an Arrow array of a tensor: a 1-D tensor as a primitive array, an N-D tensor
// as nested FixedSizeLists (the outer length is the first dimension, each list size the next
// one) over a primitive leaf, the inverse of FromArray.
//
// A Shareable tensor is not copied: the leaf's values buffer is t's memory, and the array holds
// that memory (core.Attach on the buffer) for as long as the buffer is reachable, so releasing t
// early is safe. Other layouts are copied once into C order, booleans into a bit-packed array;
// the adapters options choose as everywhere. 0-d tensors, device memory and dtypes without an
// Arrow type (see ToDType) are refused. The caller releases the array (arr.Release()) as any
// Arrow array; the tensor's memory is let go when the array is unreachable.
func ToArray(t *core.Tensor, opts ...adapters.Option) (arrow.Array, error) {
	if t == nil {
		return nil, errs.Errorf(core.ErrNil, "arrowx: ToArray of a nil tensor")
	}
	h, err := core.Hold(t)
	if err != nil {
		return nil, wrapf(err, "ToArray")
	}
	defer h.Release()
	switch {
	case !t.HostAccessible():
		return nil, fmt.Errorf("arrowx: ToArray of %s: %w", t, core.ErrNotHost)
	case t.Ndim() == 0:
		return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: ToArray of a 0-d tensor (reshape it to [1])")
	}
	leafType, err := ToDType(t.DType())
	if err != nil {
		return nil, err
	}
	shape := t.Shape()
	for _, d := range shape[1:] {
		if d > math.MaxInt32 || d == 0 {
			return nil, errs.Errorf(adapters.ErrUnsupported, "arrowx: shape %v: a FixedSizeList's size must be 1 to 2^31-1 "+
				"(arrow-go makes none of size 0)", shape)
		}
	}
	o := adapters.Apply(opts...)
	cp, err := o.Choose(Shareable(t))
	if err != nil {
		return nil, wrapf(err, "ToArray of %s", t)
	}
	src := t
	if cp && t.DType() != core.Bool {
		if src, err = memory.Clone(t, memory.COrder); err != nil {
			return nil, wrapf(err, "ToArray")
		}
	}
	var values *amemory.Buffer
	if t.DType() == core.Bool {
		values, err = packBools(t)
	} else {
		values, err = bufferOver(src)
	}
	if err != nil {
		return nil, err
	}
	data := array.NewData(leafType, int(t.Len()), []*amemory.Buffer{nil, values}, nil, 0, 0)
	for i := len(shape) - 1; i >= 1; i-- {
		n := int64(1)
		for _, d := range shape[:i] {
			n *= d
		}
		outer := array.NewData(arrow.FixedSizeListOf(int32(shape[i]), data.DataType()), int(n),
			[]*amemory.Buffer{nil}, []arrow.ArrayData{data}, 0, 0)
		data.Release()
		data = outer
	}
	arr := array.MakeFromData(data)
	data.Release()
	o.Report(cp)
	return arr, nil
}

// bufferOver makes an Arrow buffer over the memory of a C-contiguous host tensor, holding it.
func bufferOver(t *core.Tensor) (*amemory.Buffer, error) {
	n := t.NumBytes()
	if n == 0 || t.Data() == nil {
		return amemory.NewBufferBytes(nil), nil
	}
	buf := amemory.NewBufferBytes(unsafe.Slice((*byte)(t.Data()), n))
	if err := core.Attach(buf, t); err != nil {
		return nil, wrapf(err, "")
	}
	return buf, nil
}

// packBools copies a bool tensor, in any layout, into a bit-packed buffer.
func packBools(t *core.Tensor) (*amemory.Buffer, error) {
	c, err := memory.Contiguous(t)
	if err != nil {
		return nil, wrapf(err, "")
	}
	bs, err := c.Bools()
	if err != nil {
		return nil, wrapf(err, "")
	}
	packed := make([]byte, bitutil.BytesForBits(int64(len(bs))))
	for i, b := range bs {
		if b {
			bitutil.SetBit(packed, i)
		}
	}
	return amemory.NewBufferBytes(packed), nil
}

// hostWhy says why t cannot lend its memory to Arrow at all (nil, released, not on the host),
// or "" when it can be considered; the predicates (Shareable, ShareableAsTensor, ShareableAsRecord)
// start from it.
func hostWhy(t *core.Tensor) string {
	switch {
	case t == nil:
		return "nil tensor"
	case t.Released():
		return "tensor was released"
	case !t.HostAccessible():
		return fmt.Sprintf("memory on %v is not host-accessible", t.Device())
	}
	return ""
}
