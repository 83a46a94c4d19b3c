package ortgo

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/x448/float16"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/dlpack-go/dlpack/onnxx/ortgo/internal/errs"
)

// ToValue makes an ONNX Runtime input of t. For a host tensor in C order of a supported dtype
// (see the package documentation) the value is over t's own memory, without copying; other
// layouts are copied once into C order, as opts allow (adapters.ZeroCopyOnly, AlwaysCopy,
// ReportCopy). The value is an *ort.Tensor[T] for float32, float64, the integer types and bool,
// an *ort.CustomDataTensor for float16 and bfloat16, and an *ort.Scalar[T] (a copy) for a 0-d
// tensor. Other dtypes fail with onnxx.ErrDType, device tensors with onnxx.ErrUnsupportedDevice.
//
// The value keeps t's memory alive until it is destroyed or unreachable, even if t is released.
// ORT does not write its inputs, so a read-only t is shared as well; do not write through the
// value's GetData then. Call Destroy on the value when done (an unreachable value is destroyed
// by the garbage collector). Init must have succeeded (else ErrNotInitialized).
func ToValue(t *core.Tensor, opts ...adapters.Option) (ort.Value, error) {
	o := adapters.Apply(opts...)
	v, err := toValue(t, o, true)
	if err != nil {
		return nil, err
	}
	o.Report(v.copied)
	return v.value, nil
}

// built is a value made over a tensor, with the tensor it reads (t itself or a copy) and the
// pin that makes ORT's hold on Go memory legal under the cgo rules.
type built struct {
	value  ort.Value
	src    *core.Tensor
	pin    *runtime.Pinner
	shape  []int64 // src's shape (a Session compares it on reuse)
	copied bool    // the value reads a copy of the tensor it was asked for (ReportCopy says so)
}

// release destroys the value and unpins its memory; the Session uses it for the values it makes
// and drops within one run.
func (b built) release() {
	if b.value != nil {
		b.value.Destroy()
	}
	if b.pin != nil {
		b.pin.Unpin()
	}
	runtime.KeepAlive(b.src)
}

// toValue builds the value. With public set, the value holds src's memory (core.Attach), unpins
// and destroys itself when unreachable; otherwise the caller calls release.
func toValue(t *core.Tensor, o adapters.Options, public bool) (built, error) {
	if t == nil {
		return built{}, errs.Errorf(core.ErrNil, "ortgo: nil tensor")
	}
	if err := initialized(); err != nil {
		return built{}, err
	}
	if t.Released() {
		return built{}, errs.Errorf(core.ErrReleased, "ortgo: the tensor was released")
	}
	if !t.HostAccessible() {
		return built{}, errs.Errorf(onnxx.ErrUnsupportedDevice, "ortgo: %s is on %s, ORT values are in host memory", t, t.Device())
	}
	ot, err := ToDType(t.DType())
	if err != nil {
		return built{}, err
	}
	if t.Ndim() == 0 {
		return scalarValue(t, o)
	}
	contiguous, why := t.IsContiguous(), ""
	if !contiguous {
		why = fmt.Sprintf("ortgo: ORT needs C-order elements, %s has strides %v", t, t.Strides())
	}
	cp, err := o.Choose(contiguous, why) // reported by ToValue, once the value is made
	if err != nil {
		return built{}, err
	}
	src := t
	if cp {
		if src, err = memory.Contiguous(t); err != nil {
			return built{}, fmt.Errorf("ortgo: copying %s: %w", t, err)
		}
	}
	b := built{src: src, copied: cp}
	if src.Len() > 0 {
		b.pin = new(runtime.Pinner)
		b.pin.Pin(src.Data()) // a no-op for memory Go did not allocate
	}
	shape := ort.Shape(src.Shape())
	b.shape = shape
	switch src.DType() {
	case core.Float32:
		err = native[float32](&b, shape, public)
	case core.Float64:
		err = native[float64](&b, shape, public)
	case core.Int8:
		err = native[int8](&b, shape, public)
	case core.Int16:
		err = native[int16](&b, shape, public)
	case core.Int32:
		err = native[int32](&b, shape, public)
	case core.Int64:
		err = native[int64](&b, shape, public)
	case core.Uint8:
		err = native[uint8](&b, shape, public)
	case core.Uint16:
		err = native[uint16](&b, shape, public)
	case core.Uint32:
		err = native[uint32](&b, shape, public)
	case core.Uint64:
		err = native[uint64](&b, shape, public)
	case core.Bool:
		err = native[bool](&b, shape, public)
	default: // float16, bfloat16: bytes with an ONNX type
		var data []byte
		if n := src.NumBytes(); n > 0 {
			data = unsafe.Slice((*byte)(src.Data()), n)
		} else {
			data = []byte{0} // onnxruntime_go wants a byte even for an empty tensor
		}
		var v *ort.CustomDataTensor
		if v, err = ort.NewCustomDataTensor(shape, data, ot); err == nil {
			b.value = v
			if public {
				err = own(v, &b)
			}
		}
	}
	if err != nil {
		if b.pin != nil {
			b.pin.Unpin()
		}
		return built{}, fmt.Errorf("ortgo: cannot make an ORT value of %s: %w", t, err)
	}
	return b, nil
}

// native makes an *ort.Tensor[T] over b.src's elements.
func native[T ort.TensorData](b *built, shape ort.Shape, public bool) error {
	var data []T
	if n := b.src.Len(); n > 0 {
		data = unsafe.Slice((*T)(b.src.Data()), n)
	}
	v, err := ort.NewTensor(shape, data)
	if err != nil {
		return err
	}
	b.value = v
	if public {
		return own(v, b)
	}
	return nil
}

// destroyer is a pointer to an ORT value type.
type destroyer[X any] interface {
	*X
	Destroy() error
}

// anchor stands for a public value in the core ownership accounting: it holds the source
// tensor's memory (core.Attach) for as long as the value's finalizer has not run.
type anchor struct{ src *core.Tensor }

// own ties a public value's lifetime to what it was made over: the value holds the source
// tensor's memory, and when it becomes unreachable it is destroyed (if nobody did), unpinned, and
// lets go of the memory. (A finalizer, not runtime.AddCleanup: destroying needs the value.)
func own[X any, P destroyer[X]](v P, b *built) error {
	a := &anchor{src: b.src}
	if err := core.Attach(a, b.src); err != nil {
		v.Destroy()
		return err
	}
	pin := b.pin
	made.Store(uintptr(unsafe.Pointer(v)), b.src) // by address: the key must not keep v alive
	// Destroy is idempotent in onnxruntime_go (it releases the OrtValue and forgets it).
	runtime.SetFinalizer((*X)(v), func(x *X) {
		made.Delete(uintptr(unsafe.Pointer(x)))
		P(x).Destroy()
		if pin != nil {
			pin.Unpin()
		}
		runtime.KeepAlive(a)
	})
	return nil
}

// addr is the address a value's dynamic pointer holds (0 if it holds none).
func addr(v ort.Value) uintptr {
	if r := reflect.ValueOf(v); r.Kind() == reflect.Pointer {
		return r.Pointer()
	}
	return 0
}

// made maps each reachable value ToValue made to the tensor it is over, so that FromValue of it
// gives a view of that tensor: the same memory, flags and owner, with no chain of holders between.
var made sync.Map

// scalarValue copies a 0-d tensor into an *ort.Scalar[T]: onnxruntime_go makes 0-d values only
// over their own one-element copy.
func scalarValue(t *core.Tensor, o adapters.Options) (built, error) {
	if _, err := o.Choose(false, "ortgo: onnxruntime_go copies 0-d values"); err != nil {
		return built{}, err
	}
	var v ort.Value
	var err error
	switch t.DType() {
	case core.Float32:
		v, err = scalar[float32](t)
	case core.Float64:
		v, err = scalar[float64](t)
	case core.Int8:
		v, err = scalar[int8](t)
	case core.Int16:
		v, err = scalar[int16](t)
	case core.Int32:
		v, err = scalar[int32](t)
	case core.Int64:
		v, err = scalar[int64](t)
	case core.Uint8:
		v, err = scalar[uint8](t)
	case core.Uint16:
		v, err = scalar[uint16](t)
	case core.Uint32:
		v, err = scalar[uint32](t)
	case core.Uint64:
		v, err = scalar[uint64](t)
	case core.Bool:
		v, err = scalar[bool](t)
	default:
		return built{}, errs.Errorf(onnxx.ErrDType, "ortgo: a 0-d %s tensor cannot become an ORT value (onnxruntime_go makes 0-d values of Go number types only)", t.DType())
	}
	if err != nil {
		return built{}, fmt.Errorf("ortgo: cannot make an ORT value of %s: %w", t, err)
	}
	return built{value: v, src: t, copied: true}, nil
}

// scalarElem is an element type both core and onnxruntime_go know.
type scalarElem interface {
	core.Element
	ort.TensorData
}

func scalar[T scalarElem](t *core.Tensor) (ort.Value, error) {
	x, err := core.At[T](t)
	if err != nil {
		return nil, err
	}
	v, err := ort.NewScalar(x)
	if err != nil {
		return nil, err
	}
	runtime.SetFinalizer(v, func(v *ort.Scalar[T]) { v.Destroy() })
	return v, nil
}

// FromValue makes a core tensor of an ONNX Runtime tensor value, without copying: the tensor is
// over the value's memory, with its dtype and shape. It takes ownership of v: the tensor owns the
// value (core.Wrap with v's Destroy as the release function), so v is destroyed exactly once, by
// the last Release of a tensor over it (views included) or when the last one is collected; do not
// Destroy or use v yourself afterwards. For a value ToValue made, the result is instead a view of
// the tensor the value is over (same memory, flags and owner), and v stays destroyed by Destroy
// or the collector, as ToValue says. On error v is left as it was, still the caller's.
//
// It accepts *ort.Tensor[T] for float32, float64, the integer types and bool, and
// *ort.CustomDataTensor of those types, float16 and bfloat16; an *ort.Scalar[T] gives a 0-d
// tensor (a copy; v is destroyed). Strings, sequences and maps fail with onnxx.ErrValue.
func FromValue(v ort.Value) (*core.Tensor, error) {
	if src, ok := made.Load(addr(v)); ok {
		if t, err := src.(*core.Tensor).View(); err == nil {
			return t, nil // v is destroyed when it becomes unreachable (see own)
		}
	}
	switch x := v.(type) {
	case nil:
		return nil, errs.Errorf(onnxx.ErrValue, "ortgo: nil ORT value")
	case *ort.Tensor[float32]:
		return fromTensor(x)
	case *ort.Tensor[float64]:
		return fromTensor(x)
	case *ort.Tensor[int8]:
		return fromTensor(x)
	case *ort.Tensor[int16]:
		return fromTensor(x)
	case *ort.Tensor[int32]:
		return fromTensor(x)
	case *ort.Tensor[int64]:
		return fromTensor(x)
	case *ort.Tensor[uint8]:
		return fromTensor(x)
	case *ort.Tensor[uint16]:
		return fromTensor(x)
	case *ort.Tensor[uint32]:
		return fromTensor(x)
	case *ort.Tensor[uint64]:
		return fromTensor(x)
	case *ort.Tensor[bool]:
		return fromTensor(x)
	case *ort.CustomDataTensor:
		return fromCustom(x)
	case *ort.Scalar[float32]:
		return fromScalar(x)
	case *ort.Scalar[float64]:
		return fromScalar(x)
	case *ort.Scalar[int8]:
		return fromScalar(x)
	case *ort.Scalar[int16]:
		return fromScalar(x)
	case *ort.Scalar[int32]:
		return fromScalar(x)
	case *ort.Scalar[int64]:
		return fromScalar(x)
	case *ort.Scalar[uint8]:
		return fromScalar(x)
	case *ort.Scalar[uint16]:
		return fromScalar(x)
	case *ort.Scalar[uint32]:
		return fromScalar(x)
	case *ort.Scalar[uint64]:
		return fromScalar(x)
	case *ort.Scalar[bool]:
		return fromScalar(x)
	}
	return nil, errs.Errorf(onnxx.ErrValue, "ortgo: %T (ONNX type %s) is not a numeric tensor", v, v.GetONNXType())
}

func fromTensor[T scalarElem](x *ort.Tensor[T]) (*core.Tensor, error) {
	shape := x.GetShape()
	if len(shape) == 0 {
		return nil, errs.Errorf(onnxx.ErrValue, "ortgo: %T has no shape (destroyed?)", x)
	}
	data := x.GetData()
	n := shape.FlattenedSize()
	if n != int64(len(data)) {
		return nil, errs.Errorf(onnxx.ErrValue, "ortgo: value of shape %v has %d elements", shape, len(data))
	}
	d := core.Desc{Device: core.CPUDevice, DType: core.DTypeOf[T](), Shape: shape}
	if n > 0 {
		d.Data = unsafe.Pointer(unsafe.SliceData(data))
	}
	return wrapValue(d, x)
}

func fromCustom(x *ort.CustomDataTensor) (*core.Tensor, error) {
	shape := x.GetShape()
	if len(shape) == 0 {
		return nil, errs.Errorf(onnxx.ErrValue, "ortgo: %T has no shape (destroyed?)", x)
	}
	dt, err := FromDType(ort.TensorElementDataType(x.DataType()))
	if err != nil {
		return nil, err
	}
	if err := shape.Validate(); err != nil {
		return nil, errs.Errorf(onnxx.ErrValue, "ortgo: value of bad shape %v: %v", shape, err)
	}
	n := shape.FlattenedSize()
	data := x.GetData()
	if int64(len(data))/int64(dt.Size()) < n {
		return nil, errs.Errorf(onnxx.ErrValue, "ortgo: %s of shape %v needs %d bytes, the value has %d", dt, shape,
			n*int64(dt.Size()), len(data))
	}
	d := core.Desc{Device: core.CPUDevice, DType: dt, Shape: shape}
	if n > 0 {
		d.Data = unsafe.Pointer(unsafe.SliceData(data))
	}
	return wrapValue(d, x)
}

// wrapValue makes the tensor that owns v: core.Wrap with v.Destroy as the release function, so
// that v is destroyed exactly once, when the last tensor over it (views included) is released or
// collected. The release function holds v, and v holds the Go slice its elements are in, so the
// memory stays valid for as long as some tensor over it is unreleased.
func wrapValue(d core.Desc, v ort.Value) (*core.Tensor, error) {
	var owned atomic.Bool // core.Wrap runs release when it fails, but then v stays the caller's
	t, err := core.Wrap(d, func() {
		if owned.Load() {
			v.Destroy()
		}
	})
	if err != nil {
		return nil, fmt.Errorf("ortgo: %w", err)
	}
	owned.Store(true)
	return t, nil
}

func fromScalar[T scalarElem](x *ort.Scalar[T]) (*core.Tensor, error) {
	t := core.Scalar(x.GetData())
	x.Destroy()
	return t.WithFlags(core.FlagIsCopied)
}

// Compile-time check that the Go types this package hands ORT have the sizes ORT expects.
var (
	_ [2]byte = [unsafe.Sizeof(float16.Float16(0))]byte{}
	_ [2]byte = [unsafe.Sizeof(core.BF16(0))]byte{}
	_ [1]byte = [unsafe.Sizeof(false)]byte{}
)
